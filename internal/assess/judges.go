package assess

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// The judges of an inventory's objects, by kind, as kstatus's legacyTypes: the walk reads an
// object and asks the judge of its kind; a kind the table does not name is judged by
// judgeWorkload (kstatus, the team's annotations, a Canary and the rollout classifier).

// objectJudge judges the object v, read from its list, and reports it. A judge does not walk:
// nested is the Flux object the walk goes on to, if v is one.
type objectJudge func(a *assessor, e *Assessment, v *objectVisit, now time.Time) (nested *flux.Ref)

// objectJudges are the judges of the kinds that are not judged as a workload: the Flux objects
// by their gate, the Flux sources as source-controller serves them.
var objectJudges = map[schema.GroupKind]objectJudge{
	flux.KindKustomization.GroupVersionKind().GroupKind():                judgeFluxObject,
	flux.KindHelmRelease.GroupVersionKind().GroupKind():                  judgeFluxObject,
	flux.KindResourceSet.GroupVersionKind().GroupKind():                  judgeFluxObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "GitRepository"}:           judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "OCIRepository"}:           judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "Bucket"}:                  judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmChart"}:               judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: "HelmRepository"}:          judgeSourceObject,
	{Group: "source.toolkit.fluxcd.io", Kind: flux.KindExternalArtifact}: judgeSourceObject,
}

// judgeOf returns the judge of o's kind.
func judgeOf(o flux.ObjectRef) objectJudge {
	if j, ok := objectJudges[schema.GroupKind{Group: o.Group, Kind: o.Kind}]; ok {
		return j
	}
	return judgeWorkloadObject
}

// judgeFluxObject reports a Flux object an inventory lists by its kstatus status; the walk
// then judges it as a Flux object, by its gate (evalFlux).
func judgeFluxObject(_ *assessor, e *Assessment, v *objectVisit, _ time.Time) *flux.Ref {
	o := v.ref
	kind, _ := flux.IsFluxKind(o.Group, o.Kind)
	e.Objects = append(e.Objects, v.ro)
	return &flux.Ref{Kind: kind, Namespace: o.Namespace, Name: o.Name}
}

// judgeSourceObject judges a Flux source an inventory lists as source-controller serves it,
// then as any other object.
func judgeSourceObject(a *assessor, e *Assessment, v *objectVisit, now time.Time) *flux.Ref {
	if src, isSource := flux.InventorySource(v.ref); isSource && v.u != nil && v.ro.Status != result.ObjectTerminating {
		a.judgeSource(e, v, src, now)
	}
	a.judgeWorkload(e, v, now)
	return nil
}

// judgeWorkloadObject judges any other object (judgeWorkload).
func judgeWorkloadObject(a *assessor, e *Assessment, v *objectVisit, now time.Time) *flux.Ref {
	a.judgeWorkload(e, v, now)
	return nil
}
