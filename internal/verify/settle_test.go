package verify

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/org/app-status-action/internal/assess"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// settleList is an assess.List whose first list arrives or fails when the test says; it holds
// nothing.
type settleList struct {
	assess.List // (what is not defined below is never called)
	arrived     atomic.Bool
	failed      atomic.Bool
	listErr     error // how it fails from the start
}

func (l *settleList) WaitingSince() time.Time { return fixtureNow }

func (l *settleList) Synced() bool { return l.arrived.Load() }

func (l *settleList) Err() error {
	if l.listErr != nil {
		return l.listErr
	}
	if l.failed.Load() {
		return errors.New("list failed")
	}
	return nil
}

func (l *settleList) Read() assess.ReadFacts {
	if err := l.Err(); err != nil {
		return assess.ReadFacts{Failure: readFailure(err)}
	}
	return assess.ReadFacts{}
}

// poke notifies as a cluster's watches do: without waiting, into a buffer of one.
func poke(notify chan struct{}) {
	select {
	case notify <- struct{}{}:
	default:
	}
}

// settling runs settleLists in the background; its result arrives on the channel.
func settling(ctx context.Context, last *assess.Assessment, notify chan struct{}, window time.Duration) <-chan bool {
	done := make(chan bool, 1)
	go func() { done <- settleLists(ctx, last, notify, window) }()
	return done
}

// ends waits up to a minute for settleLists' result (its windows here are an hour).
func ends(t *testing.T, done <-chan bool) (running bool) {
	t.Helper()
	select {
	case running = <-done:
		return running
	case <-time.After(time.Minute):
		t.Fatal("settleLists did not end")
		return false
	}
}

// stillWaiting fails t if settleLists ends within 50ms. (A build that ends too early on a
// slow machine may slip through; a correct one never fails.)
func stillWaiting(t *testing.T, done <-chan bool, why string) {
	t.Helper()
	select {
	case <-done:
		t.Fatalf("settleLists ended while %s", why)
	case <-time.After(50 * time.Millisecond):
	}
}

func newSettle(arrived bool) (a, b *settleList, last *assess.Assessment, notify chan struct{}) {
	a, b = &settleList{}, &settleList{}
	a.arrived.Store(arrived)
	b.arrived.Store(arrived)
	return a, b, &assess.Assessment{InFlight: []assess.List{a, b}, Listing: true}, make(chan struct{}, 1)
}

// TestSettleListsNothingToWaitFor: with no list on its way, or a verdict settled, a
// notification does not wait.
func TestSettleListsNothingToWaitFor(t *testing.T) {
	t.Parallel()
	_, _, arrived, notify := newSettle(true)
	if !ends(t, settling(context.Background(), arrived, notify, time.Hour)) {
		t.Error("settleLists said the run had ended")
	}
	_, _, fatal, notify := newSettle(false)
	fatal.Fatal = &verdictReason{}
	if !ends(t, settling(context.Background(), fatal, notify, time.Hour)) {
		t.Error("settleLists said the run had ended")
	}
	if !ends(t, settling(context.Background(), nil, notify, time.Hour)) {
		t.Error("settleLists said the run had ended")
	}
}

// TestSettleListsLastArrives: the wait goes on while a list is on its way, and ends when the
// last one arrives, not at the window's end.
func TestSettleListsLastArrives(t *testing.T) {
	t.Parallel()
	a, b, last, notify := newSettle(false)
	done := settling(context.Background(), last, notify, time.Hour)
	stillWaiting(t, done, "both lists were on their way")
	a.arrived.Store(true)
	poke(notify)
	stillWaiting(t, done, "one list was on its way")
	b.arrived.Store(true)
	poke(notify)
	if !ends(t, done) {
		t.Error("settleLists said the run had ended")
	}
}

// TestSettleListsListFails: a list that fails ends the wait, even while another is on its
// way: its error (a 401 or 403 settles the verdict) is for the next assessment to say.
func TestSettleListsListFails(t *testing.T) {
	t.Parallel()
	a, _, last, notify := newSettle(false)
	done := settling(context.Background(), last, notify, time.Hour)
	stillWaiting(t, done, "both lists were on their way")
	a.failed.Store(true)
	poke(notify)
	if !ends(t, done) {
		t.Error("settleLists said the run had ended")
	}
}

// TestSettleListsWindow: a list that never comes is waited for the window alone.
func TestSettleListsWindow(t *testing.T) {
	t.Parallel()
	a, _, last, notify := newSettle(false)
	a.arrived.Store(true)
	poke(notify)
	start := time.Now()
	if !ends(t, settling(context.Background(), last, notify, 20*time.Millisecond)) {
		t.Error("settleLists said the run had ended")
	}
	if took := time.Since(start); took < 20*time.Millisecond {
		t.Errorf("settleLists ended after %s, before its window", took)
	}
}

// TestSettleListsEndsWithTheRun: a run that ends ends the wait, and settleLists says so, so
// that the cluster's loop reports the last assessment rather than making another.
func TestSettleListsEndsWithTheRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	_, _, last, notify := newSettle(false)
	done := settling(ctx, last, notify, time.Hour)
	stillWaiting(t, done, "both lists were on their way")
	cancel()
	if ends(t, done) {
		t.Error("settleLists did not say the run had ended")
	}
	// Ended before: it says so at once, whatever is on its way.
	_, _, arrived, notify := newSettle(true)
	if ends(t, settling(ctx, arrived, notify, time.Hour)) {
		t.Error("settleLists did not say the run had ended")
	}
}

// pendingCache is a cluster's caches where the lists of some kinds have not arrived yet.
type pendingCache struct {
	objectCache
	pending map[schema.GroupVersionResource]bool
	failing map[schema.GroupVersionResource]error // lists that fail with this error
	lists   map[assess.ListKey]assess.List
}

func (p *pendingCache) get(key assess.ListKey) assess.List {
	if !p.pending[key.GVR] && p.failing[key.GVR] == nil {
		return p.objectCache.get(key)
	}
	if l, ok := p.lists[key]; ok {
		return l
	}
	l := &settleList{listErr: p.failing[key.GVR]}
	p.lists[key] = l
	return l
}

func (p *pendingCache) peek(key assess.ListKey) (assess.List, bool) {
	if !p.pending[key.GVR] && p.failing[key.GVR] == nil {
		return p.objectCache.peek(key)
	}
	l, ok := p.lists[key]
	return l, ok
}

// TestAssessListsOnTheirWay: what a notification may wait for is the first lists of the
// inventory's kinds, never the classifier's (a workload that turns Current while its pods are
// being listed is Current at once).
func TestAssessListsOnTheirWay(t *testing.T) {
	t.Parallel()
	withSecret := func(ks string) string {
		return strings.Replace(ks, "    - {id: shop_web__Service, v: v1}\n", "    - {id: shop_web__Service, v: v1}\n    - {id: shop_creds__Secret, v: v1}\n", 1)
	}
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}"
	forbidden := apierrors.NewForbidden(secretGVR.GroupResource(), "", errors.New("no RBAC"))
	failing := apierrors.NewInternalError(errors.New("etcd is down"))
	tests := []struct {
		name    string
		ks      func(string) string // the Kustomization's document, changed
		docs    string
		pending []schema.GroupVersionResource
		failing map[schema.GroupVersionResource]error
		want    []schema.GroupVersionResource // the kinds in inFlight
	}{
		{name: "an inventory's kind", docs: deploymentCurrent + "\n---\n" + service, pending: []schema.GroupVersionResource{deployGVR}, want: []schema.GroupVersionResource{deployGVR}},
		{name: "two of them", docs: deploymentCurrent + "\n---\n" + service, pending: []schema.GroupVersionResource{deployGVR, svcGVR}, want: []schema.GroupVersionResource{deployGVR, svcGVR}},
		{name: "a kind without readiness", ks: withSecret, docs: deploymentCurrent + "\n---\n" + service + "\n---\n" + secret, pending: []schema.GroupVersionResource{secretGVR}, want: []schema.GroupVersionResource{secretGVR}},
		{name: "a kind without readiness, forbidden", ks: withSecret, docs: deploymentCurrent + "\n---\n" + service, failing: map[schema.GroupVersionResource]error{secretGVR: forbidden}},
		{name: "a kind whose list fails", docs: service, failing: map[schema.GroupVersionResource]error{deployGVR: failing}},
		{name: "the classifier's lists", docs: deploymentPulling + "\n---\n" + service, pending: []schema.GroupVersionResource{assess.RSGVR}},
		{name: "the Flux object's own list", docs: deploymentCurrent + "\n---\n" + service, pending: []schema.GroupVersionResource{ksGVR}},
		{name: "nothing on its way", docs: deploymentCurrent + "\n---\n" + service},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ks := kustomization(readyOnB)
			if tt.ks != nil {
				ks = tt.ks(ks)
			}
			s := newFakeState(t, revB, ks+"\n---\n"+tt.docs)
			p := &pendingCache{objectCache: s.watches, pending: map[schema.GroupVersionResource]bool{}, failing: tt.failing, lists: map[assess.ListKey]assess.List{}}
			for _, gvr := range tt.pending {
				p.pending[gvr] = true
			}
			s.watches = p
			e := s.assess(fixtureNow)
			var got []schema.GroupVersionResource
			for key, l := range p.lists {
				if slices.Contains(e.InFlight, l) {
					got = append(got, key.GVR)
				}
			}
			if len(e.InFlight) != len(got) {
				t.Errorf("inFlight holds %d lists, %d of them this cluster's", len(e.InFlight), len(got))
			}
			sortGVRs := func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) }
			slices.SortFunc(got, sortGVRs)
			want := slices.Clone(tt.want)
			slices.SortFunc(want, sortGVRs)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("kinds whose lists a notification may wait for (-want +got):\n%s", diff)
			}
			if len(tt.pending) > 0 && !e.Listing {
				t.Error("the assessment does not say a first list is on its way")
			}
			if len(p.lists) != len(tt.pending)+len(tt.failing) {
				t.Errorf("the assessment read %d of the %d lists the test holds back", len(p.lists), len(tt.pending)+len(tt.failing))
			}
		})
	}
}

// TestSettleWindow: a notification waits at most the window, and never into the run's last
// window before its deadline.
func TestSettleWindow(t *testing.T) {
	t.Parallel()
	now := fixtureNow
	tests := []struct {
		name       string
		deadline   time.Duration // from now; 0: none
		want       time.Duration
		wantNoWait bool
	}{
		{name: "no deadline", want: listSettle},
		{name: "far from the deadline", deadline: time.Minute, want: listSettle},
		{name: "the window just fits", deadline: 2 * listSettle, want: listSettle},
		{name: "a shorter wait", deadline: listSettle + 30*time.Millisecond, want: 30 * time.Millisecond},
		{name: "in the run's last window", deadline: listSettle - time.Millisecond, wantNoWait: true},
		{name: "past the deadline", deadline: -time.Second, wantNoWait: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := settleWindow(listSettle, now.Add(tt.deadline), tt.deadline != 0, now)
			switch {
			case tt.wantNoWait && got > 0:
				t.Errorf("settleWindow = %s, want no wait", got)
			case !tt.wantNoWait && got != tt.want:
				t.Errorf("settleWindow = %s, want %s", got, tt.want)
			}
		})
	}
}
