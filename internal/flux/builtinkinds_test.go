package flux

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestBuiltinKinds: every built-in kind is one k8s.io/api registers in its group (but
// apiextensions.k8s.io's and apiregistration.k8s.io's, of modules the product does not import);
// a kind's name alone is built-in when any group has it.
func TestBuiltinKinds(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		admissionregistrationv1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme,
		certificatesv1.AddToScheme, coordinationv1.AddToScheme, corev1.AddToScheme, discoveryv1.AddToScheme,
		eventsv1.AddToScheme, flowcontrolv1.AddToScheme, networkingv1.AddToScheme, nodev1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, resourcev1.AddToScheme, schedulingv1.AddToScheme, storagev1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	known := map[schema.GroupKind]bool{}
	for gvk := range scheme.AllKnownTypes() {
		known[gvk.GroupKind()] = true
	}
	for group, kinds := range builtinKinds {
		if group == "apiextensions.k8s.io" || group == "apiregistration.k8s.io" {
			continue
		}
		for _, kind := range kinds {
			if !known[schema.GroupKind{Group: group, Kind: kind}] {
				t.Errorf("builtinKinds[%q] has %s, which k8s.io/api does not register", group, kind)
			}
		}
	}
	tests := []struct {
		group string
		known bool
		kind  string
		want  bool
	}{
		{"apps", true, "Deployment", true},
		{"", true, "PersistentVolumeClaim", true},
		{"serving.knative.dev", true, "Service", false},
		{"", false, "Service", true},
		{"", false, "HorizontalPodAutoscaler", true},
		{"", false, "Widget", false},
		{"", true, "Deployment", false},
	}
	for _, tt := range tests {
		if got := builtinKind(tt.group, tt.known, tt.kind); got != tt.want {
			t.Errorf("builtinKind(%q, %t, %q) = %t, want %t", tt.group, tt.known, tt.kind, got, tt.want)
		}
	}
}
