package verify

import (
	"context"
	"testing"
	"time"
)

// awaitAssessment: the watch after a list waits for a settled assessment begun after that
// list; a watch with no list before it (the reflector watching again) never waits; the hold
// and the cluster's end bound the wait.
func TestAwaitAssessment(t *testing.T) {
	t.Parallel()
	// A wait that should not happen, or should end before the hold, fails the test within
	// holdLong rather than hanging; any wait shorter than half of it counts as none, so a
	// loaded machine's pauses do not fail it.
	const holdLong = 4 * time.Second
	tests := []struct {
		name string
		// steps run in order on the set and the watch before the wait
		steps    func(s *watchSet, w *watch)
		during   func(s *watchSet) // runs while the watch waits, if set
		hold     time.Duration
		cancel   bool
		wantOpen bool          // awaitAssessment returned nil
		minWait  time.Duration // it waited at least this long
	}{
		{name: "no list before it: a watch again opens at once", steps: func(s *watchSet, w *watch) {},
			hold: holdLong, wantOpen: true},
		{name: "a settled assessment begun after the list", steps: func(s *watchSet, w *watch) {
			s.listed(w)
			s.assessed(s.assessing())
		}, hold: holdLong, wantOpen: true},
		{name: "its watch opened, the next watch without a list does not wait", steps: func(s *watchSet, w *watch) {
			s.listed(w)
			s.assessed(s.assessing())
			_ = s.awaitAssessment(context.Background(), w)
			s.assessing() // an assessment that never settles
		}, hold: holdLong, wantOpen: true},
		{name: "an assessment begun before the list settled after it: waits for the next", steps: func(s *watchSet, w *watch) {
			n := s.assessing()
			s.listed(w)
			s.assessed(n)
		}, during: func(s *watchSet) { s.assessed(s.assessing()) }, hold: holdLong, wantOpen: true, minWait: 50 * time.Millisecond},
		{name: "assessments that are not settled: the hold", steps: func(s *watchSet, w *watch) {
			s.listed(w)
			s.assessing()
		}, hold: 100 * time.Millisecond, wantOpen: true, minWait: 100 * time.Millisecond},
		{name: "the cluster's wait ends first", steps: func(s *watchSet, w *watch) { s.listed(w) },
			hold: holdLong, cancel: true, wantOpen: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, w := &watchSet{hold: tt.hold}, &watch{}
			tt.steps(s, w)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			began := time.Now()
			if tt.during != nil || tt.cancel {
				go func() {
					time.Sleep(50 * time.Millisecond)
					if tt.cancel {
						cancel()
						return
					}
					tt.during(s)
				}()
			}
			err := s.awaitAssessment(ctx, w)
			waited := time.Since(began)
			if (err == nil) != tt.wantOpen {
				t.Fatalf("awaitAssessment: %v, want open %t", err, tt.wantOpen)
			}
			if waited < tt.minWait || waited >= holdLong/2 {
				t.Errorf("waited %s, want at least %s and well under the hold", waited, tt.minWait)
			}
		})
	}
}
