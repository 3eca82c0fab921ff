package merge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
			run, err := Merge(tt.reports(t))
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
	merged, err := Merge(reports)
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
		if _, err := Merge(tt.reports); err == nil || !strings.Contains(err.Error(), tt.want) {
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
		{"cut", `{"schemaVersion": 1, "resources": [], "results": [], "truncated": true}`, "cut document"},
		{"not a report", `{"schemaVersion": 1}`, "no resources or results"},
		{"a leg's bad input", `{"schemaVersion": 1, "status": "failure", "resources": [], "condition": {"type": "Ready", "status": "False", "reason": "ClustersNotReady", "message": "bad input: the step's log says what is wrong and how to fix it"}, "results": []}`, "stopped on bad input"},
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
	run, err := Merge([]Report{leg("eu.json", "eu-1", "eu-2"), leg("us.json", "us-1", "eu-2")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"eu-1": "Current ", "eu-2": "Unknown ClusterDuplicated", "us-1": "Current "}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" || run.Status != result.RunFailure {
		t.Errorf("status %s, verdicts (-want +got):\n%s", run.Status, diff)
	}

	// The fleet named: the leg of a network that uploaded nothing is not a silent pass.
	run, err = Covering([]Report{leg("eu.json", "eu-1", "eu-2")}, []string{"eu-1", "eu-2", "ap-1"})
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
	f.Add([]byte(`{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"results":[{"cluster":"a","verdict":"Current"}],"shard":{"index":1,"count":2,"clusters":["a","b"],"clustersHash":"x"}}`))
	f.Add([]byte(`{"schemaVersion":1,"resources":[],"results":[],"shard":{"index":0,"count":0}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("f.json", data)
		if err != nil {
			return
		}
		if r.Run.Shard != nil && (r.Run.Shard.Count < 1 || r.Run.Shard.Count > shard.MaxCount) {
			if _, err := Merge([]Report{r}); err == nil {
				t.Errorf("a shard count of %d merged", r.Run.Shard.Count)
			}
			return
		}
		_, _ = Merge([]Report{r, r})
	})
}

// TestParseByteOrderMark: a report behind a UTF-8 byte order mark reads as the report.
func TestParseByteOrderMark(t *testing.T) {
	t.Parallel()
	doc := `{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"results":[{"cluster":"a","verdict":"Current"}]}`
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
