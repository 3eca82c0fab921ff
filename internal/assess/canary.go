package assess

import "k8s.io/apimachinery/pkg/runtime/schema"

// The Canaries of a tree, as the view lists them: Flagger's own rules (its phases, what a
// Canary's state says of its target's template) are internal/flagger's.

var (
	// CanaryGVK is the kind of a Flagger Canary.
	CanaryGVK = schema.GroupVersionKind{Group: "flagger.app", Version: "v1beta1", Kind: "Canary"}
	// canaryGVR is the resource of a Canary, listed per namespace.
	canaryGVR = schema.GroupVersionResource{Group: "flagger.app", Version: "v1beta1", Resource: "canaries"}
	// canaryTargets are the kinds of a Canary's target whose primary is a copy of the same
	// kind named NAME-primary, with their resources.
	canaryTargets = map[string]schema.GroupVersionResource{
		"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
		"DaemonSet":  {Group: "apps", Version: "v1", Resource: "daemonsets"},
	}
)

// NotServedError is a Mapping's error for a kind the cluster does not serve (no CRD).
type NotServedError struct{ GVK schema.GroupVersionKind }

func (e NotServedError) Error() string { return "the cluster does not serve " + e.GVK.String() }
