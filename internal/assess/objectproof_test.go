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

// provenList is a watch of Deployments behind its owner's status whose single objects were
// read alone since (ObjectSnapshot): objects maps namespace/name to the revision the read of
// each followed.
type provenList struct {
	List
	objects map[string]string
}

func (l provenList) Revision() string { return l.List.(Snapshot).Revision() }

func (l provenList) ObjectRevision(namespace, name string) string {
	return l.objects[namespace+"/"+name]
}

// provenView serves the Deployments of shop from a provenList.
type provenView struct {
	*fixtureView
	objects map[string]string
}

func (v provenView) List(key ListKey) (List, bool) {
	l, ok := v.fixtureView.List(key)
	if ok && key.GVR.Resource == "deployments" && v.objects != nil {
		return provenList{List: l, objects: v.objects}, true
	}
	return l, ok
}

// TestObjectsProvenAlone: an inventory's object read from a watch behind its owner's status
// is Unconfirmed with its list, and named with the owner's resourceVersion, for a read of it
// alone to prove it (ObjectsToConfirm); once such a read proved it at the owner's status or
// later, the verdict rests on it, and not before. Where the owner's resourceVersion is no
// number, nothing can be proven of one object: the list is read whole.
func TestObjectsProvenAlone(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	app := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment")
	docs := []string{withRevision(app, "100"), gitRepo(), withRevision(deployment("Deployment", 3, 3), "90")}
	behind := []string{"kustomizations@100", "gitrepositories@100", "deployments@95"}
	current := outcome{Verdict: result.VerdictCurrent}
	confirming := outcome{Verdict: result.VerdictInProgress, Reason: "Confirming"}
	deployments := ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "shop"}
	web := []ObjectProof{{Namespace: "shop", Name: "web", AtLeast: "100"}}
	tests := []struct {
		name        string
		docs        []string
		order       []string
		proven      map[string]string
		want        outcome
		wantObjects []ObjectProof
	}{
		{name: "no read of the object yet", docs: docs, order: behind,
			want: confirming, wantObjects: web},
		{name: "read alone after the owner's status", docs: docs, order: behind,
			proven: map[string]string{"shop/web": "100"}, want: current},
		{name: "read alone after a later status", docs: docs, order: behind,
			proven: map[string]string{"shop/web": "130"}, want: current},
		{name: "read alone before the owner's status", docs: docs, order: behind,
			proven: map[string]string{"shop/web": "99"}, want: confirming, wantObjects: web},
		{name: "another object read alone", docs: docs, order: behind,
			proven: map[string]string{"shop/other": "130"}, want: confirming, wantObjects: web},
		{name: "an owner without a numbered resourceVersion",
			docs:  []string{app, gitRepo(), withRevision(deployment("Deployment", 3, 3), "90")},
			order: []string{"deployments", "kustomizations", "gitrepositories"},
			want:  confirming},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}
			view := provenView{fixtureView: newFixtureView(t, strings.Join(tt.docs, "\n---\n"), tt.order...), objects: tt.proven}
			e := Assess(view, NewMemory(), spec, fixtureNow)
			if diff := cmp.Diff(tt.want, outcomeOf(e)); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nfatal %+v pending %+v", diff, e.Fatal, e.Pending)
			}
			if diff := cmp.Diff(tt.wantObjects, e.ObjectsToConfirm(deployments)); diff != "" {
				t.Errorf("objects to confirm (-want +got):\n%s", diff)
			}
		})
	}
}

// TestListReadWholeNamesNoObject: once any judge reads a list whole (its rule applied to the
// list, not to one object of it), no object of that list is offered to be read alone: the
// objects a read of each would prove are not all the verdict rests on, whichever comes first.
func TestListReadWholeNamesNoObject(t *testing.T) {
	t.Parallel()
	key := ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "shop"}
	behind := &fixtureList{objects: map[string]any{}, ordered: true, revision: "95"}
	owner := &fixtureList{objects: map[string]any{}, ordered: true, revision: "100"}
	for _, wholeFirst := range []bool{false, true} {
		e := &Assessment{}
		a := &assessor{e: e, fluxLists: map[string]List{"ks": owner}, fluxRevisions: map[string]string{"ks": "100"}}
		if wholeFirst {
			a.consistent(key, behind, "ks")
		}
		a.consistentObject(key, behind, "ks", "shop", "web")
		if !wholeFirst {
			if got := e.ObjectsToConfirm(key); len(got) != 1 {
				t.Fatalf("one object judged: objects to confirm %v, want web: the test proves nothing", got)
			}
			a.consistent(key, behind, "ks")
		}
		if got := e.ObjectsToConfirm(key); got != nil {
			t.Errorf("whole read first %t: objects to confirm %v, want none", wholeFirst, got)
		}
		if diff := cmp.Diff([]ListKey{key}, e.Unconfirmed); diff != "" {
			t.Errorf("whole read first %t: unconfirmed (-want +got):\n%s", wholeFirst, diff)
		}
	}
}

// TestObjectOfTwoInventories: an object two owners name, at different resourceVersions, is
// offered once, to be proven at the later status, whichever owner is met first.
func TestObjectOfTwoInventories(t *testing.T) {
	t.Parallel()
	key := ListKey{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "shop"}
	behind := &fixtureList{objects: map[string]any{}, ordered: true, revision: "95"}
	owners := map[string]List{"a": &fixtureList{ordered: true, revision: "100"}, "b": &fixtureList{ordered: true, revision: "150"}}
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		e := &Assessment{}
		a := &assessor{e: e, fluxLists: owners, fluxRevisions: map[string]string{"a": "100", "b": "150"}}
		for _, owner := range order {
			a.consistentObject(key, behind, owner, "shop", "shared")
		}
		want := []ObjectProof{{Namespace: "shop", Name: "shared", AtLeast: "150"}}
		if diff := cmp.Diff(want, e.ObjectsToConfirm(key)); diff != "" {
			t.Errorf("owners met in the order %v: objects to confirm (-want +got):\n%s", order, diff)
		}
	}
}

// TestCanaryTargetListReadWhole: a Deployment a Canary targets is judged with its -primary,
// read from the same list: the list is read whole, not the object alone; without Flagger the
// Deployment alone is offered.
func TestCanaryTargetListReadWhole(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	deployments := ListKey{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "shop"}
	withCanary := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1")
	targetOnly := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment")
	target := flaggerWorkload("web", "web:1.1.0", writtenB, true)
	primaryNew := flaggerWorkload("web-primary", "web:1.1.0", afterB, true)
	for _, tc := range []struct {
		name      string
		docs      []string
		flagger   bool
		wantWhole bool
	}{
		{name: "canary", docs: []string{withRevision(withCanary, "100"), gitRepo(), target, primaryNew, flaggerCanary("Succeeded", hashB, hashB, afterB)}, flagger: true, wantWhole: true},
		{name: "no flagger", docs: []string{withRevision(targetOnly, "100"), gitRepo(), target}},
	} {
		rev, err := flux.ParseRevision(revB)
		if err != nil {
			t.Fatal(err)
		}
		v := newFixtureView(t, strings.Join(tc.docs, "\n---\n"), "kustomizations@100", "gitrepositories@100", "deployments@95", "canaries@100", "configmaps@100", "secrets@100")
		v.flagger = tc.flagger
		spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}
		e := Assess(v, NewMemory(), spec, fixtureNow)
		got := e.ObjectsToConfirm(deployments)
		if tc.wantWhole && got != nil {
			t.Errorf("%s: objects to confirm %v, want the list whole", tc.name, got)
		}
		if !tc.wantWhole && len(got) != 1 {
			t.Errorf("%s: objects to confirm %v, want web alone", tc.name, got)
		}
	}
}
