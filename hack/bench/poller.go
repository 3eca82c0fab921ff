package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/cli-utils/pkg/kstatus/polling"
	"sigs.k8s.io/cli-utils/pkg/kstatus/polling/aggregator"
	"sigs.k8s.io/cli-utils/pkg/kstatus/polling/collector"
	"sigs.k8s.io/cli-utils/pkg/kstatus/polling/event"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/cli-utils/pkg/object"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/org/app-status-action/internal/flux"
)

// poller is the kstatus peer, run as `bench poller`: the polling approach of the flux CLI and
// of Flux's own health checks. Per cluster (concurrently, as one program would), it polls the
// Kustomization every interval until it is Ready at the revision, then polls its inventory
// with kstatus's StatusPoller at the same interval until every object is Current (or one is
// Failed), and prints "verdict <cluster> <status>".
func poller(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench poller", flag.ContinueOnError)
	var clusters stringList
	fs.Var(&clusters, "cluster", "name=kubeconfig; repeat")
	name := fs.String("kustomization", "", "Kustomization in flux-system")
	revision := fs.String("revision", "", "revision it must have applied")
	interval := fs.Duration("interval", 2*time.Second, "poll interval")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long to wait")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, c := range clusters {
		cluster, kubeconfig, ok := strings.Cut(c, "=")
		if !ok {
			return fmt.Errorf("--cluster %q: want name=kubeconfig", c)
		}
		wg.Go(func() {
			verdict, err := pollCluster(ctx, kubeconfig, *name, *revision, *interval)
			if err != nil {
				verdict = "error: " + strings.ReplaceAll(err.Error(), "\n", " ")
			}
			mu.Lock()
			fmt.Printf("verdict %s %s\n", cluster, verdict)
			mu.Unlock()
		})
	}
	wg.Wait()
	return nil
}

var kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}

func pollCluster(ctx context.Context, kubeconfig, name, revision string, interval time.Duration) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", err
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return "", err
	}
	ks := &unstructured.Unstructured{}
	ks.SetGroupVersionKind(kustomizationGVK)
	key := types.NamespacedName{Namespace: "flux-system", Name: name}
	err = wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, key, ks); err != nil {
			return false, nil
		}
		applied, _, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision")
		observed, _, _ := unstructured.NestedInt64(ks.Object, "status", "observedGeneration")
		return applied == revision && observed == ks.GetGeneration() && readyTrue(ks), nil
	})
	if err != nil {
		return "", fmt.Errorf("the Kustomization %s is not Ready at %s: %w", name, revision, err)
	}
	refs, err := flux.Inventory(ks)
	if err != nil {
		return "", err
	}
	ids := make(object.ObjMetadataSet, 0, len(refs))
	for _, r := range refs {
		ids = append(ids, object.ObjMetadata{Namespace: r.Namespace, Name: r.Name, GroupKind: schema.GroupKind{Group: r.Group, Kind: r.Kind}})
	}
	sp := polling.NewStatusPoller(cl, cl.RESTMapper(), polling.Options{})
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	coll := collector.NewResourceStatusCollector(ids)
	verdict := ""
	done := coll.ListenWithObserver(sp.Poll(pctx, ids, polling.PollOptions{PollInterval: interval}),
		collector.ObserverFunc(func(c *collector.ResourceStatusCollector, e event.Event) {
			if e.Type == event.ErrorEvent {
				verdict = "error: " + e.Error.Error()
				stop()
				return
			}
			rss := make([]*event.ResourceStatus, 0, len(c.ResourceStatuses))
			for _, rs := range c.ResourceStatuses {
				if rs.Status == status.FailedStatus {
					verdict = "Failed: " + rs.Identifier.String()
					stop()
					return
				}
				rss = append(rss, rs)
			}
			if aggregator.AggregateStatus(rss, status.CurrentStatus) == status.CurrentStatus {
				verdict = "Current"
				stop()
			}
		}))
	for res := range done {
		if res.Err != nil && verdict == "" {
			verdict = "error: " + res.Err.Error()
		}
	}
	if verdict == "" {
		return "", errors.New("timed out")
	}
	return verdict, nil
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
