package result

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fullRun is a Run with every string field set, so a field the walk missed shows.
func fullRun() Run {
	f := &Failure{Code: "c", Reason: "r", Message: "m", Pod: "p", Container: "co", Logs: "l1\nl2", LogsError: "le",
		Events: []Event{{Object: "o", Reason: "r", Message: "m"}}, EventsError: "ee"}
	c := Cluster{Name: "n", Verdict: "v", Code: "c", Reason: "r", Message: "m", ExpectedRevision: "e",
		Flux: []FluxObject{{ID: "i", Kind: "k", Namespace: "ns", Name: "n", Owner: "o", Verdict: "v", Code: "c", Ready: "r", Reason: "r",
			Message: "m", LastAppliedRevision: "a", LastAttemptedRevision: "t", ChartVersion: "cv"}},
		Objects: []Object{{ID: "i", Group: "g", Version: "v", Kind: "k", Namespace: "ns", Name: "n", Owner: "o", Status: "s", Message: "m", Failure: f}}}
	return Run{Status: "s", Resources: []string{"r"}, ExpectedRevision: "e", Condition: Condition{Type: "t", Status: "s", Reason: "r", Message: "m"},
		ReadyClusters: []string{"a"}, FailedClusters: []string{"b"}, Results: []Cluster{c}}
}

func TestRewriteStringsReachesEveryString(t *testing.T) {
	t.Parallel()
	ways := map[string]func(run *Run, rewrite func(field, s string) string){
		"RewriteStrings": func(run *Run, rewrite func(field, s string) string) { RewriteStrings(run, rewrite) },
		"Rewriter, piece by piece": func(run *Run, rewrite func(field, s string) string) {
			r := NewRewriter(rewrite)
			r.Run(run)
			for i := range run.Results {
				r.Cluster(&run.Results[i])
			}
		},
	}
	for name, rewriteAll := range ways {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkEveryStringRewritten(t, rewriteAll)
		})
	}
}

func checkEveryStringRewritten(t *testing.T, rewriteAll func(run *Run, rewrite func(field, s string) string)) {
	t.Helper()
	run := fullRun()
	fields := map[string]bool{}
	rewriteAll(&run, func(field, s string) string {
		fields[field] = true
		return "<" + s + ">"
	})
	// Every string left unbracketed is a string the walk did not reach.
	var missed []string
	var check func(v reflect.Value, path string)
	check = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.String:
			if s := v.String(); s != "" && (!strings.HasPrefix(s, "<") || !strings.HasSuffix(s, ">")) {
				missed = append(missed, path+"="+s)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				check(v.Elem(), path)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				check(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		case reflect.Slice:
			for i := range v.Len() {
				check(v.Index(i), path+"[]")
			}
		}
	}
	check(reflect.ValueOf(run), "Run")
	if len(missed) > 0 {
		t.Errorf("strings not rewritten: %v", missed)
	}
	if !fields["Logs"] || !fields["ReadyClusters"] {
		t.Errorf("fields seen %v, want Logs and ReadyClusters among them", fields)
	}
}

// TestRewriteStringsAnyContent: strings that would break an encode-and-parse round trip (a
// trailing backslash, invalid UTF-8, quotes) are rewritten like any other.
func TestRewriteStringsAnyContent(t *testing.T) {
	t.Parallel()
	run := Run{Condition: Condition{Message: `pass\` + "\xff\"x"}}
	RewriteStrings(&run, func(_, s string) string { return strings.ReplaceAll(s, `pass\`, "***") })
	if diff := cmp.Diff("***\xff\"x", run.Condition.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}
