package verify

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/helmstorage"
	"github.com/org/app-status-action/internal/result"
)

// storageRetry is how long a Helm storage secret that could not be read waits before it is
// read again; a secret read once is never read again (a release version does not change).
const storageRetry = 2 * time.Second

// storedRelease is what the Helm storage secret of one release version lists, or why it
// could not be read. It never holds the secret's content.
type storedRelease struct {
	objects []flux.ObjectRef
	verdict verdictReason // set when the objects could not be read
	retryAt time.Time     // when to read again; zero when reading again cannot help
}

// hasInventory reports whether the HelmRelease's status holds an inventory: helm-controller
// records one from version 1.5 on.
func hasInventory(obj *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "inventory")
	return found
}

// releaseObjects lists what a HelmRelease without an inventory deployed, from the Helm
// storage secret of its latest release (status.history[0]) in status.storageNamespace. The
// secret is read once per release version (and digest). ok is false when the objects cannot
// be listed; the assessment then says why.
func (s *clusterState) releaseObjects(e *assessment, id string, obj *unstructured.Unstructured, now time.Time) (refs []flux.ObjectRef, ok bool) {
	storageNS, _, _ := unstructured.NestedString(obj.Object, "status", "storageNamespace")
	history, _, _ := flux.NestedSlice(obj.Object, "status", "history")
	if storageNS == "" || len(history) == 0 {
		return nil, true // nothing released yet: nothing to list
	}
	latest, _ := history[0].(map[string]any)
	release, _, _ := unstructured.NestedString(latest, "name")
	version, _, _ := unstructured.NestedInt64(latest, "version")
	if release == "" || version <= 0 {
		return nil, true
	}
	name := helmstorage.SecretName(release, version)
	// A release reinstalled after an uninstall starts again at version 1: the release's own
	// digest tells the two apart.
	digest, _, _ := unstructured.NestedString(latest, "digest")
	key := storageNS + "/" + name + "@" + digest
	stored, cached := s.releases[key]
	if !cached || (!stored.retryAt.IsZero() && !now.Before(stored.retryAt)) {
		// Read off the assessment (fetcher), under the cluster's context.
		fetchKey := "release " + key
		v, done, _ := s.fetches.get(fetchKey, func(ctx context.Context) (any, error) {
			return s.readRelease(ctx, id, storageNS, name, now), nil
		})
		if !done {
			e.wait(verdictReason{verdict: result.VerdictInProgress, reason: "Reading",
				message: fmt.Sprintf("%s: reading the Helm storage secret %s/%s, which lists what it deployed", id, storageNS, name)})
			return nil, false
		}
		s.fetches.forget(fetchKey)
		stored = v.(storedRelease)
		if s.releases == nil {
			s.releases = map[string]storedRelease{}
		}
		s.releases[key] = stored
	}
	if stored.verdict.verdict == "" {
		return stored.objects, true
	}
	if stored.verdict.verdict == result.VerdictInProgress {
		e.wait(stored.verdict)
		e.recheckAt(stored.retryAt)
	} else {
		e.fail(stored.verdict)
	}
	return nil, false
}

// readRelease reads one Helm storage secret and decodes the objects of its release.
func (s *clusterState) readRelease(ctx context.Context, id, namespace, name string, now time.Time) storedRelease {
	what := fmt.Sprintf("the Helm storage secret %s/%s", namespace, name)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	secret, err := s.core.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return storedRelease{verdict: verdictReason{verdict: result.VerdictForbidden, reason: string(result.VerdictForbidden), message: fmt.Sprintf(
			"%s has no .status.inventory (helm-controller older than 1.5), and the credentials may not read %s (403) that lists what it deployed: "+
				"grant get on secrets in namespace %s to the kubeconfig's user, or upgrade helm-controller to 1.5 or later", id, what, namespace)}}
	case apierrors.IsNotFound(err):
		return storedRelease{retryAt: now.Add(storageRetry), verdict: verdictReason{verdict: result.VerdictInProgress, reason: "NotFound",
			message: fmt.Sprintf("%s: waiting for %s, which lists what it deployed (it has no .status.inventory)", id, what)}}
	case err != nil:
		if v, msg, ok := connectionVerdict(err, what); ok && v == result.VerdictUnauthorized {
			return storedRelease{verdict: verdictReason{verdict: v, reason: string(v), message: msg}}
		}
		return storedRelease{retryAt: now.Add(storageRetry), verdict: verdictReason{verdict: result.VerdictInProgress, reason: "ReadFailed",
			message: fmt.Sprintf("%s: reading %s: %s", id, what, apiMessage(err))}}
	}
	refs, err := helmstorage.Objects(secret.Data[helmstorage.DataKey])
	if err != nil {
		return storedRelease{verdict: verdictReason{verdict: result.VerdictInProgress, reason: "InvalidInventory",
			message: fmt.Sprintf("%s: %s: %v", id, what, err)}}
	}
	return storedRelease{objects: refs}
}

// installWorkloads are the kinds whose objects a Helm install is judged by while Helm waits.
var installWorkloads = []struct {
	gvr  schema.GroupVersionResource
	kind string
}{
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment"},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "StatefulSet"},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, "DaemonSet"},
}

// Helm's annotations on every object of a release.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
)

// firstInstalling is when the run first saw helm-controller installing chart for the
// HelmRelease id.
func (s *clusterState) firstInstalling(id, chart string, now time.Time) time.Time {
	if s.installSeen == nil {
		s.installSeen = map[string]time.Time{}
	}
	key := id + "|" + chart
	if t, ok := s.installSeen[key]; ok {
		return t
	}
	s.installSeen[key] = now
	return now
}

// installObjects lists the workloads of a release Helm is installing (flux.Gate.Installing),
// in the release's namespace, by Helm's annotations: helm-controller records neither the
// release nor its inventory until Helm's wait is over, but Helm creates them as it goes, and
// those are the new chart's. Only workloads created since the run first saw the install
// (since) count: one left by an earlier attempt (helm.sh/resource-policy: keep, an
// uninstall remediation) or being deleted is not this install's, and waits for Helm; so does
// one created before the run started. ok is false while a list is on its way.
func (s *clusterState) installObjects(e *assessment, g *flux.Gate, since time.Time) (refs []flux.ObjectRef, ok bool) {
	ok = true
	for _, k := range installWorkloads {
		w := s.watches.get(watchKey{gvr: k.gvr, namespace: g.ReleaseNamespace})
		ready, forbidden := s.optionalWatchReady(e, w, k.gvr.Resource+namespaceSuffix(g.ReleaseNamespace))
		if forbidden != "" {
			// Least privilege for an app without that kind: Helm's record says the rest
			// once its wait is over.
			continue
		}
		if !ready {
			ok = false
			continue
		}
		for _, o := range w.list() {
			acc, err := meta.Accessor(o)
			if err != nil {
				continue
			}
			a := acc.GetAnnotations()
			created := acc.GetCreationTimestamp().Time
			if acc.GetDeletionTimestamp() != nil || created.Before(since.Truncate(time.Second).Add(-time.Second)) {
				continue
			}
			if a[helmReleaseNameAnnotation] == g.ReleaseName && a[helmReleaseNamespaceAnnotation] == g.ReleaseNamespace {
				refs = append(refs, flux.ObjectRef{Group: k.gvr.Group, Version: k.gvr.Version, Kind: k.kind, Namespace: acc.GetNamespace(), Name: acc.GetName()})
			}
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].ID() < refs[j].ID() })
	return refs, ok
}
