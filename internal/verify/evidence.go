package verify

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/org/app-status-action/internal/result"
)

// Evidence bounds: a failing cluster costs at most maxEvidenceObjects × 5 API calls: three
// event lists and a log, on their way at once, and the current container's log where the
// previous one's is gone.
const (
	maxEvidenceObjects = 5
	maxEvents          = 5
	logTailLines       = 20
	maxLogBytes        = 8 << 10
)

// gatherEvidence adds to each failing object (the first few) the latest Warning events of its
// pod and of the workload, and the last lines of the failing container's log. Healthy objects
// cost nothing. Every read goes out at once: the evidence costs one round trip, or none where
// it was read beside the lists that confirmed the failure (readEvidenceAhead).
func (s *clusterState) gatherEvidence(ctx context.Context, objects []result.Object) {
	ahead := s.takeEvidenceAhead()
	defer ahead.stop()
	// Bounded, and stopped by the run's end like everything else (a cancelled job).
	ctx, cancel := context.WithTimeout(ctx, evidenceTimeout)
	defer cancel()
	var g errgroup.Group
	for _, o := range withEvidence(objects) {
		g.Go(func() error {
			if read, ok := ahead.of(ctx, o); ok {
				copyEvidence(o.Failure, read)
				return nil
			}
			s.evidenceOf(ctx, o)
			return nil
		})
	}
	_ = g.Wait() // (each object keeps its own errors)
}

// evidenceTimeout bounds the reads of a failure's evidence.
const evidenceTimeout = 15 * time.Second

// withEvidence are the failing objects of objects whose evidence is read: the first
// maxEvidenceObjects.
func withEvidence(objects []result.Object) []result.Object {
	var failing []result.Object
	for _, o := range objects {
		if o.Failure != nil && len(failing) < maxEvidenceObjects {
			failing = append(failing, o)
		}
	}
	return failing
}

// copyEvidence gives f the evidence read into from.
func copyEvidence(f, from *result.Failure) {
	f.Events, f.EventsError, f.Logs, f.LogsError = from.Events, from.EventsError, from.Logs, from.LogsError
}

// evidenceAhead is the evidence of a failure seen on the watches, read while the lists the
// failure rests on are read again (consistently), in the same round trip: when the read
// confirms the failure, its evidence is there, and the verdict comes one round trip after the
// failing state, not two. A confirmation that does not confirm the failure drops it
// (dropEvidenceAhead): what it read was only a few requests, and no verdict rests on it.
type evidenceAhead struct {
	reads  []*readAhead
	cancel context.CancelFunc
}

// readAhead is one failing object's evidence read ahead: a copy of the object, its failure's
// evidence filled in once done is closed.
type readAhead struct {
	object result.Object
	done   chan struct{}
}

// readEvidenceAhead starts reading the evidence of the failures of objects, the watches' view,
// for the next gatherEvidence, in place of any read before; not for the failures the last read
// ahead was of, while no pass failed nothing since (consistently): a confirmation that did not
// confirm them, or a verdict that held them (the run's own reconcile request), would only have
// them read again at each confirmation, to be dropped, and their verdict reads them after it,
// as any verdict does.
func (s *clusterState) readEvidenceAhead(ctx context.Context, objects []result.Object) {
	s.dropEvidenceAhead()
	failing := withEvidence(objects)
	keys := make([]evidenceReads, len(failing))
	for i, o := range failing {
		keys[i] = evidenceReadsOf(o)
	}
	if slices.Equal(keys, s.aheadOf) {
		return
	}
	s.aheadOf = keys
	// (Not counted as the app's throttling: a read no verdict rests on yet.)
	ctx, cancel := context.WithTimeout(withoutThrottleRecord(ctx), evidenceTimeout)
	a := &evidenceAhead{cancel: cancel}
	for _, o := range failing {
		f := *o.Failure
		o.Failure = &f
		read := &readAhead{object: o, done: make(chan struct{})}
		a.reads = append(a.reads, read)
		go func() {
			defer close(read.done)
			s.evidenceOf(ctx, read.object)
		}()
	}
	s.ahead = a
}

// takeEvidenceAhead is the evidence read ahead, if any, which the caller now owns (stop).
func (s *clusterState) takeEvidenceAhead() *evidenceAhead {
	a := s.ahead
	s.ahead = nil
	return a
}

// dropEvidenceAhead stops the evidence read ahead, if any: its failure was not the verdict.
func (s *clusterState) dropEvidenceAhead() { s.takeEvidenceAhead().stop() }

// of is the failure, with its evidence, that a read ahead made of an object with o's failure:
// the same object, pod, container, code and Canary, so the same reads. It waits for that
// object's reads (not the others') at most until ctx ends, and then stops them and takes what
// they found.
func (a *evidenceAhead) of(ctx context.Context, o result.Object) (*result.Failure, bool) {
	if a == nil {
		return nil, false
	}
	for _, read := range a.reads {
		if evidenceReadsOf(read.object) != evidenceReadsOf(o) {
			continue
		}
		select {
		case <-read.done:
		case <-ctx.Done():
			a.cancel()
			<-read.done
		}
		return read.object.Failure, true
	}
	return nil, false
}

// stop ends the reads ahead and waits for them to return; a nil a has none.
func (a *evidenceAhead) stop() {
	if a == nil {
		return
	}
	a.cancel()
	for _, read := range a.reads {
		<-read.done
	}
}

// evidenceReads is what decides the reads of a failing object's evidence (evidenceOf).
type evidenceReads struct {
	kind, namespace, name, pod, container, canary string
	code                                          result.Code
}

func evidenceReadsOf(o result.Object) evidenceReads {
	return evidenceReads{kind: o.Kind, namespace: o.Namespace, name: o.Name, pod: o.Failure.Pod,
		container: o.Failure.Container, code: o.Failure.Code, canary: canaryOf(o)}
}

// evidenceOf adds the evidence of the failing object o to its Failure, its reads made at once.
func (s *clusterState) evidenceOf(ctx context.Context, o result.Object) {
	f := o.Failure
	var reads []func() ([]result.Event, error)
	if f.Pod != "" {
		reads = append(reads, func() ([]result.Event, error) { return s.warningEvents(ctx, o.Namespace, "Pod", f.Pod) })
	}
	reads = append(reads, func() ([]result.Event, error) { return s.warningEvents(ctx, o.Namespace, o.Kind, o.Name) })
	if canary := canaryOf(o); canary != "" {
		// Flagger records why the analysis failed on the Canary that judged the workload.
		reads = append(reads, func() ([]result.Event, error) { return s.warningEvents(ctx, o.Namespace, "Canary", canary) })
	}
	if f.Code == result.CodeQuota || f.Code == result.CodeAdmissionDenied {
		// The refusals are recorded on the Deployment's ReplicaSet.
		reads = append(reads, func() ([]result.Event, error) { return s.replicaSetEvents(ctx, o.Namespace, o.Name) })
	}
	type eventsRead struct {
		events []result.Event
		err    error
	}
	got := make([]eventsRead, len(reads))
	var g errgroup.Group
	for i, read := range reads {
		g.Go(func() error {
			got[i].events, got[i].err = read()
			return nil
		})
	}
	readLogs := f.Pod != "" && f.Container != ""
	var logs, logsError string
	if readLogs {
		g.Go(func() error {
			logs, logsError = s.containerLog(ctx, o.Namespace, f.Pod, f.Container, f.Code == result.CodeCrashLoop || f.Code == result.CodeOOM)
			return nil
		})
	}
	_ = g.Wait() // (each read keeps its own error)
	var (
		events   []result.Event
		firstErr error
	)
	for _, r := range got {
		events = append(events, r.events...)
		if firstErr == nil {
			firstErr = r.err
		}
	}
	if firstErr != nil {
		f.EventsError = fmt.Sprintf("cannot list the events of namespace %s: %s", o.Namespace, apiMessage(firstErr))
	}
	f.Events = dedupeEvents(events)
	if len(f.Events) > maxEvents {
		f.Events = f.Events[:maxEvents]
	}
	if readLogs {
		f.Logs, f.LogsError = logs, logsError
	}
}

// warningEvents returns the newest Warning events about one object, newest first, or why they
// could not be listed (credentials without events: list are a note in the evidence).
func (s *clusterState) warningEvents(ctx context.Context, namespace, kind, name string) ([]result.Event, error) {
	set := fields.Set{"involvedObject.kind": kind, "type": corev1.EventTypeWarning}
	if name != "" {
		set["involvedObject.name"] = name
	}
	selector := set.AsSelector().String()
	list, err := s.core.Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return nil, err
	}
	items := list.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]).After(eventTime(items[j])) })
	var out []result.Event
	for _, ev := range items {
		if len(out) == maxEvents {
			break
		}
		count := ev.Count
		if ev.Series != nil && ev.Series.Count > count {
			count = ev.Series.Count
		}
		out = append(out, result.Event{
			Object:  result.ObjectID(ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name),
			Reason:  ev.Reason,
			Message: strings.TrimSpace(ev.Message),
			Count:   max(count, 1),
		})
	}
	return out, nil
}

// replicaSetEvents returns the Warning events of the ReplicaSets a Deployment named name owns
// (their names are the Deployment's name, a dash and a hash).
func (s *clusterState) replicaSetEvents(ctx context.Context, namespace, name string) ([]result.Event, error) {
	var out []result.Event
	events, err := s.warningEvents(ctx, namespace, "ReplicaSet", "")
	for _, ev := range events {
		rs := ev.Object[strings.LastIndex(ev.Object, "/")+1:]
		if strings.HasPrefix(rs, name+"-") && !strings.Contains(strings.TrimPrefix(rs, name+"-"), "-") {
			out = append(out, ev)
		}
	}
	return out, err
}

// dedupeEvents keeps the first of events that say the same thing about the same object (the
// scheduler and the kubelet may record one occurrence twice, as Event and as a series).
func dedupeEvents(events []result.Event) []result.Event {
	seen := map[result.Event]bool{}
	out := events[:0]
	for _, ev := range events {
		key := result.Event{Object: ev.Object, Reason: ev.Reason, Message: ev.Message}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, ev)
	}
	return out
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case ev.Series != nil:
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// containerLog returns the last lines of a container's log (of the previous container for a
// crash loop), or why they could not be read. It streams, as kubectl logs does, so the API
// server's reason for a refusal ("container is waiting to start") reaches the message.
func (s *clusterState) containerLog(ctx context.Context, namespace, pod, container string, previous bool) (logs, why string) {
	container = strings.TrimPrefix(container, "init:")
	logs, err := s.readLog(ctx, namespace, pod, container, previous)
	if err != nil && previous {
		// The previous container's log may be gone; the current one still helps.
		logs, err = s.readLog(ctx, namespace, pod, container, false)
	}
	if err != nil {
		return "", fmt.Sprintf("cannot read the log of container %q of pod %s: %s", container, pod, apiMessage(err))
	}
	return logs, ""
}

func (s *clusterState) readLog(ctx context.Context, namespace, pod, container string, previous bool) (string, error) {
	tail := int64(logTailLines)
	limit := int64(maxLogBytes)
	stream, err := s.core.Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container: container, TailLines: &tail, LimitBytes: &limit, Previous: previous,
	}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer stream.Close()
	data, err := io.ReadAll(io.LimitReader(stream, maxLogBytes))
	if err != nil {
		return "", fmt.Errorf("read log: %w", err)
	}
	return strings.TrimRight(string(data), "\n"), nil
}

// canaryOf names the Canary whose failure (canary-failed) a workload of namespace ns carries:
// its message starts with the Canary's ID. "" for the Canary itself and other failures.
func canaryOf(o result.Object) string {
	if o.Failure == nil || o.Failure.Code != result.CodeCanaryFailed || o.Kind == "Canary" {
		return ""
	}
	id, _, _ := strings.Cut(o.Failure.Message, " ")
	prefix := "Canary/" + o.Namespace + "/"
	if !strings.HasPrefix(id, prefix) {
		return ""
	}
	return strings.TrimPrefix(id, prefix)
}
