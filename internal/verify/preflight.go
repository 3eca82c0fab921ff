package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// fluxReportGVR is the Flux Operator's report of the Flux installation (Flux Operator v0.59.0
// api/v1 FluxReport): one, named flux, in the namespace Flux runs in.
var fluxReportGVR = schema.GroupVersionResource{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "fluxreports"}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// defaultFluxNamespace is where Flux runs when no FluxReport says otherwise.
const defaultFluxNamespace = "flux-system"

// preflightTimeout bounds the preflight's reads together: they are advice, read while the
// cluster's loop waits, and a server or proxy that holds them must not hold the verdict.
const preflightTimeout = 5 * time.Second

// preflight reads the Flux installation, once the tree the assessment walked is known, and
// decides with assess.Preflight whether the controllers it needs are available: the
// FluxReport, if the Flux Operator is installed, for the namespace Flux runs in and its
// components; then the Deployments of that namespace. A read that fails (403, 404, a Flux run
// outside the cluster) is a note, never the verdict. awaitingRequest is set while the cluster
// waits for Flux to handle the run's own reconcile requests (assess.Conclusion.AwaitsReconcile);
// wait is what those requests wait for, whose controller is needed too
// (assess.RequestControllers).
func (s *clusterState) preflight(ctx context.Context, e *assess.Assessment, awaitingRequest bool, wait *assess.ReconcileWait) assess.PreflightResult {
	in := assess.PreflightInput{Namespace: defaultFluxNamespace}
	rctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	if reports, err := s.dynamicClient.Resource(fluxReportGVR).List(rctx, metav1.ListOptions{}); err != nil {
		// (Not found: the Flux Operator is not installed, as in most clusters; nothing to say.)
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			in.Notes = append(in.Notes, "preflight could not read the Flux Operator's FluxReports: "+apiMessage(err))
		}
	} else if r, note := operatorReport(reports.Items); r != nil {
		in.Namespace = r.GetNamespace()
		in.Report = reportComponents(r)
	} else if note != "" {
		in.Notes = append(in.Notes, note)
	}
	list, err := s.dynamicClient.Resource(deploymentsGVR).Namespace(in.Namespace).List(rctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			in.Notes = append(in.Notes, fmt.Sprintf("preflight could not read the Flux controllers' Deployments in %s: %s", in.Namespace, apiMessage(err)))
		}
	} else {
		in.Deployments = map[string]*appsv1.Deployment{}
		for i := range list.Items {
			d := &appsv1.Deployment{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, d) == nil {
				in.Deployments[d.Name] = d
			}
		}
	}
	needs := append(s.controllersNeeded(e, awaitingRequest), assess.RequestControllers(wait)...)
	return assess.Preflight(needs, in, s.mem, s.req.Clock())
}

// controllersNeeded lists the controllers the Flux objects the assessment walked still need
// (assess.ControllersNeeded), read from the view's caches (their shard label, their source's).
func (s *clusterState) controllersNeeded(e *assess.Assessment, awaitingRequest bool) []assess.ControllerNeed {
	return assess.ControllersNeeded(e.Flux, awaitingRequest, func(fo result.FluxObject) assess.PreflightObject {
		kind := flux.Kind(fo.Kind)
		cached, _ := s.watches.get(assess.ListKey{GVR: kind.GroupVersionResource(), Namespace: fo.Namespace}).Object(fo.Namespace, fo.Name)
		obj, ok := cached.(*unstructured.Unstructured)
		if !ok {
			return assess.PreflightObject{}
		}
		src := flux.SourceOf(kind, obj)
		read := assess.PreflightObject{Labels: obj.GetLabels(), SourceKind: src.Kind}
		// (The assessment watches the sources of the objects not yet Current; peek starts no
		// watch of its own.)
		if gvr, ok := src.GroupVersionResource(); ok {
			if w, ok := s.watches.peek(assess.ListKey{GVR: gvr, Namespace: src.Namespace}); ok {
				cached, _ := w.Object(src.Namespace, src.Name)
				if so, ok := cached.(*unstructured.Unstructured); ok {
					read.SourceRead, read.SourceLabels = true, so.GetLabels()
				}
			}
		}
		return read
	})
}

// fluxReportName is the name of the FluxReport the Flux Operator writes, in the namespace it
// runs in (Flux Operator v0.59.0 api/v1 DefaultInstanceName; its manager caches no other).
const fluxReportName = "flux"

// operatorReport is the FluxReport the Flux Operator writes among reports; nil, with a note,
// when several namespaces hold one of its name (the Deployments of flux-system decide then).
// Another FluxReport is no report of the operator's: nothing updates it.
func operatorReport(reports []unstructured.Unstructured) (*unstructured.Unstructured, string) {
	var found []*unstructured.Unstructured
	var namespaces []string
	for i := range reports {
		if reports[i].GetName() == fluxReportName {
			found = append(found, &reports[i])
			namespaces = append(namespaces, reports[i].GetNamespace())
		}
	}
	if len(found) > 1 {
		return nil, fmt.Sprintf("preflight found a FluxReport %s in several namespaces (%s); it read the Deployments of %s",
			fluxReportName, strings.Join(namespaces, ", "), defaultFluxNamespace)
	}
	if len(found) == 0 {
		return nil, ""
	}
	return found[0], ""
}

// reportComponents reads a FluxReport's spec.components.
func reportComponents(r *unstructured.Unstructured) []assess.ReportComponent {
	items, _, _ := flux.NestedSlice(r.Object, "spec", "components")
	out := []assess.ReportComponent{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		ready, _ := m["ready"].(bool)
		status, _ := m["status"].(string)
		out = append(out, assess.ReportComponent{Name: name, Ready: ready, Status: status})
	}
	return out
}

// preflightResult is the preflight's part of the cluster's result; nil when it has nothing to
// say.
func preflightResult(r assess.PreflightResult) *result.Preflight {
	if len(r.Warnings) == 0 && len(r.Notes) == 0 {
		return nil
	}
	return &result.Preflight{Warnings: append([]string{}, r.Warnings...), Notes: append([]string{}, r.Notes...)}
}
