package assess

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// A Flux object whose source or dependency does not exist is retried by its controller for
// ever, in words no decision reads as final: kustomize-controller v1.9.5 (getSource) returns
// the API server's bare `gitrepositories.source.toolkit.fluxcd.io "x" not found`, Ready=False
// ArtifactFailed, and tries again at retryInterval; helm-controller v1.6.4 writes "could not
// get Source object: …" (ArtifactFailed, progressing); source-controller v1.9.5 a HelmChart's
// missing repository as FetchFailed SourceUnavailable, not stalled; checkDependencies
// "unable to get 'NS/NAME' dependency: …" (DependencyNotReady). The missing object may still be
// created (the same parent may apply it next), so the run decides it as it decides a
// requested object that does not exist (missing): NotFound once it has been missing for the
// not-found grace while no Kustomization or ResourceSet may still create it. The rule reads
// the lists, not the words: the object's list of its namespace, read, does not hold it.

// missingSource decides v's source (flux.NeededSource) when the cluster lacks it and v, not
// Current, says it waits for its source (flux.WaitsForSource).
func (a *assessor) missingSource(e *Assessment, v *fluxVisit) {
	if v.obj == nil || v.gate.Verdict == result.VerdictCurrent || !flux.WaitsForSource(v.ref.Kind, v.obj) {
		return
	}
	ref := flux.NeededSource(v.ref.Kind, v.obj)
	gvr, ok := ref.GroupVersionResource()
	if !ok || ref.Name == "" {
		return
	}
	key := ListKey{GVR: gvr, Namespace: ref.Namespace}
	a.missingNeed(e, flux.Ref{Kind: flux.Kind(ref.Kind), Namespace: ref.Namespace, Name: ref.Name}, v.id, " (the source of "+v.id+")", key, a.list(key))
}

// missingNeed decides id, which the Flux object needer needs as role says, when w, the list of
// its kind in its namespace (key), has been read and does not hold it. id comes from a spec
// (untrusted, never validated as a name is): it is shown as the cluster's names are.
func (a *assessor) missingNeed(e *Assessment, ref flux.Ref, needer, role string, key ListKey, w List) {
	id, namespace, name := shownName(ref.ID()), ref.Namespace, ref.Name
	if !w.Synced() {
		return
	}
	if cached, _ := w.Object(namespace, name); cached != nil {
		if _, isU := cached.(*unstructured.Unstructured); isU {
			return
		}
	}
	a.missing(e, missingObject{id: id, ref: ref, role: role, needer: needer, key: key, list: w, hints: closeNames(namespace, name, w)})
}
