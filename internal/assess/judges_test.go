package assess

import (
	"reflect"
	"testing"

	"github.com/org/app-status-action/internal/flux"
)

// TestObjectJudges holds the table to flux's own rules: a Flux kind is walked into, a
// source kind judged as source-controller serves it; any other kind named has a judge of its
// own (otherKindJudges).
func TestObjectJudges(t *testing.T) {
	t.Parallel()
	fluxJudge, sourceJudge := reflect.ValueOf(judgeFluxObject).Pointer(), reflect.ValueOf(judgeSourceObject).Pointer()
	otherKindJudges := map[string]uintptr{"PersistentVolumeClaim": reflect.ValueOf(judgeClaimObject).Pointer()}
	for gk, j := range objectJudges {
		o := flux.ObjectRef{Group: gk.Group, Kind: gk.Kind}
		_, isFlux := flux.IsFluxKind(o.Group, o.Kind)
		_, isSource := flux.InventorySource(o)
		switch got := reflect.ValueOf(j).Pointer(); {
		case isFlux && got != fluxJudge, isSource && got != sourceJudge, !isFlux && !isSource && got != otherKindJudges[gk.Kind]:
			t.Errorf("objectJudges[%v] does not match flux.IsFluxKind = %t, flux.InventorySource = %t", gk, isFlux, isSource)
		}
	}
	for _, k := range []flux.Kind{flux.KindKustomization, flux.KindHelmRelease, flux.KindResourceSet} {
		gk := k.GroupVersionKind().GroupKind()
		if _, ok := objectJudges[gk]; !ok {
			t.Errorf("objectJudges has no judge for %v", gk)
		}
	}
}
