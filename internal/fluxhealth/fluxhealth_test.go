package fluxhealth_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestExprs: spec.healthCheckExprs as a cluster holds them, compiled by Flux's cel package:
// the kind (or group) they name is judged by them; what Flux refuses to compile (a duplicate
// kind, an entry that is not an object) is an error of the kinds named, never a verdict.
func TestExprs(t *testing.T) {
	t.Parallel()
	widget := func(phase string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": phase}}}
		u.SetAPIVersion("example.com/v1")
		u.SetKind("Widget")
		return u
	}
	check := func(kind, current string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": kind, "current": current, "failed": "status.phase == 'Failed'"}
	}
	tests := []struct {
		name    string
		exprs   []any
		u       *unstructured.Unstructured
		want    result.ObjectStatus
		matched bool
		err     string
	}{
		{name: "current", exprs: []any{check("Widget", "status.phase == 'Ready'")}, u: widget("Ready"), want: result.ObjectCurrent, matched: true},
		{name: "failed", exprs: []any{check("Widget", "status.phase == 'Ready'")}, u: widget("Failed"), want: result.ObjectFailed, matched: true},
		{name: "none true", exprs: []any{check("Widget", "status.phase == 'Ready'")}, u: widget("Creating"), want: result.ObjectInProgress, matched: true},
		{name: "another kind", exprs: []any{check("Gadget", "status.phase == 'Ready'")}, u: widget("Failed")},
		{name: "a field the object lacks", exprs: []any{check("Widget", "status.ready")}, u: widget("Ready"), want: result.ObjectUnknown, matched: true, err: "no such key"},
		{name: "a duplicate kind", exprs: []any{check("Widget", "true"), check("Widget", "false")}, u: widget("Ready"),
			want: result.ObjectUnknown, matched: true, err: "duplicate custom health check"},
		{name: "an entry that is not an object", exprs: []any{check("Widget", "true"), "oops"}, u: widget("Ready"),
			want: result.ObjectUnknown, matched: true, err: "healthCheckExprs[1] is not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, _, matched, err := fluxhealth.New(t.Context()).Exprs(tt.exprs)(tt.u)
			if status != tt.want || matched != tt.matched || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("Exprs()(widget) = %q, matched %t, error %v; want %q, matched %t, error %q", status, matched, err, tt.want, tt.matched, tt.err)
			}
		})
	}
}
