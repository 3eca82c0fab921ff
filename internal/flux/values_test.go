package flux

import (
	"cmp"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValuesFrom(t *testing.T) {
	t.Parallel()
	obj := fromYAML(t, `
spec:
  valuesFrom:
  - {kind: Secret, name: creds, valuesKey: password, targetPath: db.password}
  - {kind: ConfigMap, name: web-values}
  - {kind: ConfigMap, name: web-values, valuesKey: extra.yaml}
  - {kind: Deployment, name: odd}
  - {kind: ConfigMap}
  - not-a-map
`)
	want := []ValuesRef{{Kind: "ConfigMap", Name: "web-values"}, {Kind: "Secret", Name: "creds"}}
	if diff := gocmp.Diff(want, ValuesFrom(obj)); diff != "" {
		t.Errorf("ValuesFrom (-want +got):\n%s", diff)
	}
	if got := ValuesFrom(fromYAML(t, `spec: {}`)); got != nil {
		t.Errorf("no valuesFrom: %v, want none", got)
	}
}

func TestAppliedAt(t *testing.T) {
	t.Parallel()
	at := func(s string) *metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &metav1.Time{Time: tm}
	}
	fields := []metav1.ManagedFieldsEntry{
		{Manager: KustomizeController, Operation: metav1.ManagedFieldsOperationApply, Time: at("2026-11-23T10:00:00Z")},
		// An update by the same manager (a status or a kubectl edit under its name) and
		// another manager's apply are not Flux's content.
		{Manager: KustomizeController, Operation: metav1.ManagedFieldsOperationUpdate, Time: at("2026-11-23T11:00:00Z")},
		{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, Time: at("2026-11-23T12:00:00Z")},
		{Manager: KustomizeController, Operation: metav1.ManagedFieldsOperationApply},
	}
	got, ok := AppliedAt(fields, KustomizeController)
	if !ok || !got.Equal(at("2026-11-23T10:00:00Z").Time) {
		t.Errorf("AppliedAt = %v, %v; want 10:00:00, true", got, ok)
	}
	if _, ok := AppliedAt(fields[1:3], KustomizeController); ok {
		t.Error("no Apply entry of kustomize-controller: want none")
	}
}

// TestAppliedBy: the owner labels kustomize-controller and flux-operator put on what they
// apply name the Flux object; half a pair, or another tool's labels, name none.
func TestAppliedBy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		labels map[string]string
		want   Ref
		ok     bool
	}{
		{map[string]string{"kustomize.toolkit.fluxcd.io/name": "app", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"},
			Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "app"}, true},
		{map[string]string{"resourceset.fluxcd.controlplane.io/name": "web", "resourceset.fluxcd.controlplane.io/namespace": "shop"},
			Ref{Kind: KindResourceSet, Namespace: "shop", Name: "web"}, true},
		{map[string]string{"kustomize.toolkit.fluxcd.io/name": "app"}, Ref{}, false},
		{map[string]string{"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "shop"}, Ref{}, false},
		{nil, Ref{}, false},
	} {
		got, ok := AppliedBy(tt.labels)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AppliedBy(%v) = %v, %t, want %v, %t", tt.labels, got, ok, tt.want, tt.ok)
		}
	}
}

func TestStaleValues(t *testing.T) {
	t.Parallel()
	cm, secret := ValuesRef{Kind: "ConfigMap", Name: "web-values"}, ValuesRef{Kind: "Secret", Name: "creds"}
	ts := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	at := func(s string) ValuesChange { return ValuesChange{At: ts(s)} }
	watched := func(s string) ValuesChange { return ValuesChange{At: ts(s), Watched: true} }
	const deployed10 = `
spec:
  interval: 10m
status:
  history:
  - {chartVersion: 1.0.0, status: deployed, lastDeployed: "2026-11-23T10:00:00Z"}
  - {chartVersion: 0.9.0, status: superseded, lastDeployed: "2026-11-22T10:00:00Z"}
`
	const watchingBefore = "2026-11-23T09:00:00Z"
	tests := []struct {
		name        string
		doc         string
		changed     map[ValuesRef]ValuesChange
		started     string // a reconcile start the run saw
		watching    string // when the run started watching; default watchingBefore
		now         string // default 10:05:30
		wantStale   bool
		wantIn      []string
		wantRecheck string
	}{
		{
			name:    "values applied before the release was deployed",
			doc:     deployed10,
			changed: map[ValuesRef]ValuesChange{cm: at("2026-11-23T09:59:59Z")},
		},
		{
			name:    "in the same second as the deploy: taken as read by it",
			doc:     deployed10,
			changed: map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:00:00.900Z")},
		},
		{
			name:      "in the same second as the deploy, but after the release's status was last written",
			doc:       "metadata: {resourceVersion: \"100\"}" + deployed10,
			changed:   map[ValuesRef]ValuesChange{cm: {At: ts("2026-11-23T10:00:00.900Z"), ResourceVersion: "120"}},
			wantStale: true,
			wantIn:    []string{"values from ConfigMap/web-values changed at 2026-11-23T10:00:00Z"},
		},
		{
			name:    "in the same second as the deploy, the release's status written after it",
			doc:     "metadata: {resourceVersion: \"130\"}" + deployed10,
			changed: map[ValuesRef]ValuesChange{cm: {At: ts("2026-11-23T10:00:00.900Z"), ResourceVersion: "120"}},
		},
		{
			name:      "changed after the deploy, no reconcile since: waits for evidence, however long",
			doc:       deployed10,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z"), secret: at("2026-11-23T09:00:00Z")},
			now:       "2026-11-23T23:00:00Z",
			wantStale: true,
			wantIn:    []string{"values from ConfigMap/web-values changed at 2026-11-23T10:05:00Z", "last deployed (2026-11-23T10:00:00Z)", "reconcile.fluxcd.io/watch: Enabled"},
		},
		{
			name:    "a reconcile seen starting in the second of the change: composed (a watched object's)",
			doc:     deployed10,
			changed: map[ValuesRef]ValuesChange{cm: watched("2026-11-23T10:05:00.100Z")},
			started: "2026-11-23T10:05:00Z",
		},
		{
			name:      "a reconcile seen starting before the change",
			doc:       deployed10,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			started:   "2026-11-23T10:04:59Z",
			wantStale: true,
			wantIn:    []string{"after helm-controller last started to reconcile it (2026-11-23T10:04:59Z)"},
		},
		{
			name: "a reconcile under way, started after the change: the release may not hold them yet",
			doc: deployed10 + `  conditions:
  - {type: Ready, status: "True", reason: UpgradeSucceeded, lastTransitionTime: "2026-11-23T10:00:00Z"}
  - {type: Reconciling, status: "True", reason: Progressing, message: Fulfilling prerequisites, lastTransitionTime: "2026-11-23T10:05:10Z"}
`,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			started:   "2026-11-23T10:05:10Z",
			wantStale: true,
		},
		{
			name:        "the run started watching after the change: bounded by the interval",
			doc:         deployed10,
			changed:     map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			watching:    "2026-11-23T10:05:20Z",
			wantStale:   true,
			wantRecheck: "2026-11-23T10:16:30Z", // 10:05 + 10m + 1m (jitter) + 30s
		},
		{
			name:     "the run started watching after the change, past the interval: reconciled since",
			doc:      deployed10,
			changed:  map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			watching: "2026-11-23T10:05:20Z",
			now:      "2026-11-23T10:16:30Z",
		},
		{
			name:        "the run started watching after a watched change: a short bound",
			doc:         deployed10,
			changed:     map[ValuesRef]ValuesChange{cm: watched("2026-11-23T10:05:10Z")},
			watching:    "2026-11-23T10:05:20Z",
			wantStale:   true,
			wantRecheck: "2026-11-23T10:05:40Z",
		},
		{
			name:      "no interval to bound the wait: waits for a deploy",
			doc:       "spec: {}\n" + deployed10[len("\nspec:\n  interval: 10m\n"):],
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			watching:  "2026-11-23T10:05:20Z",
			now:       "2026-11-23T23:00:00Z",
			wantStale: true,
		},
		{
			name:      "both changed after the deploy: both named, the latest time",
			doc:       deployed10,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z"), secret: watched("2026-11-23T10:05:20Z")},
			wantStale: true,
			wantIn:    []string{"ConfigMap/web-values, Secret/creds changed at 2026-11-23T10:05:20Z"},
		},
		{
			name: "a reconcile request handled after the change: the values were composed since",
			doc: deployed10 + `
  lastHandledReconcileAt: "2026-11-23T10:05:20.123456789Z"
`,
			changed: map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
		},
		{
			name: "a reconcile request token in the future says nothing",
			doc: deployed10 + `
  lastHandledReconcileAt: "2099-01-01T00:00:00Z"
`,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			wantStale: true,
		},
		{
			name: "a reconcile request handled before the change",
			doc: deployed10 + `
  lastHandledReconcileAt: "2026-11-23T10:04:00Z"
`,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			wantStale: true,
			wantIn:    []string{"after the reconcile request it last handled (2026-11-23T10:04:00Z)"},
		},
		{
			name: "a request token that is not a time says nothing",
			doc: deployed10 + `
  lastHandledReconcileAt: "by-hand"
`,
			changed:   map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
			wantStale: true,
		},
		{
			name:    "no history: the chart gate decides",
			doc:     `status: {}`,
			changed: map[ValuesRef]ValuesChange{cm: at("2026-11-23T10:05:00Z")},
		},
		{
			name:    "nothing applied by Flux",
			doc:     deployed10,
			changed: map[ValuesRef]ValuesChange{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := ValuesEvidence{WatchingSince: ts(cmp.Or(tt.watching, watchingBefore)), Now: ts(cmp.Or(tt.now, "2026-11-23T10:05:30Z"))}
			if tt.started != "" {
				ev.ReconcileStarted = ts(tt.started)
			}
			msg, stale, recheck := StaleValues(fromYAML(t, tt.doc), tt.changed, ev)
			if stale != tt.wantStale {
				t.Fatalf("stale = %v (%q), want %v", stale, msg, tt.wantStale)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
			var want time.Time
			if tt.wantRecheck != "" {
				want = ts(tt.wantRecheck)
			}
			if !recheck.Equal(want) {
				t.Errorf("recheck %v, want %v", recheck, want)
			}
		})
	}
}

func TestReconcileStarted(t *testing.T) {
	t.Parallel()
	got, ok := ReconcileStarted(fromYAML(t, `
status:
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2026-11-23T09:00:00Z"}
  - {type: Reconciling, status: "True", reason: Progressing, message: Fulfilling prerequisites, lastTransitionTime: "2026-11-23T10:05:10Z"}
`))
	if !ok || !got.Equal(time.Date(2026, 11, 23, 10, 5, 10, 0, time.UTC)) {
		t.Errorf("ReconcileStarted = %v, %v; want 10:05:10", got, ok)
	}
	if _, ok := ReconcileStarted(fromYAML(t, `status: {conditions: [{type: Reconciling, status: "False", lastTransitionTime: "2026-11-23T10:05:10Z"}]}`)); ok {
		t.Error("Reconciling False: want none")
	}
}
