package assess

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/helmstorage"
	"github.com/org/app-status-action/internal/result"
)

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
func (a *assessor) releaseObjects(e *Assessment, id string, obj *unstructured.Unstructured, applied bool, now time.Time) (refs []flux.ObjectRef, ok bool) {
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
	stored, cached := a.view.Release(key)
	if !cached || (!stored.RetryAt.IsZero() && !now.Before(stored.RetryAt)) {
		// Read off the assessment, by the fetching side.
		e.need(ReleaseNeed{Key: key, Owner: id, Namespace: storageNS, Name: name})
		if !cached {
			e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Reading",
				Message: fmt.Sprintf("%s: reading the Helm storage secret %s/%s, which lists what it deployed", id, storageNS, name), Progress: ProgressStep})
			return nil, false
		}
	}
	if stored.Undecodable {
		undecodableRelease(e, id, storageNS+"/"+name, applied)
		return nil, false
	}
	if stored.Finding.Verdict == "" {
		return stored.Objects, true
	}
	if stored.Finding.Verdict == result.VerdictInProgress {
		e.wait(stored.Finding)
		e.retryReadAt(stored.RetryAt, now)
	} else {
		e.fail(stored.Finding)
	}
	return nil, false
}

// undecodableRelease reports a HelmRelease without an inventory whose latest release's
// storage secret (secret, namespace/name) holds nothing that decodes as a Helm release: what
// it deployed cannot be listed, and never will be, since Helm writes a release version once
// (a new version or digest is read afresh). Once the HelmRelease has applied the expected
// revision (applied) it is Unverified at once; before, the release is the previous revision's
// and the next one may be readable: it waits. The words quote nothing of the secret, whose
// release may hold rendered Secrets.
func undecodableRelease(e *Assessment, id, secret string, applied bool) {
	f := Finding{Verdict: result.VerdictUnverified, Code: result.CodeHelmReleaseUndecodable, Reason: "InvalidRelease", Message: fmt.Sprintf(
		"%s has no .status.inventory (helm-controller older than 1.5), and the Helm storage secret %s of its latest release "+
			"holds nothing that decodes as a Helm release (base64, gzip, JSON with a manifest of Kubernetes objects): "+
			"what it deployed cannot be listed, so its objects cannot be verified; upgrade helm-controller to 1.5 or later, "+
			"which records the inventory", id, secret)}
	if !applied {
		f.Verdict, f.Code = result.VerdictInProgress, ""
		e.wait(f)
		return
	}
	e.fail(f)
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
func (a *assessor) firstInstalling(id, chart string, now time.Time) time.Time {
	if a.mem.installSeen == nil {
		a.mem.installSeen = map[string]time.Time{}
	}
	key := id + "|" + chart
	if t, ok := a.mem.installSeen[key]; ok {
		return t
	}
	a.mem.installSeen[key] = now
	return now
}

// installObjects lists the workloads of a release Helm is installing (flux.Gate.Installing),
// in the release's namespace, by Helm's annotations: helm-controller records neither the
// release nor its inventory until Helm's wait is over, but Helm creates them as it goes, and
// those are the new chart's. Only workloads created since the run first saw the install
// (since) count: one left by an earlier attempt (helm.sh/resource-policy: keep, an
// uninstall remediation) or being deleted is not this install's, and waits for Helm; so does
// one created before the run started. ok is false while a list is on its way.
func (a *assessor) installObjects(e *Assessment, g *flux.Gate, since time.Time) (refs []flux.ObjectRef, ok bool) {
	ok = true
	for _, k := range installWorkloads {
		w := a.list(ListKey{GVR: k.gvr, Namespace: g.ReleaseNamespace})
		ready, forbidden := a.optionalWatchReady(e, w, k.gvr.Resource+namespaceSuffix(g.ReleaseNamespace))
		if forbidden != "" {
			// Least privilege for an app without that kind: Helm's record says the rest
			// once its wait is over.
			continue
		}
		if !ready {
			ok = false
			continue
		}
		for _, o := range w.Items() {
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
