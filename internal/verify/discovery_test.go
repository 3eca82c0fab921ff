package verify

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/org/app-status-action/internal/assess"
)

// groupVersionDiscovery answers discovery of one group version from served, and records each
// group version asked. Any other discovery (the whole API) panics: the embedded interface is
// nil.
type groupVersionDiscovery struct {
	discovery.DiscoveryInterface
	mu     sync.Mutex
	served map[string][]metav1.APIResource
	fail   map[string]error
	asked  []string
}

func (d *groupVersionDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, gv)
	if err := d.fail[gv]; err != nil {
		return nil, err
	}
	resources, ok := d.served[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: resources}, nil
}

func (d *groupVersionDiscovery) serve(gv string, resources ...metav1.APIResource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.served[gv] = append(d.served[gv], resources...)
}

func (d *groupVersionDiscovery) askedSoFar() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.asked...)
}

// TestMappingAsksOnlyTheKindsGroupVersion: a kind's resource and scope come from discovery of
// its group version alone, read once for all its kinds; a kind or group version the cluster
// does not serve, or discovery that fails, is said and asked again after mappingRetry, not
// before.
func TestMappingAsksOnlyTheKindsGroupVersion(t *testing.T) {
	t.Parallel()
	disco := &groupVersionDiscovery{
		served: map[string][]metav1.APIResource{
			"rollouts.example.com/v1": {
				{Name: "rollouts", SingularName: "rollout", Namespaced: true, Kind: "Rollout"},
				{Name: "rollouts/status", Namespaced: true, Kind: "Rollout"},
				{Name: "rollouts/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale"},
				{Name: "previews", SingularName: "preview", Namespaced: true, Kind: "Preview"},
				{Name: "stages", SingularName: "stage", Kind: "Stage"},
			},
			"example.com/v1": {
				{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget"},
			},
		},
		fail: map[string]error{
			"metrics.k8s.io/v1beta1": apierrors.NewServiceUnavailable("the server is currently unable to handle the request"),
		},
	}
	s := &clusterState{disco: disco, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
		fetches: newFetcher(context.Background(), func() {}, true)}
	start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

	type want struct {
		Resource string
		Scope    meta.RESTScopeName
		Err      string
	}
	tests := []struct {
		name string
		gvk  schema.GroupVersionKind
		at   time.Duration
		want want
	}{
		{"a namespaced kind", schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Rollout"}, 0,
			want{Resource: "rollouts", Scope: meta.RESTScopeNameNamespace}},
		{"another kind of the same group version", schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Preview"}, 0,
			want{Resource: "previews", Scope: meta.RESTScopeNameNamespace}},
		{"a cluster-scoped kind", schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Stage"}, 0,
			want{Resource: "stages", Scope: meta.RESTScopeNameRoot}},
		{"a built-in kind, not discovered", schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, 0,
			want{Resource: "namespaces", Scope: meta.RESTScopeNameRoot}},
		{"a group version not served", schema.GroupVersionKind{Group: "gadgets.example.com", Version: "v1", Kind: "Gadget"}, 0,
			want{Err: "the cluster does not serve gadgets.example.com/v1, Kind=Gadget"}},
		{"a kind its group version does not serve", schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Sprocket"}, 0,
			want{Err: "the cluster does not serve example.com/v1, Kind=Sprocket"}},
		{"an aggregated API that is down", schema.GroupVersionKind{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetrics"}, 0,
			want{Err: "discover PodMetrics: the server is currently unable to handle the request"}},
		{"a subresource is no kind's resource", schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Scale"}, 0,
			want{Err: "the cluster does not serve rollouts.example.com/v1, Kind=Scale"}},
	}
	for _, tt := range tests {
		m, done, err := s.mapping(tt.gvk, start.Add(tt.at))
		if !done {
			t.Fatalf("%s: not done with an inline fetcher", tt.name)
		}
		var got want
		if err != nil {
			got.Err = err.Error()
		} else {
			got.Resource, got.Scope = m.Resource.Resource, m.Scope.Name()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	wantAsked := []string{"rollouts.example.com/v1", "gadgets.example.com/v1", "example.com/v1", "metrics.k8s.io/v1beta1"}
	if diff := cmp.Diff(wantAsked, disco.askedSoFar()); diff != "" {
		t.Errorf("group versions asked (-want +got):\n%s", diff)
	}

	// The app's CRD is applied meanwhile: the kind is found once its group version's read is
	// mappingRetry old, and not read again before.
	sprocket := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Sprocket"}
	disco.serve("example.com/v1", metav1.APIResource{Name: "sprockets", SingularName: "sprocket", Kind: "Sprocket"})
	if _, _, err := s.mapping(sprocket, start.Add(mappingRetry/2)); err == nil {
		t.Errorf("the kind was read again before mappingRetry")
	}
	if got := len(disco.askedSoFar()); got != len(wantAsked) {
		t.Errorf("%d reads before mappingRetry, want %d", got, len(wantAsked))
	}
	m, _, err := s.mapping(sprocket, start.Add(mappingRetry))
	if err != nil || m.Resource.Resource != "sprockets" || m.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("after the CRD was applied: mapping %+v, %v; want sprockets, cluster-scoped", m, err)
	}
	if asked := disco.askedSoFar(); len(asked) != len(wantAsked)+1 || asked[len(asked)-1] != "example.com/v1" {
		t.Errorf("group versions asked: %v; want one more read, of example.com/v1", asked)
	}
	// A kind first asked long after its group version was read is read again, never told
	// "not served" by the old read.
	disco.serve("rollouts.example.com/v1", metav1.APIResource{Name: "analyses", SingularName: "analysis", Namespaced: true, Kind: "Analysis"})
	m, _, err = s.mapping(schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Analysis"}, start.Add(time.Hour))
	if err != nil || m.Resource.Resource != "analyses" {
		t.Errorf("a kind first asked of an hour-old read: mapping %+v, %v; want analyses", m, err)
	}
	// A kind with no version is no kind discovery can answer for.
	if _, _, err := s.mapping(schema.GroupVersionKind{Group: "apps", Kind: "Deployment"}, start); err == nil ||
		err.Error() != "the inventory gives Deployment.apps no API version" {
		t.Errorf("a kind with no version: %v", err)
	}
	// A kind found is never asked again.
	before := len(disco.askedSoFar())
	for range 3 {
		if _, _, err := s.mapping(schema.GroupVersionKind{Group: "rollouts.example.com", Version: "v1", Kind: "Rollout"}, start.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if after := len(disco.askedSoFar()); after != before {
		t.Errorf("a mapped kind was discovered again: %d reads, want %d", after, before)
	}
}

// TestBuiltinKindsNotDiscovered: the built-in kinds apps are made of are mapped without a
// discovery read, by the pass that meets them (peekMapping) and by a need (mapping) alike; another
// version of their groups, or another kind of them, is discovered.
func TestBuiltinKindsNotDiscovered(t *testing.T) {
	t.Parallel()
	disco := &groupVersionDiscovery{served: map[string][]metav1.APIResource{}}
	s := &clusterState{disco: disco, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
		fetches: newFetcher(context.Background(), func() {}, true)}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	type mapped struct {
		Resource schema.GroupVersionResource
		Scope    meta.RESTScopeName
	}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	namespace := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	want := map[schema.GroupVersionKind]mapped{
		deployment: {Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Scope: meta.RESTScopeNameNamespace},
		namespace:  {Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Scope: meta.RESTScopeNameRoot},
	}
	for gvk := range builtinResources {
		peeked := s.peekMapping(gvk)
		m, done, err := s.mapping(gvk, now)
		if !peeked.Done || peeked.Err != nil || !done || err != nil {
			t.Fatalf("%s: peeked %+v; mapping done %t, %v; want both mapped", gvk, peeked, done, err)
		}
		if p := peeked.Mapping; p.Resource != m.Resource || p.GroupVersionKind != m.GroupVersionKind || p.Scope.Name() != m.Scope.Name() {
			t.Errorf("%s: peekMapping %+v, mapping %+v; want the same", gvk, p, m)
		}
		if m.GroupVersionKind != gvk || m.Resource.GroupVersion() != gvk.GroupVersion() {
			t.Errorf("%s: mapped to %+v", gvk, m)
		}
		if w, ok := want[gvk]; ok {
			if diff := cmp.Diff(w, mapped{Resource: m.Resource, Scope: m.Scope.Name()}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", gvk, diff)
			}
		}
	}
	if asked := disco.askedSoFar(); len(asked) != 0 {
		t.Errorf("built-in kinds discovered: %v, want none", asked)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1beta2", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Kind: "ReplicaSetTemplate"},
	} {
		if _, _, err := s.mapping(gvk, now); err == nil {
			t.Errorf("%s: mapped without discovery, want it discovered (and not served here)", gvk)
		}
	}
	if diff := cmp.Diff([]string{"apps/v1beta2", "apps/v1"}, disco.askedSoFar()); diff != "" {
		t.Errorf("group versions discovered (-want +got):\n%s", diff)
	}
}

// TestDiscoveryErrorNamesTheKind: a 404 is a group version the cluster does not serve; any
// other answer is said as it came, with the kind.
func TestDiscoveryErrorNamesTheKind(t *testing.T) {
	t.Parallel()
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	tests := []struct {
		err  error
		want string
	}{
		{apierrors.NewNotFound(schema.GroupResource{}, ""), "the cluster does not serve example.com/v1, Kind=Widget"},
		{apierrors.NewGenericServerResponse(http.StatusForbidden, "get", schema.GroupResource{}, "", "denied", 0, false),
			"discover Widget: denied"},
	}
	for _, tt := range tests {
		if got := discoveryError(gvk, tt.err).Error(); got != tt.want {
			t.Errorf("discoveryError(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestMappingWhileDiscoveryRuns: off the assessment (a fetcher of its own goroutines), a kind
// is "discovering" until its group version's first read ends; when the read is asked again,
// the kind's last answer stands until the new one comes; a kind first asked of an old read is
// "discovering", never "not served".
func TestMappingWhileDiscoveryRuns(t *testing.T) {
	t.Parallel()
	disco := &groupVersionDiscovery{served: map[string][]metav1.APIResource{
		"example.com/v1": {{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget"}},
	}}
	read := make(chan struct{}, 1)
	s := &clusterState{disco: disco, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{},
		fetches: newFetcher(t.Context(), func() { read <- struct{}{} }, false)}
	t.Cleanup(s.fetches.wait)
	start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	type answer struct {
		Done bool
		Err  string
	}
	ask := func(kind string, at time.Duration) answer {
		_, done, err := s.mapping(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: kind}, start.Add(at))
		a := answer{Done: done}
		if err != nil {
			a.Err = err.Error()
		}
		return a
	}
	awaitRead := func() {
		t.Helper()
		select {
		case <-read:
		case <-time.After(10 * time.Second):
			t.Fatal("discovery's read did not end within 10s")
		}
	}
	notServed := "the cluster does not serve example.com/v1, Kind=Sprocket"
	steps := []struct {
		name  string
		serve string // a kind the cluster starts serving before the step
		kind  string
		at    time.Duration
		read  bool // a read ends before the next step
		want  answer
	}{
		{name: "first asked", kind: "Sprocket", read: true, want: answer{}},
		{name: "the read ended", kind: "Sprocket", want: answer{Done: true, Err: notServed}},
		{name: "read again: the last answer stands", serve: "Sprocket", kind: "Sprocket", at: mappingRetry, read: true, want: answer{Done: true, Err: notServed}},
		{name: "the new read ended", kind: "Sprocket", at: mappingRetry, want: answer{Done: true}},
		{name: "a kind first asked of an old read", serve: "Gadget", kind: "Gadget", at: time.Hour, read: true, want: answer{}},
		{name: "its own read ended", kind: "Gadget", at: time.Hour, want: answer{Done: true}},
	}
	for _, st := range steps {
		if st.serve != "" {
			disco.serve("example.com/v1", metav1.APIResource{Name: strings.ToLower(st.serve) + "s", Namespaced: true, Kind: st.serve})
		}
		if diff := cmp.Diff(st.want, ask(st.kind, st.at)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
		if st.read {
			awaitRead()
		}
	}
}

// TestPassTakesInTheReadThatWokeIt: a pass woken by the end of a read the last one waited for
// (here, discovery of a custom kind's group version) takes its answer in before it judges:
// the tree is judged once, not once without the answer and once more with it.
func TestPassTakesInTheReadThatWokeIt(t *testing.T) {
	t.Parallel()
	ks := strings.Replace(kustomization(readyOnB), "    - {id: shop_web__Service, v: v1}\n",
		"    - {id: shop_web__Service, v: v1}\n    - {id: shop_web_example.com_Widget, v: v1}\n", 1)
	s := newFakeState(t, revB, ks+"\n---\n"+deploymentCurrent+"\n---\n"+service)
	widgetGVR := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	if err := s.watches.get(assess.ListKey{GVR: widgetGVR, Namespace: "shop"}).(*staticList).store.Add(widget); err != nil {
		t.Fatal(err)
	}
	disco := &groupVersionDiscovery{served: map[string][]metav1.APIResource{
		"example.com/v1": {{Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget"}},
	}}
	read := make(chan struct{}, 1)
	s.disco, s.fetches = disco, newFetcher(t.Context(), func() { read <- struct{}{} }, false)
	t.Cleanup(s.fetches.wait)
	type pass struct {
		Passes  int
		Current bool
	}
	e := s.assess(fixtureNow)
	first := pass{Passes: s.mem.Passes(), Current: e.Current()}
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("discovery's read did not end within 10s")
	}
	e = s.assess(fixtureNow)
	got := []pass{first, {Passes: s.mem.Passes(), Current: e.Current()}}
	if diff := cmp.Diff([]pass{{Passes: 1}, {Passes: 2, Current: true}}, got); diff != "" {
		t.Errorf("assessments (-want +got):\n%s", diff)
	}
}

// TestCanariesDiscoveredBesideTheirTargetsList: while the list of a workload a Canary may
// target is on its way, the pass asks whether the cluster serves Canaries, so the answer comes
// with the list, not a round trip and a pass after it; a kind no Canary targets asks nothing,
// and nothing waits for the answer before the list is in.
func TestCanariesDiscoveredBesideTheirTargetsList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pending schema.GroupVersionResource
		want    []string
	}{
		{name: "a Deployment's list on its way", pending: deployGVR, want: []string{assess.CanaryGVK.GroupVersion().String()}},
		{name: "a Service's list on its way, no workload", pending: svcGVR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ks, docs := kustomization(readyOnB), deploymentCurrent+"\n---\n"+service
			if tt.pending != deployGVR {
				ks, docs = strings.Replace(ks, "    - {id: shop_web_apps_Deployment, v: v1}\n", "", 1), service
			}
			s := newFakeState(t, revB, ks+"\n---\n"+docs)
			s.mappingErrs = nil // whether Flagger is served is not known yet
			s.watches = &pendingCache{objectCache: s.watches, pending: map[schema.GroupVersionResource]bool{tt.pending: true}, lists: map[assess.ListKey]assess.List{}}
			disco := &groupVersionDiscovery{served: map[string][]metav1.APIResource{}}
			s.disco, s.fetches = disco, newFetcher(t.Context(), func() {}, true)
			e := s.assess(fixtureNow)
			if e.Current() || e.Pending == nil || e.Pending.Reason != "Listing" {
				t.Fatalf("pending %+v, want the pass waiting for the list", e.Pending)
			}
			if diff := cmp.Diff(tt.want, disco.askedSoFar()); diff != "" {
				t.Errorf("group versions discovered (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuiltinKindNotServed: a built-in kind mapped without discovery whose list the cluster
// answers 404 (a version it does not serve) is said as discovery would have said it, and waited
// on as a kind the cluster may start serving: not a NotFound asking whether Flux is installed.
func TestBuiltinKindNotServed(t *testing.T) {
	t.Parallel()
	s := newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+deploymentCurrent+"\n---\n"+service)
	notServed := apierrors.NewNotFound(deployGVR.GroupResource(), "")
	s.watches = &pendingCache{objectCache: s.watches, failing: map[schema.GroupVersionResource]error{deployGVR: notServed}, lists: map[assess.ListKey]assess.List{}}
	e := s.assess(fixtureNow)
	if e.Fatal != nil {
		t.Fatalf("fatal %+v, want a wait for the kind", e.Fatal)
	}
	if e.Pending == nil || e.Pending.Reason != "UnknownKind" || !strings.Contains(e.Pending.Message, "the cluster does not serve apps/v1, Kind=Deployment") {
		t.Errorf("pending %+v, want UnknownKind naming the kind", e.Pending)
	}
	if e.Recheck.IsZero() {
		t.Error("no recheck: the kind is never looked at again")
	}
}
