package verify

import (
	"context"
	"testing"
	"time"
)

// TestConnectSlots: at most n clusters hold a slot; a waiting cluster gets the first one given
// back, or gives up when its context ends, taking none; giving a slot back twice frees it once.
func TestConnectSlots(t *testing.T) {
	t.Parallel()
	const n = 3
	s := newConnectSlots(n)
	releases := make([]func(), 0, n)
	for i := range n {
		if !s.tryAcquire() {
			t.Fatalf("tryAcquire() number %d of %d = false, want true", i+1, n)
		}
		releases = append(releases, s.releaser())
	}
	if s.tryAcquire() {
		t.Fatalf("tryAcquire() with all %d slots taken = true, want false", n)
	}

	// A wait that ends with its context takes no slot.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if s.acquire(ctx) {
		t.Fatal("acquire() with all slots taken until the context ended = true, want false")
	}
	cancelled, cancelNow := context.WithCancel(t.Context())
	cancelNow()
	if s.acquire(cancelled) {
		t.Fatal("acquire() with a cancelled context and no free slot = true, want false")
	}

	// A waiting cluster gets the slot given back.
	got := make(chan bool, 1)
	go func() { got <- s.acquire(t.Context()) }()
	select {
	case ok := <-got:
		t.Fatalf("acquire() = %t before any slot was given back, want it to wait", ok)
	case <-time.After(20 * time.Millisecond):
	}
	releases[0]()
	releases[0]() // once only
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("acquire() = false after a slot was given back, want true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acquire() still waiting 10s after a slot was given back")
	}
	if s.tryAcquire() {
		t.Fatal("tryAcquire() = true after one slot was given back twice and taken by the waiter, want false")
	}

	// The other slots come back one each.
	releases[1]()
	releases[2]()
	for i := range 2 {
		if !s.tryAcquire() {
			t.Fatalf("tryAcquire() number %d after two slots came back = false, want true", i+1)
		}
	}
	if s.tryAcquire() {
		t.Fatal("tryAcquire() = true with every slot taken again, want false")
	}
}

// TestRequestSlots: at most n reconcile requests at once; a request whose context has ended
// takes no slot.
func TestRequestSlots(t *testing.T) {
	t.Parallel()
	s := newRequestSlots(2)
	for i := range 2 {
		if err := s.Acquire(t.Context(), 1); err != nil {
			t.Fatalf("Acquire() number %d of 2: %v", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := s.Acquire(ctx, 1); err == nil {
		t.Fatal("Acquire() with both slots taken succeeded, want the context's error")
	}
	s.Release(1)
	if !s.TryAcquire(1) {
		t.Fatal("TryAcquire() after one slot came back = false, want true")
	}
}
