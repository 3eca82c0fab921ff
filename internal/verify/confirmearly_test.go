package verify

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// rolling is Deployment d half rolled out: InProgress, not failed.
func rolling(d map[string]any) map[string]any {
	d["status"] = map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(1),
		"readyReplicas": int64(1), "availableReplicas": int64(1),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
			map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
		}}
	return d
}

// rollingCluster is a fake cluster whose app's Kustomization applied the revision (its status
// written after every watch's first list) while its Deployment still rolls out, and the state
// that verifies it; rolledOut is the Deployment's status once rolled out.
func rollingCluster(t *testing.T, opts fakeapi.Options) (s *fakeapi.Server, state *clusterState, objects []map[string]any, rolledOut any) {
	t.Helper()
	var resources []fakeapi.Resource
	resources, objects = consistentApp()
	rolledOut = appObject(t, objects, "app-000")["status"]
	for i, o := range objects {
		if md, _ := o["metadata"].(map[string]any); md["name"] == "app-000" {
			objects[i] = rolling(appObject(t, objects, "app-000"))
		}
	}
	opts.Resources = resources
	s, state = clusterWithLaterStatus(t, opts, objects)
	return s, state, objects, rolledOut
}

// TestConfirmedBeforeTheLastChange: while the app's Deployment still rolls out after its
// Kustomization applied the revision, the watches that stay unconfirmed and unchanged from one
// pass to the next (its Service and ConfigMap, and here its Deployment too) are confirmed
// then, once each, so the pass that sees the Deployment turn Current decides Current without
// another read: the verdict costs no round trip after the last change.
func TestConfirmedBeforeTheLastChange(t *testing.T) {
	t.Parallel()
	var count readCounter
	s, state, objects, rolledOut := rollingCluster(t, fakeapi.Options{BeforeList: count.beforeList, BeforeGet: count.beforeGet})
	count.armed.Store(1)
	reads := func() int64 { return count.gets.Load() + count.lists.Load() }

	var c confirmations
	now := time.Now()
	for pass, want := range []string{"none: first seen", "the quiet watches", "none: read already"} {
		e := state.consistently(t.Context(), state.assess(now), now, &c)
		if e.Fatal != nil || e.Pending == nil || e.Pending.Reason == "Confirming" {
			t.Fatalf("pass %d, while the Deployment rolls out: fatal %+v, pending %+v, want waiting on the rollout", pass, e.Fatal, e.Pending)
		}
		if got := reads(); (got != 0) != (pass == 1) {
			t.Fatalf("pass %d, while the Deployment rolls out: %d reads, want %s", pass, got, want)
		}
		count.gets.Store(0)
		count.lists.Store(0)
		now = now.Add(time.Millisecond)
	}

	// The Deployment turns Current, and its watch delivers the change.
	d := appObject(t, objects, "app-000")
	d["status"] = rolledOut
	d["metadata"].(map[string]any)["resourceVersion"] = s.Set(d)
	deliver(t, state, appDeployments, d)
	if e := state.consistently(t.Context(), state.assess(now), now, &c); !e.Current() {
		t.Fatalf("after the last change: fatal %+v, pending %+v, want Current", e.Fatal, e.Pending)
	}
	if gets, lists := count.gets.Load(), count.lists.Load(); gets+lists != 0 {
		t.Errorf("the verdict after the last change made %d reads of one object and %d lists, want none", gets, lists)
	}
}

// TestNoEarlyReadOfAChangingWatch: a watch that takes in a change between two passes (a kind
// that rolls out, or a stream still behind the owner's status) is not read early; it is read
// once it stays unchanged from one pass to the next.
func TestNoEarlyReadOfAChangingWatch(t *testing.T) {
	t.Parallel()
	var deploymentReads atomic.Int64
	count := func(plural string) {
		if plural == "deployments" {
			deploymentReads.Add(1)
		}
	}
	s, state, objects, _ := rollingCluster(t, fakeapi.Options{BeforeList: func(plural, _ string) { count(plural) },
		BeforeGet: func(plural, _, _ string) { count(plural) }})
	// The server's Deployment has moved on from every state its watch takes in below.
	moved := appObject(t, objects, "app-000")
	moved["metadata"].(map[string]any)["labels"] = map[string]any{"moved": "yes"}
	s.Set(moved)
	deploymentReads.Store(0) // (the ones before: the setup's)
	var c confirmations
	now := time.Now()
	for pass := range 4 {
		// An event from before the owner's status: the watch changes, and is still behind.
		d := appObject(t, objects, "app-000")
		d["metadata"].(map[string]any)["annotations"] = map[string]any{"pass": fmt.Sprint(pass)}
		deliver(t, state, appDeployments, d)
		state.consistently(t.Context(), state.assess(now), now, &c)
		now = now.Add(time.Millisecond)
	}
	if n := deploymentReads.Load(); n != 0 {
		t.Fatalf("a watch that changed at every pass was read %d times early, want none", n)
	}
	state.consistently(t.Context(), state.assess(now), now, &c)
	read := deploymentReads.Load()
	if read == 0 {
		t.Fatalf("the watch unchanged since the last pass was not read early")
	}
	// Still behind after its read, it changes again, then stays quiet: read once in the run.
	d := appObject(t, objects, "app-000")
	d["metadata"].(map[string]any)["annotations"] = map[string]any{"pass": "last"}
	deliver(t, state, appDeployments, d)
	for range 3 {
		now = now.Add(time.Millisecond)
		state.consistently(t.Context(), state.assess(now), now, &c)
	}
	if n := deploymentReads.Load() - read; n != 0 {
		t.Errorf("the watch read early once was read %d times more", n)
	}
}

// TestEarlyReadsGiveUp: early reads that the server does not answer within earlyReadTimeout,
// answers slowly (earlyReadSlow), or that find resourceVersions that are no numbers, hold the
// pass at most that long, once: no early read is made again in the run, and the verdict is
// confirmed once the view is Current, as without them.
func TestEarlyReadsGiveUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		hang   bool
		slow   time.Duration
		opaque bool
	}{
		{name: "a server that does not answer them", hang: true},
		{name: "a server slow to answer them", slow: earlyReadSlow + 50*time.Millisecond},
		{name: "resourceVersions that are no numbers", opaque: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var hung atomic.Bool
			release := make(chan struct{})
			var count readCounter
			var slow atomic.Int64
			block := func() {
				if hung.Load() {
					<-release
				}
				time.Sleep(time.Duration(slow.Load()))
			}
			_, state, _, _ := rollingCluster(t, fakeapi.Options{
				BeforeList: func(plural, ns string) { count.beforeList(plural, ns); block() },
				BeforeGet:  func(plural, ns, name string) { count.beforeGet(plural, ns, name); block() }})
			t.Cleanup(func() { close(release) }) // (before the server's Close, which waits for its handlers)
			if tt.opaque {
				state.metadataClient = opaqueMeta{state.metadataClient}
			}
			hung.Store(tt.hang)
			slow.Store(int64(tt.slow))
			count.armed.Store(1)
			var c confirmations
			now := time.Now()
			for pass := range 5 {
				start := time.Now()
				e := state.consistently(t.Context(), state.assess(now), now, &c)
				if took := time.Since(start); took > earlyReadTimeout+time.Second {
					t.Fatalf("pass %d took %s, want at most earlyReadTimeout (%s)", pass, took, earlyReadTimeout)
				}
				if e.Fatal != nil || e.Pending == nil {
					t.Fatalf("pass %d: fatal %+v, pending %+v, want waiting on the rollout", pass, e.Fatal, e.Pending)
				}
				if pass == 1 && count.gets.Load()+count.lists.Load() == 0 {
					t.Fatalf("pass 1 made no early read: the test proves nothing")
				}
				// A change elsewhere makes the next pass, as the rollout's events do.
				touch(t, state)
				now = now.Add(time.Millisecond)
			}
			if !c.earlyOff {
				t.Errorf("early reads still on after they failed")
			}
			if gets, lists := count.gets.Load(), count.lists.Load(); gets+lists > 3 {
				t.Errorf("%d reads of one object and %d lists in 5 passes: early reads were tried again", gets, lists)
			}
		})
	}
}

// touch delivers an unchanged copy of the app's Kustomization to its watch: a pass, and no
// change of what the rule compares.
func touch(t *testing.T, state *clusterState) {
	t.Helper()
	l, _ := state.watches.peek(assess.ListKey{GVR: ksGVR, Namespace: "flux-system"})
	cached, _, _ := l.(*watch).store.GetByKey("flux-system/app")
	if err := l.(*watch).store.Update(cached); err != nil {
		t.Fatal(err)
	}
}

// TestNoEarlyReadNearTheEnd: with less than two earlyReadTimeouts left in the run, no early
// read is made: the run's last moments are for judging the changes that come.
func TestNoEarlyReadNearTheEnd(t *testing.T) {
	t.Parallel()
	var count readCounter
	_, state, _, _ := rollingCluster(t, fakeapi.Options{BeforeList: count.beforeList, BeforeGet: count.beforeGet})
	count.armed.Store(1)
	ctx, cancel := context.WithTimeout(t.Context(), earlyReadTimeout+earlyReadTimeout/2)
	defer cancel()
	var c confirmations
	now := time.Now()
	for range 3 {
		state.consistently(ctx, state.assess(now), now, &c)
		now = now.Add(time.Millisecond)
	}
	if gets, lists := count.gets.Load(), count.lists.Load(); gets+lists != 0 {
		t.Errorf("%d reads of one object and %d lists with %s left in the run, want none", gets, lists, earlyReadTimeout+earlyReadTimeout/2)
	}
}
