package merge

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

// ownRun is the merge's own run in these tests: run 7001 of org/app on GitHub.
func ownRun(attempt int) *result.Origin {
	return &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: attempt}
}

// withOrigin is r written in the run o.
func withOrigin(r Report, o *result.Origin) Report {
	r.Run.Origin = o
	return r
}

// TestMergeRefusesForeignReports: a report of another repository or workflow run, of none
// (a workstation's, or an older version's), of a later attempt than the merge's own (a leg
// runs before its merge: such a report is forged, and would override the real attempt's
// verdicts), of other resources or of another revision than
// the merge step's own is refused, named, with the reason; merge-foreign-reports lets the
// reports of other runs through on purpose, never those of other resources or revisions.
func TestMergeRefusesForeignReports(t *testing.T) {
	t.Parallel()
	names := fleet(6)
	own := func(index int) Report { return withOrigin(shardReport(t, names, index, 2, rev), ownRun(1)) }
	tests := []struct {
		name    string
		foreign Report
		want    Expect
		err     string // "" when the merge takes it
	}{
		{"another repository", withOrigin(shardReport(t, names, 2, 2, rev), &result.Origin{CI: "github", Repository: "evil/app", RunID: "7001", Attempt: 1}),
			Expect{Origin: ownRun(1)},
			"shard-2.json is a report of another run: it was written in github run 7001 (attempt 1) of evil/app, and this merge runs in github run 7001 (attempt 1) of org/app"},
		{"another workflow run", withOrigin(shardReport(t, names, 2, 2, rev), &result.Origin{CI: "github", Repository: "org/app", RunID: "6999", Attempt: 1}),
			Expect{Origin: ownRun(1)}, "shard-2.json is a report of another run: it was written in github run 6999 (attempt 1) of org/app"},
		{"another CI", withOrigin(shardReport(t, names, 2, 2, rev), &result.Origin{CI: "gitlab", Repository: "org/app", RunID: "7001"}),
			Expect{Origin: ownRun(1)}, "is a report of another run: it was written in gitlab run 7001 of org/app"},
		{"no run at all", shardReport(t, names, 2, 2, rev),
			Expect{Origin: ownRun(1)}, "shard-2.json is a report of another run: it was written outside a CI run that names itself"},
		{"another resource", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(1)),
			Expect{Origin: ownRun(1), Resources: []string{"Kustomization/flux-system/other-app"}},
			"shard-1.json is a report of other resources: it verifies Kustomization/flux-system/app, and this merge step's resource input names Kustomization/flux-system/other-app"},
		{"another revision", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(1)),
			Expect{Origin: ownRun(1), Resources: resources, Revision: "b2c3d4e"},
			`shard-1.json is a report of another revision: it verifies "` + rev + `", and this merge step's revision input is "b2c3d4e"`},
		{"the step's own resources and revision", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(1)),
			Expect{Origin: ownRun(1), Resources: resources, Revision: rev}, ""},
		{"another run, on purpose", withOrigin(shardReport(t, names, 2, 2, rev), &result.Origin{CI: "github", Repository: "org/app", RunID: "6999", Attempt: 1}),
			Expect{Origin: ownRun(1), AllowForeign: true, Resources: resources, Revision: rev}, ""},
		{"a workstation's reports, on purpose", shardReport(t, names, 2, 2, rev),
			Expect{Origin: ownRun(1), AllowForeign: true}, ""},
		{"a later attempt of this run than the merge's", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(999)),
			Expect{Origin: ownRun(1)},
			"shard-2.json claims a later attempt than this merge's: it was written in github run 7001 (attempt 999) of org/app, and this merge runs in github run 7001 (attempt 1) of org/app"},
		{"an earlier attempt of this run", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(1)),
			Expect{Origin: ownRun(2)}, ""},
		{"a later attempt, merged on purpose", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(999)),
			Expect{Origin: ownRun(1), AllowForeign: true}, ""},
		{"another resource, even on purpose", withOrigin(shardReport(t, names, 2, 2, rev), ownRun(1)),
			Expect{Origin: ownRun(1), AllowForeign: true, Resources: []string{"Kustomization/flux-system/other-app"}}, "is a report of other resources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run, err := Merge([]Report{own(1), tt.foreign}, tt.want)
			if tt.err == "" {
				if err != nil || len(run.Results) != len(names) || !run.Origin.SameRun(ownRun(1)) {
					t.Fatalf("Merge() = %d clusters of run %+v, %v; want the fleet's %d, in the merge's own run", len(run.Results), run.Origin, err, len(names))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("Merge() error %v, want it to say %q", err, tt.err)
			}
			if strings.Contains(err.Error(), "of another run") && !strings.Contains(err.Error(), ForeignHint) {
				t.Errorf("the refusal of another run does not say how to merge it on purpose: %v", err)
			}
		})
	}
}

// TestMergeNewestAttempt: of a leg run again in the same workflow run (a new attempt), the
// newest attempt's report is taken, whatever order the files come in; two reports of one
// attempt are still a duplicate, and so are two of different runs merged on purpose.
func TestMergeNewestAttempt(t *testing.T) {
	t.Parallel()
	names := fleet(12)
	// Shard 2's first attempt failed every cluster; its second is what the fleet is.
	failedFirst := shardReport(t, names, 2, 3, rev)
	for i := range failedFirst.Run.Results {
		failedFirst.Run.Results[i].Verdict = result.VerdictTimeout
	}
	failedFirst.Path = "attempt-1/shard-2.json"
	failedFirst = withOrigin(failedFirst, ownRun(1))
	retried := withOrigin(shardReport(t, names, 2, 3, rev), ownRun(2))
	retried.Path = "attempt-2/shard-2.json"
	sameAttempt := withOrigin(shardReport(t, names, 2, 3, rev), ownRun(2))
	otherRun := withOrigin(shardReport(t, names, 2, 3, rev), &result.Origin{CI: "github", Repository: "org/app", RunID: "6999", Attempt: 3})
	otherRun.Path = "old/shard-2.json"
	shard1, shard3 := withOrigin(shardReport(t, names, 1, 3, rev), ownRun(1)), withOrigin(shardReport(t, names, 3, 3, rev), ownRun(2))

	all := map[string]string{}
	for _, n := range names {
		all[n] = string(verdictOf(n)) + " "
	}
	duplicated := map[string]string{}
	for k, v := range all {
		duplicated[k] = v
		if shard.Of(k, 3) == 2 {
			duplicated[k] = "Unknown ShardDuplicated"
		}
	}
	for _, tt := range []struct {
		name    string
		reports []Report
		want    map[string]string
	}{
		{"the retry after the first", []Report{shard1, failedFirst, retried, shard3}, all},
		{"the retry before the first", []Report{retried, shard3, failedFirst, shard1}, all},
		{"two of the newest attempt", []Report{shard1, failedFirst, retried, sameAttempt, shard3}, duplicated},
		{"another run's, merged on purpose", []Report{shard1, retried, otherRun, shard3}, duplicated},
	} {
		run, err := Merge(tt.reports, Expect{Origin: ownRun(2), AllowForeign: true})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, verdicts(run)); diff != "" {
			t.Errorf("%s: verdicts (-want +got):\n%s", tt.name, diff)
		}
	}

	// Legs split by network: the EU leg run again.
	leg := func(path string, attempt int, verdict result.Verdict, names ...string) Report {
		var clusters []result.Cluster
		for _, n := range names {
			clusters = append(clusters, result.Cluster{Name: n, Verdict: verdict})
		}
		r := Report{Path: path, Run: result.NewRun(resources, rev, clusters, time.Second)}
		return withOrigin(r, ownRun(attempt))
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}} {
		legs := []Report{leg("eu-1.json", 1, result.VerdictFailed, "eu-1", "eu-2"), leg("eu-2.json", 2, result.VerdictCurrent, "eu-1", "eu-2"), leg("us.json", 1, result.VerdictCurrent, "us-1")}
		var ordered []Report
		for _, i := range order {
			ordered = append(ordered, legs[i])
		}
		run, err := Merge(ordered, Expect{Origin: ownRun(2)})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"eu-1": "Current ", "eu-2": "Current ", "us-1": "Current "}
		if diff := cmp.Diff(want, verdicts(run)); diff != "" || run.Status != result.RunSuccess {
			t.Errorf("legs in order %v: status %s, verdicts (-want +got):\n%s", order, run.Status, diff)
		}
	}
}
