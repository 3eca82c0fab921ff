package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/org/app-status-action/internal/result"
)

// fleetRun has clusters clusters, each with objects failing Deployments that carry long
// messages, events and logs. The clusters share one inventory to keep the test light.
func fleetRun(clusters, objects int) result.Run {
	long := strings.Repeat("the quick brown fox | jumps <over> the lazy dog ", 40)
	var logs strings.Builder
	for i := range 200 {
		fmt.Fprintf(&logs, "%04d %s\n", i, long[:180])
	}
	failure := &result.Failure{
		Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff", Message: long, Pod: "web-0", Container: "web",
		RestartCount: 9, Logs: logs.String(),
		Events: []result.Event{{Object: "Pod/app/web-0", Reason: "BackOff", Message: long, Count: 40}},
	}
	inventory := make([]result.Object, objects)
	for i := range inventory {
		inventory[i] = object(app, "apps", "Deployment", "app", fmt.Sprintf("web-%04d", i), result.ObjectFailed, long)
		inventory[i].Failure = failure
	}
	cs := make([]result.Cluster, clusters)
	for i := range cs {
		cs[i] = result.Cluster{
			SchemaVersion: result.SchemaVersion, Name: fmt.Sprintf("c%05d", i), Verdict: result.VerdictFailed,
			Code: result.CodeCrashLoop, Message: long, DurationMs: 1234,
			Flux:    []result.FluxObject{kustomization("my-app", result.VerdictFailed, "False", revNew)},
			Objects: inventory,
		}
	}
	return result.NewRun([]string{app}, revNew, cs, time.Minute)
}

// cutNote is what the closing note of a summary says was left out.
type cutNote struct{ table, details, objects int }

func parseNote(t *testing.T, md string) (cutNote, bool) {
	t.Helper()
	_, note, found := strings.Cut(md, "This summary was cut")
	if !found {
		return cutNote{}, false
	}
	count := func(pattern string) int {
		m := regexp.MustCompile(pattern).FindStringSubmatch(note)
		if m == nil {
			return 0
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatalf("parse note %q: %v", m[0], err)
		}
		return n
	}
	return cutNote{
		table:   count(`(\d+) clusters? in the table`),
		details: count(`the details of (\d+) clusters?`),
		objects: count(`(\d+) objects? that are not Current`),
	}, true
}

func TestMarkdownSizeCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		clusters, objects int
		maxBytes          int
		wantCut           bool
		wantDetails       bool // some details and objects are shown
	}{
		{name: "fleet, default size", clusters: 500, objects: 300, wantCut: true, wantDetails: true},
		{name: "fleet, 1 MiB", clusters: 500, objects: 300, maxBytes: 1 << 20, wantCut: true, wantDetails: true},
		{name: "many clusters cut the table", clusters: 20000, objects: 1, maxBytes: 64 << 10, wantCut: true, wantDetails: true},
		{name: "a row each up to the group threshold", clusters: groupAbove, objects: 3, wantCut: false, wantDetails: true},
		{name: "small summary", clusters: 6, objects: 3, maxBytes: 32 << 10, wantCut: true, wantDetails: true},
		{name: "fits", clusters: 2, objects: 2, wantCut: false, wantDetails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := fleetRun(tt.clusters, tt.objects)
			limit := tt.maxBytes
			if limit == 0 {
				limit = DefaultMaxBytes
			}
			md := Markdown(run, MarkdownOptions{MaxBytes: tt.maxBytes})
			checkWellFormed(t, md, limit)

			note, cut := parseNote(t, md)
			if cut != tt.wantCut {
				t.Fatalf("summary cut = %t, want %t", cut, tt.wantCut)
			}
			// Every cluster is named in the table (a row each, or its group's row above the
			// threshold) or counted as left out; its details are shown (for a few clusters per
			// group when grouped) or counted.
			named := map[string]bool{}
			for _, line := range strings.Split(md, "\n") {
				if strings.HasPrefix(line, "| c") || strings.HasPrefix(line, "| ❌") {
					for _, n := range regexp.MustCompile(`c\d{5}`).FindAllString(line, -1) {
						named[n] = true
					}
				}
			}
			detailed := tt.clusters
			if tt.clusters > groupAbove {
				detailed = examplesPerGroup
			}
			details := strings.Count(md, "\n<details>")
			listed := len(regexp.MustCompile(`(?m)^ *- \*\*Deployment/`).FindAllString(md, -1))
			if len(named)+note.table != tt.clusters {
				t.Errorf("%d clusters named + %d left out of the table = %d, want %d", len(named), note.table, len(named)+note.table, tt.clusters)
			}
			if details+note.details != detailed {
				t.Errorf("%d details + %d left out = %d, want %d", details, note.details, details+note.details, detailed)
			}
			if listed+note.objects != detailed*tt.objects {
				t.Errorf("%d objects listed + %d left out = %d, want %d", listed, note.objects, listed+note.objects, detailed*tt.objects)
			}
			if tt.wantDetails != (details > 0 && listed > 0) {
				t.Errorf("summary shows %d details and %d objects, want some of each: %t", details, listed, tt.wantDetails)
			}
		})
	}
}

// checkWellFormed checks md stays under limit and every block it opens is closed.
func checkWellFormed(t *testing.T, md string, limit int) {
	t.Helper()
	if len(md) > limit {
		t.Errorf("summary is %d bytes, want at most %d", len(md), limit)
	}
	if !utf8.ValidString(md) {
		t.Errorf("summary is not valid UTF-8")
	}
	if !strings.HasPrefix(md, "## ") {
		t.Errorf("summary starts %q, want the headline", md[:min(len(md), 40)])
	}
	// Text from clusters cannot start a line with these, so only the blocks' own are counted.
	if open, closed := strings.Count(md, "\n<details>"), strings.Count(md, "\n</details>\n"); open != closed {
		t.Errorf("summary opens %d <details> and closes %d", open, closed)
	}
	if fences := len(regexp.MustCompile("(?m)^ *```").FindAllString(md, -1)); fences%2 != 0 {
		t.Errorf("summary has %d code fences, want an even number", fences)
	}
}

// TestMarkdownTinyLimit checks even a limit too small for the headline is kept.
func TestMarkdownTinyLimit(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 10, 100, 1000, 2000} {
		md := Markdown(mixedRun(), MarkdownOptions{MaxBytes: limit})
		if len(md) > limit || !utf8.ValidString(md) {
			t.Errorf("Markdown(MaxBytes: %d) is %d bytes (valid UTF-8: %t)", limit, len(md), utf8.ValidString(md))
		}
	}
}

func TestMarkdownDefaultLimit(t *testing.T) {
	t.Parallel()
	run := fleetRun(100, 100)
	for _, maxBytes := range []int{0, -1} {
		if Markdown(run, MarkdownOptions{MaxBytes: maxBytes}) != Markdown(run, MarkdownOptions{MaxBytes: DefaultMaxBytes}) {
			t.Errorf("Markdown(MaxBytes: %d) differs from Markdown(MaxBytes: DefaultMaxBytes)", maxBytes)
		}
	}
}

// TestMarkdownFixturesUncut checks the golden fixtures are rendered whole.
func TestMarkdownFixturesUncut(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures() {
		md := Markdown(f.run, MarkdownOptions{})
		checkWellFormed(t, md, DefaultMaxBytes)
		if _, cut := parseNote(t, md); cut {
			t.Errorf("%s: summary was cut", f.name)
		}
	}
}
