package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// failingRun has a Current cluster and n failing clusters c01, c02, … with messages m01, ….
func failingRun(n int, message func(i int) string) result.Run {
	clusters := []result.Cluster{{Name: "a-ready", Verdict: result.VerdictCurrent}}
	for i := 1; i <= n; i++ {
		clusters = append(clusters, result.Cluster{
			Name: fmt.Sprintf("c%02d", i), Verdict: result.VerdictFailed, Code: result.CodeCrashLoop, Message: message(i),
		})
	}
	return result.NewRun([]string{app}, "", clusters, time.Second)
}

func shortMessage(i int) string { return fmt.Sprintf("m%02d", i) }

// annotation is the annotation of failingRun's cluster i.
func annotation(i int) Annotation {
	return Annotation{Title: fmt.Sprintf("c%02d", i), Message: fmt.Sprintf("Failed: crash-loop: m%02d", i)}
}

// combined is the message of the annotation that counts clusters from to to.
func combined(from, to int) string {
	names := fmt.Sprintf("c%02d", from)
	switch n := to - from + 1; {
	case n == 2:
		names += fmt.Sprintf(", c%02d", to)
	case n > 3:
		names += fmt.Sprintf(", c%02d, c%02d and %d more", from+1, from+2, n-3)
	}
	return fmt.Sprintf("Failed (crash-loop): %d (%s). GitHub shows 10 annotations per step: the job summary lists every cluster", to-from+1, names)
}

func TestAnnotations(t *testing.T) {
	t.Parallel()
	first := func(n int) []Annotation {
		var as []Annotation
		for i := 1; i <= n; i++ {
			as = append(as, annotation(i))
		}
		return as
	}
	tests := []struct {
		failing int
		want    []Annotation
	}{
		{failing: 0, want: nil},
		{failing: 1, want: first(1)},
		{failing: 10, want: first(10)},
		{failing: 11, want: append(first(9), Annotation{Title: "2 more clusters are not Current", Message: combined(10, 11)})},
		{failing: 25, want: append(first(9), Annotation{Title: "16 more clusters are not Current", Message: combined(10, 25)})},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.failing), func(t *testing.T) {
			t.Parallel()
			got := Annotations(failingRun(tt.failing, shortMessage))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Annotations() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnnotationsMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster result.Cluster
		want    string
	}{
		{name: "code and message", cluster: result.Cluster{Name: "a", Verdict: result.VerdictFailed, Code: result.CodeOOM, Message: "OOMKilled"}, want: "Failed: oom: OOMKilled"},
		{name: "no code", cluster: result.Cluster{Name: "a", Verdict: result.VerdictUnreachable, Message: "dial tcp: i/o timeout"}, want: "Unreachable: dial tcp: i/o timeout"},
		{name: "verdict only", cluster: result.Cluster{Name: "a", Verdict: result.VerdictCancelled}, want: "Cancelled"},
		{name: "one line", cluster: result.Cluster{Name: "a", Verdict: result.VerdictTimeout, Message: "one\ntwo"}, want: "Timeout: one two"},
	}
	for _, tt := range tests {
		got := Annotations(result.Run{Results: []result.Cluster{tt.cluster}})
		want := []Annotation{{Title: "a", Message: tt.want}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Annotations() mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestAnnotationsCombinedCap checks the combined annotation stays bounded across a fleet.
func TestAnnotationsCombinedCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		message func(int) string
	}{
		{name: "many long messages", message: func(int) string { return strings.Repeat("x", 500) }},
		{name: "one huge message", message: func(int) string { return strings.Repeat("y", 100_000) }},
	}
	for _, tt := range tests {
		got := Annotations(failingRun(500, tt.message))
		if len(got) != maxAnnotations {
			t.Fatalf("%s: Annotations() gave %d annotations, want %d", tt.name, len(got), maxAnnotations)
		}
		last := got[maxAnnotations-1]
		if last.Title != "491 more clusters are not Current" {
			t.Errorf("%s: last title = %q, want %q", tt.name, last.Title, "491 more clusters are not Current")
		}
		if len(last.Message) > maxCombinedBytes+128 || !strings.HasPrefix(last.Message, "Failed (crash-loop): 491 (c10, c100, c101 and 488 more)") {
			t.Errorf("%s: combined message is %d bytes %q, want the count by code within about %d bytes",
				tt.name, len(last.Message), last.Message[:min(len(last.Message), 80)], maxCombinedBytes)
		}
		for _, a := range got {
			if len(a.Message) > 4*maxTextRunes {
				t.Errorf("%s: annotation %s of %d bytes", tt.name, a.Title, len(a.Message))
			}
		}
	}
}

func TestPreflightWarnings(t *testing.T) {
	t.Parallel()
	warned := func(name string) result.Cluster {
		c := currentCluster(name, revNew, 1)
		c.Preflight = &result.Preflight{Warnings: []string{"helm-controller in flux-system is not available; this app does not need it"}}
		return c
	}
	fleet := func(n int) result.Run {
		var cs []result.Cluster
		for i := range n {
			cs = append(cs, warned(fmt.Sprintf("c%02d", i)))
		}
		noted := currentCluster("noted", revNew, 1)
		noted.Preflight = &result.Preflight{Notes: []string{"could not read"}}
		return result.NewRun([]string{app}, revNew, append(cs, noted), time.Second)
	}
	titles := func(as []Annotation) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Title)
		}
		return out
	}
	if got := PreflightWarnings(allCurrentRun()); len(got) != 0 {
		t.Errorf("PreflightWarnings of a run without findings = %v, want none", got)
	}
	want := []string{"c00: a Flux controller is down", "c01: a Flux controller is down"}
	if diff := cmp.Diff(want, titles(PreflightWarnings(fleet(2)))); diff != "" {
		t.Errorf("two warned clusters (-want +got):\n%s", diff)
	}
	got := PreflightWarnings(fleet(10))
	if len(got) != 10 || got[9].Title != "c09: a Flux controller is down" {
		t.Errorf("ten warned clusters: %v, want ten of their own", titles(got))
	}
	got = PreflightWarnings(fleet(12))
	if len(got) != 10 || got[9].Title != "3 more clusters have a Flux controller down" || !strings.Contains(got[9].Message, "c09, c10, c11") {
		t.Errorf("twelve warned clusters: %v, last %q, want nine and one counting the rest", titles(got), got[len(got)-1].Message)
	}
	hostile := PreflightWarnings(hostileRun())
	if len(hostile) != 1 || strings.ContainsAny(hostile[0].Title+hostile[0].Message, "\r\n") {
		t.Errorf("hostile run: %q, want one annotation on one line each", hostile)
	}
}
