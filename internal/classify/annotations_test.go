package classify

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOptionsForObject(t *testing.T) {
	t.Parallel()
	run := Options{CrashRestarts: 3, RetryGrace: 2 * time.Minute, UnschedulableGrace: 2 * time.Minute}
	tests := []struct {
		name        string
		annotations map[string]string
		want        Options
		notes       []string // what each note must say, in order
	}{
		{name: "none", want: run},
		{
			name:        "failure-grace sets the three graces",
			annotations: map[string]string{AnnotationFailureGrace: "10m"},
			want:        Options{CrashRestarts: 3, RetryGrace: 10 * time.Minute, UnschedulableGrace: 10 * time.Minute, NeverReadyGrace: 10 * time.Minute},
		},
		{
			name:        "a grace of its own wins over failure-grace",
			annotations: map[string]string{AnnotationFailureGrace: "10m", AnnotationRetryGrace: " 30s ", AnnotationNeverReadyGrace: "1h", AnnotationUnschedulableGrace: "5m"},
			want:        Options{CrashRestarts: 3, RetryGrace: 30 * time.Second, UnschedulableGrace: 5 * time.Minute, NeverReadyGrace: time.Hour},
		},
		{
			name:        "crash-restarts",
			annotations: map[string]string{AnnotationCrashRestarts: "10"},
			want:        Options{CrashRestarts: 10, RetryGrace: 2 * time.Minute, UnschedulableGrace: 2 * time.Minute},
		},
		{
			name: "values that cannot be read are ignored, and said",
			annotations: map[string]string{
				AnnotationRetryGrace: "soon", AnnotationFailureGrace: "0s", AnnotationNeverReadyGrace: "48h",
				AnnotationCrashRestarts: "-1", AnnotationUnschedulableGrace: "\n::error::" + strings.Repeat("x", 100),
			},
			want: run,
			notes: []string{
				`annotation app-status.io/failure-grace="0s" ignored`,
				`annotation app-status.io/retry-grace="soon" ignored`,
				`annotation app-status.io/unschedulable-grace="\n::error::xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" ignored`,
				`annotation app-status.io/never-ready-grace="48h" ignored`,
				`annotation app-status.io/crash-restarts="-1" ignored: want a whole number from 1 to 1000`,
			},
		},
		{
			name:        "other annotations are not ours",
			annotations: map[string]string{"app-status.io/other": "x", "retry-grace": "1s"},
			want:        run,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, notes := run.ForObject(tt.annotations)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tt.notes))
			}
			for i, n := range tt.notes {
				if !strings.Contains(notes[i], n) {
					t.Errorf("note %d %q does not say %q", i, notes[i], n)
				}
				if strings.ContainsAny(notes[i], "\n\r") {
					t.Errorf("note %d %q holds a line break", i, notes[i])
				}
			}
		})
	}
}

func TestIgnoreReadiness(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]struct {
		ignore bool
		noted  bool
	}{"true": {true, false}, " True ": {true, false}, "false": {false, false}, "yes": {false, true}, "": {false, true}} {
		ignore, note := IgnoreReadiness(map[string]string{AnnotationIgnoreReadiness: v})
		if ignore != want.ignore || (note != "") != want.noted {
			t.Errorf("IgnoreReadiness(%q) = %v, %q; want %v, noted %v", v, ignore, note, want.ignore, want.noted)
		}
	}
	if ignore, note := IgnoreReadiness(nil); ignore || note != "" {
		t.Errorf("no annotation: %v, %q", ignore, note)
	}
}
