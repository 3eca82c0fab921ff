package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/org/app-status-action/internal/assess"
)

// kubectlAppliedDeployments is the JSON list of n Deployments as a cluster serves them after
// kubectl apply (client-side): each with kubectl's last-applied-configuration and the
// managedFields of kubectl and of the controller's status.
func kubectlAppliedDeployments(b *testing.B, n int) []byte {
	b.Helper()
	items := make([]appsv1.Deployment, n)
	for i := range items {
		name := fmt.Sprintf("web-%03d", i)
		labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop"}
		d := appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: new(int32(2)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "web", Image: "registry.example.com/shop/web:1.4.2",
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}},
					}}},
				},
			},
		}
		manifest, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		d.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: string(manifest) + "\n", "deployment.kubernetes.io/revision": "1"}
		at := metav1.Unix(1767225600, 0)
		d.ManagedFields = []metav1.ManagedFieldsEntry{
			{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &at, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"PORT\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}`)},
			{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &at, FieldsType: "FieldsV1", Subresource: "status",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`)},
		}
		d.Generation, d.ResourceVersion, d.UID = 1, fmt.Sprint(1000+i), types.UID("uid-"+name)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", name+"-5d8f7c9b6")},
			}}
		items[i] = d
	}
	data, err := json.Marshal(appsv1.DeploymentList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DeploymentList"}, ListMeta: metav1.ListMeta{ResourceVersion: "5000"}, Items: items})
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkCacheDeployments: a watch's first list of 200 Deployments applied with kubectl,
// decoded and taken into its store through the kind's transform. retained-B/object is what
// the store holds per object once the list is garbage.
func BenchmarkCacheDeployments(b *testing.B) {
	const n = 200
	data := kubectlAppliedDeployments(b, n)
	key := assess.ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "app"}
	fill := func() *notifyingStore {
		var list unstructured.UnstructuredList
		if _, err := decodeUnstructuredList(data, &list); err != nil {
			b.Fatal(err)
		}
		items := make([]any, len(list.Items))
		for i := range list.Items {
			items[i] = &list.Items[i]
		}
		store := &notifyingStore{transform: transformFor(key), onChange: func() {}}
		if err := store.Replace(items, list.GetResourceVersion()); err != nil {
			b.Fatal(err)
		}
		return store
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		fill()
	}
	// (After the loop: ResetTimer drops the metrics reported before it.)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "retained-B/object")
}

// controllerPods are n Pods of a ReplicaSet as a cluster serves them: owned, with the
// service account's projected volume, the scheduler's and kubelet's conditions, and the
// managedFields of kube-controller-manager and the kubelet.
func controllerPods(n int) *corev1.PodList {
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "9000"}}
	at := metav1.Unix(1767225600, 0)
	for i := range n {
		name := fmt.Sprintf("web-5d8f7c9b6-%05d", i)
		labels := map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "5d8f7c9b6"}
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, Labels: labels, GenerateName: "web-5d8f7c9b6-",
				UID: types.UID("uid-" + name), ResourceVersion: fmt.Sprint(2000 + i),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f7c9b6", UID: "uid-rs", Controller: new(true), BlockOwnerDeletion: new(true)}},
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, FieldsType: "FieldsV1",
						FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"uid-rs\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`)},
					{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at, FieldsType: "FieldsV1", Subresource: "status",
						FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.1.7\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
				}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/shop/web:1.4.2",
					Ports:                    []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
					VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
				Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
				RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default", NodeName: fmt.Sprintf("node-%d", i%7),
				SchedulerName: "default-scheduler",
				Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
					{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "172.18.0.3", PodIP: "10.244.1.7", StartTime: &at,
				Conditions: []corev1.PodCondition{
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
				},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, Image: "registry.example.com/shop/web:1.4.2",
					ImageID: "registry.example.com/shop/web@sha256:3f1e", ContainerID: "containerd://8a1c", Started: new(true),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}}}},
			},
		}
		list.Items = append(list.Items, p)
	}
	return list
}

// BenchmarkCachePods: a watch's first list of 200 Pods, decoded and taken into its store
// through the kind's transform, as the typed client reads it (protobuf) and as the dynamic
// client read it before (json: one-pass JSON to unstructured, then converted to typed).
func BenchmarkCachePods(b *testing.B) {
	const n = 200
	list := controllerPods(n)
	jsonData, err := json.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &pb); err != nil {
		b.Fatal(err)
	}
	key := assess.ListKey{GVR: assess.PodsGVR, Namespace: "app"}
	decoder := scheme.Codecs.UniversalDeserializer()
	for _, tc := range []struct {
		name   string
		data   []byte
		decode func([]byte) []any
	}{
		{"protobuf", pb.Bytes(), func(data []byte) []any {
			var pods corev1.PodList
			if _, _, err := decoder.Decode(data, nil, &pods); err != nil {
				b.Fatal(err)
			}
			items := make([]any, len(pods.Items))
			for i := range pods.Items {
				items[i] = &pods.Items[i]
			}
			return items
		}},
		{"json", jsonData, func(data []byte) []any {
			var pods unstructured.UnstructuredList
			if _, err := decodeUnstructuredList(data, &pods); err != nil {
				b.Fatal(err)
			}
			items := make([]any, len(pods.Items))
			for i := range pods.Items {
				items[i] = &pods.Items[i]
			}
			return items
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			fill := func() *notifyingStore {
				store := &notifyingStore{transform: transformFor(key), onChange: func() {}}
				if err := store.Replace(tc.decode(tc.data), "9000"); err != nil {
					b.Fatal(err)
				}
				return store
			}
			if got := len(fill().List()); got != n {
				b.Fatalf("store holds %d pods, want %d", got, n)
			}
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				fill()
			}
		})
	}
}
