package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/org/app-status-action/internal/assess"
)

func pullPod(uid types.UID, image, reason, message string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: uid},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "sidecar", Image: "proxy:1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: "app", Image: image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}},
		}},
	}
}

func TestKeepPullErrors(t *testing.T) {
	t.Parallel()
	const (
		bare     = `Back-off pulling image "r/app:1"`
		notFound = `failed to resolve reference "r/app:1": r/app:1: not found`
		timeout  = `dial tcp 10.0.0.1:443: i/o timeout`
	)
	tests := []struct {
		name     string
		old, cur *corev1.Pod
		want     string // the app container's waiting message after carry
	}{
		{
			name: "bare back-off after a not found: the error is kept",
			old:  pullPod("u1", "r/app:1", "ErrImagePull", notFound),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare),
			want: bare + ": ErrImagePull: " + notFound,
		},
		{
			name: "bare back-off after a back-off that carried it: still kept",
			old:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare+": ErrImagePull: "+timeout),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare),
			want: bare + ": ErrImagePull: " + timeout,
		},
		{
			name: "a back-off that says why (1.31) is left as it is",
			old:  pullPod("u1", "r/app:1", "ErrImagePull", notFound),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare+": ErrImagePull: "+timeout),
			want: bare + ": ErrImagePull: " + timeout,
		},
		{
			name: "another image: nothing carried",
			old:  pullPod("u1", "r/app:0", "ErrImagePull", notFound),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare),
			want: bare,
		},
		{
			name: "another pod of the same name: nothing carried",
			old:  pullPod("u0", "r/app:1", "ErrImagePull", notFound),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare),
			want: bare,
		},
		{
			name: "no error before: still bare",
			old:  pullPod("u1", "r/app:1", "ContainerCreating", ""),
			cur:  pullPod("u1", "r/app:1", "ImagePullBackOff", bare),
			want: bare,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := tt.old.DeepCopy()
			got := keepPullErrors(tt.old, tt.cur).(*corev1.Pod)
			if diff := cmp.Diff(tt.want, got.Status.ContainerStatuses[1].State.Waiting.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.old); diff != "" {
				t.Errorf("the previous state was modified (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreKeepsPullErrors: the pods' store carries the error through an update and a relist.
func TestStoreKeepsPullErrors(t *testing.T) {
	t.Parallel()
	store := &notifyingStore{transform: func(o any) (any, assess.ObjectFacts, error) { return o, assess.ObjectFacts{}, nil },
		onChange: func() {}, carry: keepPullErrors}
	if err := store.Add(pullPod("u1", "r/app:1", "ErrImagePull", "r/app:1: not found")); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(pullPod("u1", "r/app:1", "ImagePullBackOff", `Back-off pulling image "r/app:1"`)); err != nil {
		t.Fatal(err)
	}
	if err := store.Replace([]any{pullPod("u1", "r/app:1", "ImagePullBackOff", `Back-off pulling image "r/app:1"`)}, "2"); err != nil {
		t.Fatal(err)
	}
	obj, _, _ := store.GetByKey("shop/web-1")
	want := `Back-off pulling image "r/app:1": ErrImagePull: r/app:1: not found`
	if got := obj.(*corev1.Pod).Status.ContainerStatuses[1].State.Waiting.Message; got != want {
		t.Errorf("after an update and a relist: %q, want %q", got, want)
	}
}

func TestBareBackOff(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]bool{
		`Back-off pulling image "r/app:1"`:                        true,
		`Back-off pulling image "r/app:1" `:                       true,
		`Back-off pulling image "r/app:1": ErrImagePull: timeout`: false,
		`Back-off restarting failed container`:                    false,
		``:                                                        false,
	} {
		if got := bareBackOff(msg); got != want {
			t.Errorf("bareBackOff(%q) = %v, want %v", msg, got, want)
		}
	}
}
