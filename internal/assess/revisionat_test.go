package assess

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// movingList is a watch whose revision moves past its owner's status once an object was read
// from it: a watch behind the cluster that catches up in a burst while an assessment runs.
type movingList struct {
	*fixtureList
	read          bool
	before, after string
}

func (l *movingList) Object(namespace, name string) (any, bool) {
	l.read = true
	return l.fixtureList.Object(namespace, name)
}

func (l *movingList) Revision() string {
	if l.read {
		return l.after
	}
	return l.before
}

// movingView serves the GitRepositories of flux-system from a movingList.
type movingView struct {
	*fixtureView
	moving *movingList
}

func (v movingView) List(key ListKey) (List, bool) {
	if key.GVR.Resource == "gitrepositories" {
		return v.moving, true
	}
	return v.fixtureView.List(key)
}

// TestRevisionAsTaken: the consistency rule judges a list by the revision it had when the
// assessment took it, never by one asked after an object was read from it. The nested
// Kustomization infra (status at 200) applied A; its GitRepository, at B since revision 150,
// is held at A by a watch still at 120 when it is read, then at 250 once it caught up. Read
// at 120, the source that says infra is on its way is not proof (Confirming), however far the
// watch has moved by the time the rule is checked; read at 250 (B), infra waits for B. Each
// case by get and by verify, which say the same.
func TestRevisionAsTaken(t *testing.T) {
	t.Parallel()
	root := withRevision(ks("app", "GitRepository", "app", "", revB, "flux-system_infra_kustomize.toolkit.fluxcd.io_Kustomization"), "210")
	infra := withRevision(ks("infra", "GitRepository", "infra", "", revA), "200")
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	gitRepos := ListKey{GVR: schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}, Namespace: "flux-system"}
	tests := []struct {
		name            string
		source          string // the infra GitRepository the watch holds
		before, after   string
		wantCurrent     bool
		wantUnconfirmed bool
		// want and says are the outcome and a part of its message, in get as in verify.
		want outcome
		says string
	}{
		{name: "read at 120, asked at 120", source: withRevision(source("GitRepository", "infra", strings.ReplaceAll(servingB, revB, revA)), "90"),
			before: "120", after: "120", wantUnconfirmed: true,
			want: confirming, says: "confirming on a consistent read of gitrepositories in flux-system"},
		{name: "read at 120, moved to 250 since", source: withRevision(source("GitRepository", "infra", strings.ReplaceAll(servingB, revB, revA)), "90"),
			before: "120", after: "250", wantUnconfirmed: true,
			want: confirming, says: "confirming on a consistent read of gitrepositories in flux-system"},
		{name: "read at 250", source: withRevision(source("GitRepository", "infra", servingB), "150"),
			before: "250", after: "250",
			want: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}, says: "Kustomization/flux-system/infra: applied main@sha1:aaaaaaa, waiting for main@sha1:bbbbbbb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs := strings.Join([]string{root, infra, withRevision(gitRepo(), "80"), tt.source}, "\n---\n")
			for _, mode := range []string{"get", "verify"} {
				fv := newFixtureView(t, docs, "kustomizations@210")
				v := movingView{fv, &movingList{fixtureList: fv.list(gitRepos), before: tt.before, after: tt.after}}
				spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev,
					Workloads: true, Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
				e := Assess(v, NewMemory(), spec, fixtureNow)
				got := outcomeOf(e)
				if got.Verdict == result.VerdictCurrent {
					t.Fatalf("%s: Assess() = Current, want a wait: infra applied A, and the source read says nothing later", mode)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: Assess() (-want +got):\n%s\npending %+v fatal %+v", mode, diff, e.Pending, e.Fatal)
				}
				if msg := verdictMessage(e); !strings.Contains(msg, tt.says) {
					t.Errorf("%s: message %q, want it to contain %q", mode, msg, tt.says)
				}
				unconfirmed := false
				for _, k := range e.Unconfirmed {
					unconfirmed = unconfirmed || k == gitRepos
				}
				if unconfirmed != tt.wantUnconfirmed {
					t.Errorf("%s: the GitRepositories' list unconfirmed: %t, want %t (outcome %+v, unconfirmed %v)", mode, unconfirmed, tt.wantUnconfirmed, got, e.Unconfirmed)
				}
			}
		})
	}
}
