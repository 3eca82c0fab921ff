package verify

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// settleList is a cachedList whose first list arrives or fails when the test says.
type settleList struct {
	cachedList // (only synced and err are read)
	arrived    atomic.Bool
	failed     atomic.Bool
}

func (l *settleList) synced() bool { return l.arrived.Load() }

func (l *settleList) err() error {
	if l.failed.Load() {
		return errors.New("list failed")
	}
	return nil
}

// settled runs settleLists in the background and reports whether it returned within a
// minute (a window of an hour never ends in a test).
func settled(ctx context.Context, last *assessment, notify chan struct{}, window time.Duration) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		settleLists(ctx, last, notify, window)
	}()
	select {
	case <-done:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// lastNotification notifies without waiting: settleLists may have seen the last change and
// ended already, as it should.
func lastNotification(notify chan struct{}) {
	select {
	case notify <- struct{}{}:
	default:
	}
}

// TestSettleLists: a notification while first lists are on their way waits for the last of
// them or a failed one, never for the window; with none on its way, or a verdict settled, it
// does not wait at all.
func TestSettleLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// then happens to the two lists the last assessment waited for, each change
		// followed by a notification; nil: nothing happens.
		then    func(a, b *settleList, notify chan struct{})
		already bool // both lists arrived before the notification
		fatal   bool // the last assessment had settled the verdict
	}{
		{name: "nothing on its way", already: true},
		{name: "a verdict settled", fatal: true},
		{
			name: "the last list arrives",
			then: func(a, b *settleList, notify chan struct{}) {
				notify <- struct{}{} // taken once settleLists waits
				a.arrived.Store(true)
				notify <- struct{}{} // taken: b is still on its way
				b.arrived.Store(true)
				lastNotification(notify)
			},
		},
		{
			name: "a list fails",
			then: func(a, b *settleList, notify chan struct{}) {
				notify <- struct{}{} // taken once settleLists waits
				a.arrived.Store(true)
				b.failed.Store(true)
				lastNotification(notify)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := &settleList{}, &settleList{}
			a.arrived.Store(tt.already)
			b.arrived.Store(tt.already)
			last := &assessment{inFlight: []cachedList{a, b}, listing: true}
			if tt.fatal {
				last.fatal = &verdictReason{}
			}
			notify := make(chan struct{}) // unbuffered: a send waits for settleLists to take it
			thenDone := make(chan struct{})
			go func() {
				defer close(thenDone)
				if tt.then != nil {
					tt.then(a, b, notify)
				}
			}()
			if !settled(context.Background(), last, notify, time.Hour) {
				t.Fatal("settleLists waited for its window")
			}
			// Every notification before the last was taken: settleLists waited while a
			// list was on its way.
			select {
			case <-thenDone:
			case <-time.After(time.Minute):
				t.Error("settleLists ended while a list was on its way")
			}
		})
	}
}

// TestSettleListsWindow: a list that never comes is waited for the window alone.
func TestSettleListsWindow(t *testing.T) {
	t.Parallel()
	a, b := &settleList{}, &settleList{}
	last := &assessment{inFlight: []cachedList{a, b}, listing: true}
	notify := make(chan struct{})
	go func() {
		a.arrived.Store(true)
		notify <- struct{}{}
	}()
	start := time.Now()
	if !settled(context.Background(), last, notify, 20*time.Millisecond) {
		t.Fatal("settleLists did not end with its window")
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Errorf("settleLists ended after %s, before its window", took)
	}
}

// TestSettleListsEndsWithContext: a cancelled run does not wait for the window.
func TestSettleListsEndsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	last := &assessment{inFlight: []cachedList{&settleList{}}, listing: true}
	if !settled(ctx, last, make(chan struct{}), time.Hour) {
		t.Error("settleLists waited for its window after the run was cancelled")
	}
}
