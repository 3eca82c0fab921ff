package verify

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// warningEvent is a Warning event about the fake app's Deployment app-000.
func warningEvent(reason string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": "app-000." + reason, "namespace": "app"},
		"involvedObject": map[string]any{"kind": "Deployment", "namespace": "app", "name": "app-000"},
		"type":           "Warning", "reason": reason, "message": "the rollout stopped", "count": int64(1)}
}

// withEvents adds Events, with one Warning event about app-000, to a fake app.
func withEvents(resources []fakeapi.Resource, objects []map[string]any) ([]fakeapi.Resource, []map[string]any) {
	return append(resources, fakeapi.Resource{Version: "v1", Kind: "Event", Plural: "events", Namespaced: true}),
		append(objects, warningEvent("ProgressDeadlineExceeded"))
}

// failureOf is the failure of the object named name among objects, nil if none.
func failureOf(objects []result.Object, name string) *result.Failure {
	i := slices.IndexFunc(objects, func(o result.Object) bool { return o.Name == name && o.Failure != nil })
	if i < 0 {
		return nil
	}
	return objects[i].Failure
}

// TestEvidenceReadBesideTheFailureLists: a failure seen on watches behind the Kustomization's
// status has its evidence read while its lists are read again, all on their way at once, so
// the verdict that confirms it makes no request after the lists: one round trip from the
// failing state to the verdict, not two.
func TestEvidenceReadBesideTheFailureLists(t *testing.T) {
	t.Parallel()
	resources, objects := withEvents(stuckAppWithItsPods(t))
	barrier := newListBarrier(0)
	var eventLists atomic.Int64 // (the evidence's reads; the watches may make requests of their own)
	_, state := clusterWithLaterStatus(t, fakeapi.Options{Resources: resources, BeforeList: func(plural, namespace string) {
		if plural == "events" {
			eventLists.Add(1)
		}
		barrier.beforeList(plural, namespace)
	}}, objects)
	now := time.Now()
	e := state.assess(now)
	if !failedOn(e) || len(e.Unconfirmed) == 0 || failureOf(e.Objects, "app-000") == nil {
		t.Fatalf("the watches' view: fatal %+v, unconfirmed %v; want app-000 failing on lists to confirm: the test proves nothing", e.Fatal, e.Unconfirmed)
	}
	barrier.want = len(e.Unconfirmed) + 1 // (the lists, and the Deployment's events)
	barrier.arm()
	var c confirmations
	got := state.consistently(t.Context(), e, now, &c)
	if !failedOn(got) || len(got.Unconfirmed) != 0 {
		t.Fatalf("decision: fatal %+v, pending %+v, unconfirmed %v; want Failed on confirmed lists", got.Fatal, got.Pending, got.Unconfirmed)
	}
	read := eventLists.Load()
	state.gatherEvidence(t.Context(), got.Objects)
	if n := eventLists.Load() - read; n != 0 {
		t.Errorf("the verdict's evidence listed events %d times, want none: they were read beside the lists", n)
	}
	if most := barrier.mostAtOnce(); most != barrier.want {
		t.Errorf("reads on their way at once = %d, want %d: the lists (%v) and the events", most, barrier.want, keyNames(e.Unconfirmed))
	}
	f := failureOf(got.Objects, "app-000")
	if f == nil || len(f.Events) != 1 || f.Events[0].Reason != "ProgressDeadlineExceeded" || f.EventsError != "" {
		t.Errorf("failure %+v, want the Deployment's Warning event as its evidence", f)
	}
}

// TestEvidenceAheadOnlyForTheSameReads: evidence read ahead stands for the verdict's only
// where the verdict's failure asks for the same reads (object, pod, container, code); any
// other is read anew, and evidence read ahead for a failure no pass concluded is not used.
func TestEvidenceAheadOnlyForTheSameReads(t *testing.T) {
	t.Parallel()
	failing := func(pod string, code result.Code) []result.Object {
		return []result.Object{{Kind: "Deployment", Namespace: "app", Name: "app-000",
			Failure: &result.Failure{Code: code, Pod: pod}}}
	}
	tests := []struct {
		name     string
		verdict  []result.Object
		dropped  bool // the loop dropped the read ahead (a pass that concluded no failure)
		wantRead bool
	}{
		{name: "the same failure", verdict: failing("app-000-abc", result.CodeImagePull)},
		{name: "another pod", verdict: failing("app-000-def", result.CodeImagePull), wantRead: true},
		{name: "another code", verdict: failing("app-000-abc", result.CodeQuota), wantRead: true},
		{name: "dropped", verdict: failing("app-000-abc", result.CodeImagePull), dropped: true, wantRead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := withEvents(consistentApp())
			s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
			t.Cleanup(s.Close)
			state := consistentState(t, s, false)
			state.readEvidenceAhead(t.Context(), failing("app-000-abc", result.CodeImagePull))
			for _, read := range state.ahead.reads {
				<-read.done
			}
			if tt.dropped {
				state.dropEvidenceAhead()
			}
			requests := s.Requests()
			state.gatherEvidence(t.Context(), tt.verdict)
			if read := s.Requests() > requests; read != tt.wantRead {
				t.Errorf("evidence read anew = %v, want %v", read, tt.wantRead)
			}
			if f := tt.verdict[0].Failure; len(f.Events) == 0 || f.EventsError != "" {
				t.Errorf("failure %+v, want its Warning events", f)
			}
			if state.ahead != nil {
				t.Error("the read ahead is still held after the verdict's evidence")
			}
		})
	}
}

// TestEvidenceAheadOfAnotherObjectHoldsNoVerdict: the verdict waits for the reads ahead of its
// own failing objects only: one the confirmation no longer fails, whose reads do not answer
// (a log through a node that is down), does not hold it until the evidence's timeout.
func TestEvidenceAheadOfAnotherObjectHoldsNoVerdict(t *testing.T) {
	t.Parallel()
	resources, objects := withEvents(consistentApp())
	release := make(chan struct{})
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: func(_, namespace string) {
		if namespace == "down" {
			<-release
		}
	}})
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // (before the server closes)
	state := consistentState(t, s, false)
	object := func(namespace string) result.Object {
		return result.Object{Kind: "Deployment", Namespace: namespace, Name: "app-000",
			Failure: &result.Failure{Code: result.CodeImagePull, Pod: "app-000-abc"}}
	}
	state.readEvidenceAhead(t.Context(), []result.Object{object("down"), object("app")})
	verdict := []result.Object{object("app")}
	gathered := make(chan struct{})
	go func() {
		defer close(gathered)
		state.gatherEvidence(t.Context(), verdict)
	}()
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		t.Fatal("the verdict's evidence waited for the reads ahead of an object it does not fail")
	}
	if f := verdict[0].Failure; len(f.Events) == 0 || f.EventsError != "" {
		t.Errorf("failure %+v, want its Warning events", f)
	}
}

// TestEvidenceReadAheadOncePerFailure: the same failures are read ahead once in a row: a
// confirmation that did not confirm them, or a verdict that held them, has them read after the
// verdict that stands, not again at each confirmation. Other failures are read ahead, and the
// same once a pass failed nothing (a pod that recovered, then failed again).
func TestEvidenceReadAheadOncePerFailure(t *testing.T) {
	t.Parallel()
	resources, objects := withEvents(consistentApp())
	var eventLists atomic.Int64
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, BeforeList: func(plural, _ string) {
		if plural == "events" {
			eventLists.Add(1)
		}
	}})
	t.Cleanup(s.Close)
	state := consistentState(t, s, false)
	failing := func(pod string) []result.Object {
		return []result.Object{{Kind: "Deployment", Namespace: "app", Name: "app-000",
			Failure: &result.Failure{Code: result.CodeImagePull, Pod: pod}}}
	}
	for _, step := range []struct {
		pod  string
		want int64 // event lists read ahead
		// healed: a pass that fails nothing comes first.
		healed bool
	}{
		{pod: "app-000-abc", want: 2}, // (the pod's and the Deployment's)
		{pod: "app-000-abc", want: 0},
		{pod: "app-000-abc", want: 0},
		{pod: "app-000-def", want: 2},
		{pod: "app-000-abc", want: 2},
		{pod: "app-000-abc", want: 2, healed: true},
		{pod: "app-000-abc", want: 0},
	} {
		if step.healed {
			var c confirmations
			state.consistently(t.Context(), &assess.Assessment{}, time.Now(), &c)
		}
		before := eventLists.Load()
		state.readEvidenceAhead(t.Context(), failing(step.pod))
		if state.ahead != nil {
			for _, read := range state.ahead.reads {
				<-read.done
			}
		}
		state.dropEvidenceAhead() // (as the loop does after a pass that concluded no failure)
		if got := eventLists.Load() - before; got != step.want {
			t.Errorf("pod %s: %d event lists read ahead, want %d", step.pod, got, step.want)
		}
	}
}

// TestThrottlingAheadNotRecorded: a 429 answered to the evidence read ahead, before any
// verdict rests on it, is not recorded as the app's throttling; one answered to the verdict's
// own evidence is, as before.
func TestThrottlingAheadNotRecorded(t *testing.T) {
	t.Parallel()
	// (No Retry-After: client-go does not retry.)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		name  string
		ahead bool
		want  bool
	}{
		{name: "the verdict's evidence", want: true},
		{name: "evidence read ahead", ahead: true, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recorder := &throttleRecorder{clock: time.Now}
			cfg := &rest.Config{Host: srv.URL}
			cfg.Wrap(recorder.wrap)
			clients, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			state := &clusterState{core: clients.CoreV1(), throttled: recorder}
			failing := []result.Object{{Kind: "Deployment", Namespace: "app", Name: "app-000",
				Failure: &result.Failure{Code: result.CodeImagePull, Pod: "app-000-abc"}}}
			if tt.ahead {
				state.readEvidenceAhead(t.Context(), failing)
				ahead := state.takeEvidenceAhead()
				<-ahead.reads[0].done
				if f := ahead.reads[0].object.Failure; f.EventsError == "" {
					t.Fatalf("the read ahead: %+v, want the server's refusal: the test proves nothing", f)
				}
				ahead.stop()
			} else {
				state.gatherEvidence(t.Context(), failing)
			}
			if _, got := recorder.recent(); got != tt.want {
				t.Errorf("throttling recorded = %v, want %v", got, tt.want)
			}
		})
	}
}
