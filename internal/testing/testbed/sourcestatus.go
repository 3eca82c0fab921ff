package testbed

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

// FailFetch writes the status source-controller (v1.9.3, internal/reconcile) writes when a
// fetch of the source ns/name fails again at its current generation, as when its Git host or
// chart repository is down: Reconciling=True with reason ProgressingWithRetry, Ready=False and
// FetchFailed=True with reason and message. The artifact it serves stays.
func (c *Cluster) FailFetch(ctx context.Context, gvr schema.GroupVersionResource, ns, name, reason, message string) error {
	return c.sourceConditions(ctx, gvr, ns, name, func(now string, gen int64) []any {
		return []any{
			statusCondition("Reconciling", "True", "ProgressingWithRetry", "building artifact: new upstream revision", now, gen),
			statusCondition("Ready", "False", reason, message, now, gen),
			statusCondition("FetchFailed", "True", reason, message, now, gen),
		}
	})
}

// StallSource writes the status of a source source-controller stalled on (a serror.Stalling:
// a URL it cannot parse, a provider without its secret): Stalled=True, Ready=False and
// FetchFailed=True with reason and message, its current generation observed. The artifact it
// serves, if any, stays.
func (c *Cluster) StallSource(ctx context.Context, gvr schema.GroupVersionResource, ns, name, reason, message string) error {
	return c.sourceConditions(ctx, gvr, ns, name, func(now string, gen int64) []any {
		return []any{
			statusCondition("Stalled", "True", reason, message, now, gen),
			statusCondition("Ready", "False", reason, message, now, gen),
			statusCondition("FetchFailed", "True", reason, message, now, gen),
		}
	})
}

// sourceConditions replaces the conditions of the source ns/name with those conds makes, and
// marks its current generation observed.
func (c *Cluster) sourceConditions(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, conds func(now string, generation int64) []any) error {
	ri := c.Dynamic.Resource(gvr).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		status, _ := obj.Object["status"].(map[string]any)
		if status == nil {
			status = map[string]any{}
		}
		status["observedGeneration"] = obj.GetGeneration()
		status["conditions"] = conds(time.Now().UTC().Format(time.RFC3339), obj.GetGeneration())
		obj.Object["status"] = status
		_, err = ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("testbed: write the status of %s %s/%s in %s: %w", gvr.Resource, ns, name, c.Name, err)
	}
	return nil
}

func statusCondition(typ, status, reason, message, now string, generation int64) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": now, "observedGeneration": generation,
	}
}
