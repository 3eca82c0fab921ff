// Package fluxhealth judges objects with Flux's own status readers where Flux does not use
// kstatus as it is: a Kustomization's or HelmRelease's spec.healthCheckExprs with
// fluxcd/pkg/runtime/cel, and Jobs with fluxcd/pkg/runtime/statusreaders, the readers
// kustomize-controller's health checks and helm-controller's wait use. Those packages import
// controller-runtime and client-go, which the pure decision (internal/assess) never does: it
// is given this package's Readers as its assess.Health.
package fluxhealth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	"github.com/fluxcd/pkg/runtime/statusreaders"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/result"
)

// evalTimeout bounds one evaluation of a team's expressions: they come from the cluster, and
// a costly one must not hold the run's assessments up. (A timeout reads as an error: the
// object waits, saying so.)
const evalTimeout = time.Second

// Readers is an assess.Health. Its context is the run's (or the cluster's): evaluations stop
// with it.
type Readers struct {
	ctx context.Context
}

// New returns the readers of a run under ctx.
func New(ctx context.Context) Readers { return Readers{ctx: ctx} }

// Job is the status fluxcd/pkg/runtime/statusreaders gives a Job: Current once Complete (or
// suspended), Failed once Failed, InProgress before.
func (Readers) Job(u *unstructured.Unstructured) (result.ObjectStatus, string) {
	res := statusreaders.ComputeJobStatus(u)
	return result.ObjectStatus(res.Status.String()), res.Message
}

// Exprs compiles spec.healthCheckExprs as the object holds them with fluxcd/pkg/runtime/cel,
// as the controllers do at the start of every reconcile. What does not compile (the
// controller stalls on it, InvalidCELExpression) is said as the status error of every object
// of a kind it names.
func (r Readers) Exprs(healthCheckExprs []any) func(*unstructured.Unstructured) (result.ObjectStatus, string, bool, error) {
	checks := make([]kustomize.CustomHealthCheck, 0, len(healthCheckExprs))
	var decodeErr error
	for i, raw := range healthCheckExprs {
		m, ok := raw.(map[string]any)
		if !ok {
			decodeErr = errors.Join(decodeErr, fmt.Errorf("healthCheckExprs[%d] is not an object", i))
			continue
		}
		var c kustomize.CustomHealthCheck
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			decodeErr = errors.Join(decodeErr, fmt.Errorf("healthCheckExprs[%d]: %w", i, err))
			continue
		}
		checks = append(checks, c)
	}
	e := &exprs{ctx: r.ctx, kinds: map[schema.GroupKind]bool{}}
	for _, c := range checks {
		gk := schema.FromAPIVersionAndKind(c.APIVersion, c.Kind).GroupKind()
		e.kinds[gk] = true
	}
	if decodeErr != nil {
		e.err = decodeErr
		return e.status
	}
	newReader, err := cel.NewStatusReader(checks)
	if err != nil {
		e.err = err
		return e.status
	}
	// The CEL reader reads the object it is given: it never uses the mapper or the cluster.
	e.reader = newReader(nil)
	return e.status
}

// exprs is a compiled spec.healthCheckExprs.
type exprs struct {
	ctx    context.Context
	reader engine.StatusReader
	// kinds are the kinds the expressions name (Kind "" for a whole group), and err why they
	// could not be compiled.
	kinds map[schema.GroupKind]bool
	err   error
}

// status is the status the expressions give u, when one names its kind or its group (matched
// is false otherwise: kstatus judges it). An expression that fails to evaluate (a field the
// object lacks) leaves the status Unknown and says why, as Flux's health check waits on it.
func (e *exprs) status(u *unstructured.Unstructured) (status result.ObjectStatus, message string, matched bool, err error) {
	gk := u.GroupVersionKind().GroupKind()
	if e.err != nil {
		if !e.kinds[gk] && !e.kinds[schema.GroupKind{Group: gk.Group}] {
			return "", "", false, nil
		}
		return result.ObjectUnknown, "", true, e.err
	}
	if !e.reader.Supports(gk) {
		return "", "", false, nil
	}
	ctx, cancel := context.WithTimeout(e.ctx, evalTimeout)
	defer cancel()
	rs, err := e.reader.ReadStatusForObject(ctx, nil, u)
	switch {
	case err != nil:
		return result.ObjectUnknown, "", true, err
	case rs.Error != nil:
		return result.ObjectUnknown, "", true, rs.Error
	}
	return result.ObjectStatus(rs.Status.String()), rs.Message, true, nil
}
