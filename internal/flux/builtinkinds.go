package flux

import "slices"

// builtinKinds are the kinds the API server serves by itself, by API group ("" the core
// group): no CustomResourceDefinition can change their schema, so a field their schema does not
// declare is refused at every attempt. They are the kinds k8s.io/api v0.37.2 registers in the
// addKnownTypes of each group's register.go, every version, less the kinds no manifest
// declares (reviews, options, Scale, Eviction, Binding, lists and the like), and
// apiextensions.k8s.io's CustomResourceDefinition (k8s.io/apiextensions-apiserver) and
// apiregistration.k8s.io's APIService (k8s.io/kube-aggregator). TestBuiltinKinds checks each
// against k8s.io/api's scheme.
//
// ssa names the refused object by its kind alone (Kind/namespace/name, with no group), so a
// CRD kind of the same name as a built-in one (Knative Serving's Service is one) is read as
// built-in, unless the words carry its group (an older API server's "failed to create typed
// patch object (NS/NAME; GROUP/VERSION, Kind=KIND)"). Such a kind is rare, and its schema
// refusal then fails without waiting for the retry, as any refusal of the manifests does.
var builtinKinds = map[string][]string{
	"": {"ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node", "PersistentVolume",
		"PersistentVolumeClaim", "Pod", "PodTemplate", "ReplicationController", "ResourceQuota", "Secret",
		"Service", "ServiceAccount"},
	"admissionregistration.k8s.io": {"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"ValidatingWebhookConfiguration"},
	"apiextensions.k8s.io":         {"CustomResourceDefinition"},
	"apiregistration.k8s.io":       {"APIService"},
	"apps":                         {"ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"},
	"autoscaling":                  {"HorizontalPodAutoscaler"},
	"batch":                        {"CronJob", "Job"},
	"certificates.k8s.io":          {"CertificateSigningRequest", "ClusterTrustBundle"},
	"coordination.k8s.io":          {"Lease"},
	"discovery.k8s.io":             {"EndpointSlice"},
	"events.k8s.io":                {"Event"},
	"flowcontrol.apiserver.k8s.io": {"FlowSchema", "PriorityLevelConfiguration"},
	"networking.k8s.io":            {"Ingress", "IngressClass", "IPAddress", "NetworkPolicy", "ServiceCIDR"},
	"node.k8s.io":                  {"RuntimeClass"},
	"policy":                       {"PodDisruptionBudget"},
	"rbac.authorization.k8s.io":    {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"},
	"resource.k8s.io":              {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"},
	"scheduling.k8s.io":            {"PriorityClass"},
	"storage.k8s.io": {"CSIDriver", "CSINode", "CSIStorageCapacity", "StorageClass", "VolumeAttachment",
		"VolumeAttributesClass"},
}

// builtinKind reports whether kind of group is served by the API server itself; with group
// unknown (known false), whether any built-in group has a kind of that name.
func builtinKind(group string, known bool, kind string) bool {
	if known {
		return slices.Contains(builtinKinds[group], kind)
	}
	for _, kinds := range builtinKinds {
		if slices.Contains(kinds, kind) {
			return true
		}
	}
	return false
}
