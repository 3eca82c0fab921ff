package verify

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's waiting reasons of a container that cannot pull its image.
const (
	reasonErrImagePull     = "ErrImagePull"
	reasonImagePullBackOff = "ImagePullBackOff"
)

// keepPullErrors carries a container's last pull error into its back-off. Before Kubernetes
// 1.31 the kubelet's ImagePullBackOff says only `Back-off pulling image "x"`, dropping the
// error its ErrImagePull named a moment before; the classifier needs it to tell an image that
// does not exist (fail at once) from a registry that is down (retried). A back-off of the same
// image in the same pod gets the 1.31 form, `Back-off pulling image "x": ErrImagePull: <error>`,
// from the state the cache held. Pods are typed by the store's transform; anything else passes
// unchanged, and the previous state is never modified.
func keepPullErrors(old, cur any) any {
	prev, ok := old.(*corev1.Pod)
	pod, ok2 := cur.(*corev1.Pod)
	if !ok || !ok2 || prev.UID != pod.UID {
		return cur
	}
	carry := func(statuses []corev1.ContainerStatus, before []corev1.ContainerStatus) {
		for i := range statuses {
			w := statuses[i].State.Waiting
			if w == nil || w.Reason != reasonImagePullBackOff || !bareBackOff(w.Message) {
				continue
			}
			for _, b := range before {
				if b.Name != statuses[i].Name || b.Image != statuses[i].Image || b.State.Waiting == nil {
					continue
				}
				switch bw := b.State.Waiting; {
				case bw.Reason == reasonErrImagePull && bw.Message != "":
					w.Message += ": " + reasonErrImagePull + ": " + bw.Message
				case bw.Reason == reasonImagePullBackOff && !bareBackOff(bw.Message):
					w.Message = bw.Message
				}
			}
		}
	}
	carry(pod.Status.InitContainerStatuses, prev.Status.InitContainerStatuses)
	carry(pod.Status.ContainerStatuses, prev.Status.ContainerStatuses)
	carry(pod.Status.EphemeralContainerStatuses, prev.Status.EphemeralContainerStatuses)
	return pod
}

// bareBackOff reports whether a back-off message names no error: `Back-off pulling image "x"`
// and nothing after the image.
func bareBackOff(message string) bool {
	rest, ok := strings.CutPrefix(message, "Back-off pulling image ")
	if !ok {
		return false
	}
	if end := strings.LastIndex(rest, `"`); end >= 0 {
		rest = rest[end+1:]
	}
	return strings.TrimSpace(rest) == ""
}
