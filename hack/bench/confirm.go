package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// confirm is `bench confirm`: what the two reads a confirmation can make cost on a real API
// server, one quorum list of a namespace's metadata and a quorum read of each object alone,
// on a cluster that writes nothing and on one where another resource changes every 20 ms, as
// every busy cluster's does (leases, events, status). From Kubernetes 1.31 a quorum list is
// answered from the watch cache once it has caught up with etcd's current revision, which the
// API server asks etcd for at most every 100 ms; a read of one object is answered by etcd.
func confirm(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench confirm", flag.ContinueOnError)
	runs := fs.Int("runs", 40, "reads of each kind (medians and 90th percentiles of these)")
	objects := fs.Int("objects", 5, "ConfigMaps in the namespace, each read alone at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 1 || *objects < 1 {
		return fmt.Errorf("--runs and --objects must be at least 1")
	}
	logf("== starting one cluster (etcd and kube-apiserver)")
	bed, err := testbed.Start(ctx, testbed.Options{Clusters: 1, ControlPlaneOnly: true, Prefix: "confirm", Log: logf})
	if err != nil {
		return err
	}
	defer bed.Close()
	c := bed.Clusters[0]
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 1000, 1000
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	const ns = "confirm"
	if err := c.EnsureNamespace(ctx, ns); err != nil {
		return err
	}
	for i := range *objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	configMaps := md.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	list := func(ctx context.Context) error {
		_, err := configMaps.List(ctx, metav1.ListOptions{})
		return err
	}
	alone := func(ctx context.Context) error {
		g, gctx := errgroup.WithContext(ctx)
		for i := range *objects {
			g.Go(func() error {
				_, err := configMaps.Get(gctx, fmt.Sprintf("cm-%d", i), metav1.GetOptions{})
				return err
			})
		}
		return g.Wait()
	}
	measure := func(read func(context.Context) error) (p50, p90 time.Duration, err error) {
		var took []time.Duration
		for range *runs {
			time.Sleep(150 * time.Millisecond) // (apart: each read meets the server as a verdict's would)
			start := time.Now()
			if err := read(ctx); err != nil {
				return 0, 0, err
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[len(took)/2], took[len(took)*9/10], nil
	}
	rows := []string{}
	row := func(cluster string) error {
		lp50, lp90, err := measure(list)
		if err != nil {
			return err
		}
		ap50, ap90, err := measure(alone)
		if err != nil {
			return err
		}
		rows = append(rows, fmt.Sprintf("| %s | %s / %s | %s / %s | %.1f× |", cluster, ms(lp50), ms(lp90), ms(ap50), ms(ap90), float64(lp50)/float64(ap50)))
		return nil
	}
	logf("== %d reads of each kind on a cluster that writes nothing", *runs)
	if err := row("writes nothing"); err != nil {
		return err
	}
	var stop atomic.Bool
	writes := make(chan error, 1)
	go func() {
		defer close(writes)
		for i := 0; !stop.Load(); i++ {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("write-%d", i)}}
			if _, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
				writes <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	logf("== %d reads of each kind while a Secret is created every 20 ms", *runs)
	err = row("a Secret created every 20 ms")
	var stopLists atomic.Bool
	lists := make(chan error, 1)
	if err == nil {
		// Another client's quorum lists of the kind (a controller reading without a cache,
		// kubectl get, a health check): each makes the server ask etcd for its revision, and
		// the next request of the kind within 100 ms waits for the next ask.
		others := md.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(metav1.NamespaceDefault)
		go func() {
			defer close(lists)
			for !stopLists.Load() {
				if _, err := others.List(ctx, metav1.ListOptions{}); err != nil {
					lists <- err
					return
				}
				time.Sleep(30 * time.Millisecond)
			}
		}()
		time.Sleep(time.Second)
		logf("== %d reads of each kind while another client also lists ConfigMaps every 30 ms", *runs)
		err = row("a Secret created every 20 ms, ConfigMaps listed by another client every 30 ms")
		stopLists.Store(true)
		if lerr := <-lists; lerr != nil && err == nil {
			err = fmt.Errorf("the other client's lists: %w", lerr)
		}
	}
	stop.Store(true)
	if werr := <-writes; werr != nil {
		return fmt.Errorf("the writes: %w", werr)
	}
	if err != nil {
		return err
	}
	fmt.Printf("| cluster | one quorum list of %d ConfigMaps' metadata, p50 / p90 | %d quorum reads of one ConfigMap at once, p50 / p90 | list / reads alone (p50) |\n|---|---|---|---|\n", *objects, *objects)
	for _, r := range rows {
		fmt.Println(r)
	}
	return nil
}
