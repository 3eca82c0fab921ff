package merge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"

var resources = []string{"Kustomization/flux-system/app"}

func fleet(n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	return names
}

// verdictOf is what the fake fleet's clusters are: c03 failed, the others Current.
func verdictOf(name string) result.Verdict {
	if name == "c03" {
		return result.VerdictFailed
	}
	return result.VerdictCurrent
}

// shardReport is shard index/count's report over the fleet.
func shardReport(t *testing.T, names []string, index, count int, revision string) Report {
	t.Helper()
	var clusters []result.Cluster
	for _, n := range names {
		if shard.Of(n, count) == index {
			clusters = append(clusters, result.Cluster{Name: n, Verdict: verdictOf(n), DurationMs: 1000})
		}
	}
	run := result.NewRun(resources, revision, clusters, time.Second)
	start := time.Date(2026, 11, 24, 9, 0, index, 0, time.UTC)
	run.StartedAt, run.EndedAt = start.Format(time.RFC3339Nano), start.Add(2*time.Second).Format(time.RFC3339Nano)
	run.Shard = &result.Shard{Index: index, Count: count, Clusters: names, ClustersHash: shard.ListHash(names)}
	data, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(fmt.Sprintf("shard-%d.json", index), data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func verdicts(run result.Run) map[string]string {
	out := map[string]string{}
	for _, c := range run.Results {
		out[c.Name] = string(c.Verdict) + " " + c.Reason
	}
	return out
}

func TestMergeShards(t *testing.T) {
	t.Parallel()
	names := fleet(12)
	all := map[string]string{}
	for _, n := range names {
		all[n] = string(verdictOf(n)) + " "
	}
	withReason := func(reason string, index, count int) map[string]string {
		out := map[string]string{}
		for k, v := range all {
			out[k] = v
			if shard.Of(k, count) == index {
				out[k] = "Unknown " + reason
			}
		}
		return out
	}
	tests := []struct {
		name    string
		reports func(t *testing.T) []Report
		want    map[string]string
		status  result.RunStatus
	}{
		{"every shard once: as one run", func(t *testing.T) []Report {
			return []Report{shardReport(t, names, 2, 3, rev), shardReport(t, names, 1, 3, rev), shardReport(t, names, 3, 3, rev)}
		}, all, result.RunFailure},
		{"a shard missing", func(t *testing.T) []Report {
			return []Report{shardReport(t, names, 1, 3, rev), shardReport(t, names, 3, 3, rev)}
		}, withReason("ShardMissing", 2, 3), result.RunFailure},
		{"a shard twice", func(t *testing.T) []Report {
			return []Report{shardReport(t, names, 1, 3, rev), shardReport(t, names, 2, 3, rev), shardReport(t, names, 2, 3, rev), shardReport(t, names, 3, 3, rev)}
		}, withReason("ShardDuplicated", 2, 3), result.RunFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run, err := Merge(tt.reports(t), Expect{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, verdicts(run)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			if run.Status != tt.status || run.DurationMs != 4000 || len(run.Results) != len(names) {
				t.Errorf("status %s, %d ms, %d clusters; want %s, 4000 ms (first start to last end), %d", run.Status, run.DurationMs, len(run.Results), tt.status, len(names))
			}
		})
	}
}

// TestMergeCancelledLeg: the report-file of a leg whose job was cancelled is written at once,
// each cluster with its verdict and without its objects (report.Essentials, truncated): it
// merges, its clusters keep their verdicts, and the merged run says it was cut.
func TestMergeCancelledLeg(t *testing.T) {
	t.Parallel()
	names := fleet(12)
	var clusters []result.Cluster
	for _, n := range names {
		if shard.Of(n, 3) == 2 {
			clusters = append(clusters, result.Cluster{Name: n, Verdict: verdictOf(n), DurationMs: 1000,
				Objects: []result.Object{{ID: "Deployment/apps/web", Kind: "Deployment", Namespace: "apps", Name: "web", Status: result.ObjectCurrent}}})
		}
	}
	hurried := result.NewRun(resources, rev, clusters, time.Second)
	start := time.Date(2026, 11, 24, 9, 0, 2, 0, time.UTC)
	hurried.StartedAt, hurried.EndedAt = start.Format(time.RFC3339Nano), start.Add(2*time.Second).Format(time.RFC3339Nano)
	hurried.Shard = &result.Shard{Index: 2, Count: 3, Clusters: names, ClustersHash: shard.ListHash(names)}
	data, err := json.Marshal(report.Essentials(hurried))
	if err != nil {
		t.Fatal(err)
	}
	cut, err := Parse("shard-2.json", data)
	if err != nil {
		t.Fatalf("the cancelled leg's report: %v", err)
	}
	run, err := Merge([]Report{shardReport(t, names, 1, 3, rev), cut, shardReport(t, names, 3, 3, rev)}, Expect{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, n := range names {
		want[n] = string(verdictOf(n)) + " "
	}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if !run.Truncated {
		t.Error("the merged run does not say it was cut")
	}
	for _, c := range run.Results {
		if cutHere := shard.Of(c.Name, 3) == 2; c.Truncated != cutHere || (cutHere && len(c.Objects) != 0) {
			t.Errorf("%s: truncated %v with %d objects; want truncated (and no objects) only in shard 2", c.Name, c.Truncated, len(c.Objects))
		}
	}
}

// TestMergeEqualsOneRun: the merge of every shard is the run one job over every cluster
// makes, but for the merge's own fields.
func TestMergeEqualsOneRun(t *testing.T) {
	t.Parallel()
	names := fleet(20)
	var clusters []result.Cluster
	for _, n := range names {
		clusters = append(clusters, result.Cluster{Name: n, Verdict: verdictOf(n), DurationMs: 1000})
	}
	one := result.NewRun(resources, rev, clusters, 3*time.Second)
	var reports []Report
	for i := 1; i <= 4; i++ {
		reports = append(reports, shardReport(t, names, i, 4, rev))
	}
	merged, err := Merge(reports, Expect{})
	if err != nil {
		t.Fatal(err)
	}
	merged.StartedAt, merged.EndedAt, merged.Merged, merged.DurationMs = "", "", nil, one.DurationMs
	for i := range merged.Results {
		merged.Results[i].SchemaVersion = one.Results[i].SchemaVersion
	}
	if diff := cmp.Diff(one, merged); diff != "" {
		t.Errorf("merge against one run (-one +merged):\n%s", diff)
	}
}

func TestMergeRefusesOtherRuns(t *testing.T) {
	t.Parallel()
	names := fleet(6)
	other := shardReport(t, fleet(7), 2, 2, rev)
	unsharded := shardReport(t, names, 2, 2, rev)
	unsharded.Run.Shard = nil
	tests := []struct {
		name    string
		reports []Report
		want    string
	}{
		{"none", nil, "no report to merge"},
		{"two revisions", []Report{shardReport(t, names, 1, 2, rev), shardReport(t, names, 2, 2, "main@sha1:ffffffffffffffffffffffffffffffffffffffff")}, "different runs"},
		{"two fleets", []Report{shardReport(t, names, 1, 2, rev), other}, "different runs"},
		{"another shard count", []Report{shardReport(t, names, 1, 2, rev), shardReport(t, names, 1, 3, rev)}, "different runs"},
		{"sharded and not", []Report{shardReport(t, names, 1, 2, rev), unsharded}, "one is a shard and the other is not"},
	}
	for _, tt := range tests {
		if _, err := Merge(tt.reports, Expect{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	for _, bad := range []struct{ name, data, want string }{
		{"not JSON", "{", "not a report of app-status"},
		{"empty", " \n", "is empty: the leg that wrote it stopped before its report"},
		{"a byte order mark alone", "\xef\xbb\xbf\r\n", "is empty: the leg that wrote it stopped before its report"},
		{"UTF-16", "\xff\xfe{\x00\"\x00", "is UTF-16 text, and a report is UTF-8 JSON (Windows PowerShell's > writes UTF-16)"},
		{"UTF-16, big-endian", "\xfe\xff\x00{", "is UTF-16 text"},
		{"another schema", `{"schemaVersion": 99, "version": "v9.0.0", "resources": [], "results": []}`, "schema version 99 (app-status v9.0.0)"},
		{"cut, with clusters left out", `{"schemaVersion": 1, "resources": ["Kustomization/flux-system/app"], "readyClusters": ["a", "b"], "failedClusters": ["c"], "results": [{"cluster": "a", "verdict": "Current"}, {"cluster": "(clusters left out)", "verdict": "Timeout"}], "truncated": true}`, "cut document with clusters left out"},
		{"no shard", `{"schemaVersion": 1, "resources": ["Kustomization/flux-system/app"], "readyClusters": [], "failedClusters": [], "results": [], "shard": {"index": 3, "count": 2, "clusters": [], "clustersHash": ""}}`, "says it is shard 3/2, which is no shard"},
		{"a fleet list changed", fmt.Sprintf(`{"schemaVersion": 1, "resources": ["Kustomization/flux-system/app"], "readyClusters": [], "failedClusters": [], "results": [], "shard": {"index": 1, "count": 2, "clusters": ["a", "b", "c"], "clustersHash": %q}}`, shard.ListHash([]string{"a", "b"})), "does not match its clustersHash"},
		{"not a report", `{"schemaVersion": 1}`, "is not a report of app-status: it has no resources, results"},
		{"a JSON document with results alone", `{"schemaVersion": 1, "resources": ["Kustomization/flux-system/app"], "results": [{"cluster": "a", "verdict": "Current"}]}`, "is not a report of app-status"},
		{"a leg's bad input", `{"schemaVersion": 1, "status": "failure", "resources": [], "readyClusters": [], "failedClusters": [], "condition": {"type": "Ready", "status": "False", "reason": "ClustersNotReady", "message": "bad input: the step's log says what is wrong and how to fix it"}, "results": []}`, "stopped on bad input"},
	} {
		if _, err := Parse("r.json", []byte(bad.data)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.name, err, bad.want)
		}
	}
}

// TestMergeNetworks: jobs that each verified their own clusters (one per private network)
// merge into one run; a cluster two of them verified is Unknown.
func TestMergeNetworks(t *testing.T) {
	t.Parallel()
	leg := func(path string, names ...string) Report {
		var clusters []result.Cluster
		for _, n := range names {
			clusters = append(clusters, result.Cluster{Name: n, Verdict: result.VerdictCurrent})
		}
		return Report{Path: path, Run: result.NewRun(resources, rev, clusters, time.Second)}
	}
	run, err := Merge([]Report{leg("eu.json", "eu-1", "eu-2"), leg("us.json", "us-1", "eu-2")}, Expect{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"eu-1": "Current ", "eu-2": "Unknown ClusterDuplicated", "us-1": "Current "}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" || run.Status != result.RunFailure {
		t.Errorf("status %s, verdicts (-want +got):\n%s", run.Status, diff)
	}

	// The fleet named: the leg of a network that uploaded nothing is not a silent pass.
	run, err = Merge([]Report{leg("eu.json", "eu-1", "eu-2")}, Expect{Clusters: []string{"eu-1", "eu-2", "ap-1"}})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"eu-1": "Current ", "eu-2": "Current ", "ap-1": "Unknown ClusterMissing"}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" || run.Status != result.RunFailure {
		t.Errorf("a leg missing: status %s, verdicts (-want +got):\n%s", run.Status, diff)
	}
}

// FuzzParse: any bytes are a report or a clear error, never a panic; what parses merges.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"readyClusters":["a"],"failedClusters":[],"results":[{"cluster":"a","verdict":"Current"}],"shard":{"index":1,"count":2,"clusters":["a","b"],"clustersHash":"x"}}`))
	f.Add([]byte(`{"schemaVersion":1,"resources":[],"results":[],"shard":{"index":0,"count":0}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(fmt.Sprintf(`{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"readyClusters":["a","z"],"failedClusters":[],"results":[{"cluster":"a","verdict":"Current"},{"cluster":"z","verdict":"Current"}],"truncated":true,"shard":{"index":2,"count":2,"clusters":["a","b","c"],"clustersHash":%q}}`, shard.ListHash([]string{"a", "b", "c"}))))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("f.json", data)
		if err != nil {
			return
		}
		if s := r.Run.Shard; s != nil {
			// What Parse promises of a shard, and a merge of it alone: exactly the fleet's
			// clusters, whatever its results say.
			if s.Count < 1 || s.Count > shard.MaxCount || s.Index < 1 || s.Index > s.Count || shard.ListHash(s.Clusters) != s.ClustersHash {
				t.Fatalf("Parse accepted shard %d/%d with a fleet list of hash %q", s.Index, s.Count, s.ClustersHash)
			}
			run, err := Merge([]Report{r}, Expect{})
			if err != nil {
				t.Fatalf("Merge of one parsed shard: %v", err)
			}
			got := map[string]bool{}
			for _, c := range run.Results {
				got[c.Name] = true
			}
			want := map[string]bool{}
			for _, name := range s.Clusters {
				want[name] = true
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("merged clusters against the fleet's (-fleet +merged):\n%s", diff)
			}
			return
		}
		_, _ = Merge([]Report{r, r}, Expect{})
	})
}

// TestParseByteOrderMark: a report behind a UTF-8 byte order mark reads as the report.
func TestParseByteOrderMark(t *testing.T) {
	t.Parallel()
	doc := `{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"readyClusters":["a"],"failedClusters":[],"results":[{"cluster":"a","verdict":"Current"}]}`
	plain, err := Parse("r.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	marked, err := Parse("r.json", []byte("\xef\xbb\xbf"+doc))
	if err != nil {
		t.Fatalf("with a byte order mark: %v", err)
	}
	if diff := cmp.Diff(plain, marked); diff != "" {
		t.Errorf("with a byte order mark (-without +with):\n%s", diff)
	}
}

// TestVersionsNote: reports of one schema merge whatever version wrote them, with a note when
// the versions are several.
func TestVersionsNote(t *testing.T) {
	t.Parallel()
	leg := func(path, version string) Report {
		r := Report{Path: path, Run: result.NewRun(resources, rev, nil, time.Second)}
		r.Run.Version = version
		return r
	}
	for _, tt := range []struct {
		name    string
		reports []Report
		want    string
	}{
		{"one version", []Report{leg("a.json", "v1.2.0"), leg("b.json", "v1.2.0")}, ""},
		{"one report", []Report{leg("a.json", "")}, ""},
		{"two versions, one unsaid", []Report{leg("b.json", "v1.2.0"), leg("a.json", ""), leg("c.json", "v1.2.0")},
			"the reports were written by different versions of app-status: an unknown version (a.json); v1.2.0 (b.json, c.json): run every leg and the merge with one version (pin the action to a commit or a full version tag)"},
	} {
		if got := VersionsNote(tt.reports); got != tt.want {
			t.Errorf("%s: VersionsNote() = %q, want %q", tt.name, got, tt.want)
		}
	}
	long := strings.Repeat("v", 5000)
	if got := VersionsNote([]Report{leg("a.json", long), leg("b.json", "v1.2.0")}); strings.Contains(got, long[:81]) || !strings.Contains(got, long[:70]) {
		t.Errorf("a version of 5000 runes is not cut to 80 in the note (%d bytes)", len(got))
	}
}

// TestParseRefusesCutOutputs: a report output cut by report.Fit to GitHub's size limit that
// left clusters out of its results (with the entry that says how many, or with no entry at
// all when even that did not fit) is refused, whatever else it holds: merged, its clusters
// would be missing, and an unsharded merge cannot tell. A report whose results and lists
// disagree without a cut was changed after it was written.
func TestParseRefusesCutOutputs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name            string
		clusters, limit int
	}{
		{"clusters left out, with the entry saying so", 400, 64 << 10},
		{"every cluster left out, no entry", 16000, 440 << 10},
	} {
		var clusters []result.Cluster
		for i := range tt.clusters {
			c := result.Cluster{Name: fmt.Sprintf("prod-eu-west-1-cluster-%05d", i), Verdict: result.VerdictCurrent, Message: strings.Repeat("m", 200)}
			if i == tt.clusters/2 {
				c.Verdict, c.Reason = result.VerdictFailed, "ImagePullBackOff"
			}
			clusters = append(clusters, c)
		}
		cut, truncated := report.Fit(result.NewRun(resources, rev, clusters, time.Second), tt.limit)
		if !truncated || len(cut.Results) >= tt.clusters {
			t.Fatalf("%s: Fit kept %d of %d clusters (truncated %v): the test needs clusters left out", tt.name, len(cut.Results), tt.clusters, truncated)
		}
		if marked := slices.ContainsFunc(cut.Results, func(c result.Cluster) bool { return c.Name == report.LeftOutName }); marked != (tt.clusters == 400) {
			t.Fatalf("%s: the entry for the clusters left out is there: %v; the test wants it in the first case alone", tt.name, marked)
		}
		data, err := json.Marshal(cut)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("report-output.json", data); err == nil || !strings.Contains(err.Error(), "cut document with clusters left out") {
			t.Errorf("%s (%d of %d clusters kept): Parse() error %v, want it refused as a cut document", tt.name, len(cut.Results), tt.clusters, err)
		}
	}
	edited := result.NewRun(resources, rev, []result.Cluster{{Name: "a", Verdict: result.VerdictCurrent}, {Name: "b", Verdict: result.VerdictFailed}}, time.Second)
	edited.Results = edited.Results[:1]
	data, err := json.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("edited.json", data); err == nil || !strings.Contains(err.Error(), "changed after it was written") {
		t.Errorf("a report without its failed cluster's result: Parse() error %v, want it refused", err)
	}
	flipped := result.NewRun(resources, rev, []result.Cluster{{Name: "a", Verdict: result.VerdictCurrent}, {Name: "b", Verdict: result.VerdictFailed}}, time.Second)
	flipped.Results[1].Verdict = result.VerdictCurrent
	if data, err = json.Marshal(flipped); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse("flipped.json", data); err == nil || !strings.Contains(err.Error(), "changed after it was written") {
		t.Errorf("a failed cluster's result made Current: Parse() error %v, want it refused", err)
	}
}
