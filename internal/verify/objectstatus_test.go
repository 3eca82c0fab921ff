package verify

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
)

func TestObjectStatus(t *testing.T) {
	t.Parallel()
	const job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, generation: 1}\n"
	tests := []struct {
		name     string
		manifest string
		want     result.ObjectStatus
	}{
		{
			name:     "job running is in progress",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', active: 1}",
			want:     result.ObjectInProgress,
		},
		{
			name:     "job not started is in progress",
			manifest: job + "status: {}",
			want:     result.ObjectInProgress,
		},
		{
			name: "job complete is current",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', succeeded: 1, conditions: [" +
				"{type: SuccessCriteriaMet, status: 'True'}, {type: Complete, status: 'True'}]}",
			want: result.ObjectCurrent,
		},
		{
			name: "job failed is failed",
			manifest: job + "status: {startTime: '2025-06-01T12:00:00Z', failed: 1, conditions: [" +
				"{type: FailureTarget, status: 'True', reason: BackoffLimitExceeded}, {type: Failed, status: 'True', reason: BackoffLimitExceeded}]}",
			want: result.ObjectFailed,
		},
		{
			name:     "job suspended after it started is current, as kstatus says",
			manifest: job + "spec: {suspend: true}\nstatus: {startTime: '2025-06-01T12:00:00Z'}",
			want:     result.ObjectCurrent,
		},
		{
			name:     "other kinds are kstatus's",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: shop}",
			want:     result.ObjectCurrent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := yaml.YAMLToJSON([]byte(tt.manifest))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			got, msg, err := objectStatus(u)
			if err != nil {
				t.Fatalf("objectStatus() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("objectStatus() = %s (%s), want %s", got, msg, tt.want)
			}
		})
	}
}
