// Package fakeapi is a stand-in for a Kubernetes API server, in-process on 127.0.0.1, for the
// faults a real server does not produce on demand (hanging, throttling, failing, expiring its
// watches) and for scale tests with many clusters. It serves discovery, get, list and watch of
// a fixed set of objects, the way client-go's discovery, dynamic, metadata and typed clients
// read them (the metadata client's gets and lists, and the lists of built-in kinds a typed
// client asks for, in protobuf, as kube-apiserver answers them; watches, which stay quiet, in
// JSON). It is no proof that the product works with
// Kubernetes: the test bed's real API servers are.
package fakeapi

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Behaviour is how a server answers.
type Behaviour int

// The behaviours.
const (
	Healthy       Behaviour = iota // answers every request from its objects; watches stay open, quiet
	Hang                           // accepts connections and never answers
	Throttle                       // answers every request 429 Too Many Requests with Retry-After
	Fail                           // answers every request 500 Internal Server Error
	HangWatch                      // answers gets and lists; every watch stays open and silent, never sending the initial events
	GoneWatch                      // like Healthy, but each watch first ends with 410 Gone (the client must list again)
	HangDiscovery                  // like Healthy, but discovery (/api, /apis and their resource lists) never answers
)

func (b Behaviour) String() string {
	return [...]string{"healthy", "hang", "throttle", "fail", "hang-watch", "gone-watch", "hang-discovery"}[b]
}

// Resource is a kind the server serves.
type Resource struct {
	Group, Version, Kind, Plural string
	Namespaced                   bool
}

func (r Resource) groupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Server is one fake API server.
type Server struct {
	srv        *httptest.Server
	behaviour  Behaviour
	retryAfter int
	resources  []Resource
	refusals   []Refusal
	opaque     bool
	beforeList func(plural, namespace string)
	beforeGet  func(plural, namespace, name string)
	mu         sync.Mutex
	objects    map[string][]map[string]any // by resource key group/version/plural
	revision   int                         // the revision lists answer at (Set moves it)
	stop       chan struct{}
	closeOnce  sync.Once
	requests   atomic.Int64
	protobufs  atomic.Int64
}

// Options configures a server.
type Options struct {
	Behaviour Behaviour
	// RetryAfter is the Retry-After, in seconds, a throttling server asks for (default 30).
	RetryAfter int
	// Resources are the kinds served, Objects their objects (each a full object with
	// apiVersion, kind and metadata).
	Resources []Resource
	Objects   []map[string]any
	// Refusals are the reads of a kind the server answers with an error, as a proxy that
	// restricts what may be read in front of it does, or a server that does not serve the
	// kind there; checked before everything else of a resource's path.
	Refusals []Refusal
	// TLS, when set, serves HTTPS (HTTP/2 and HTTP/1.1) with this configuration (its
	// certificate, and the client certificates it asks for), as a real API server does; nil
	// serves plain HTTP/1.1.
	TLS *tls.Config
	// OpaqueRevisions writes every resourceVersion the server gives (its lists', and those
	// Set gives objects) as a string that is no number, as a server whose resourceVersions
	// are not etcd revisions does; it numbers them otherwise, from the highest of Objects
	// (1 at least), as etcd would have.
	OpaqueRevisions bool
	// BeforeList, when set, is called with the resource and namespace of every list before it
	// is answered (not of a watch's initial list), as the cluster changes while it serves it.
	BeforeList func(plural, namespace string)
	// BeforeGet, when set, is called with the resource, namespace and name of every read of
	// one object before it is answered.
	BeforeGet func(plural, namespace, name string)
}

// Refusal refuses every read (list, watch, get) of the resource Plural, in Namespace ("" for
// every namespace and the cluster-wide reads), with the HTTP status Code: 404 as a server that
// does not serve the resource there (no object named), 403 as RBAC refuses, 0 by never
// answering (a proxy that hangs), any other as an internal error.
type Refusal struct {
	Plural, Namespace string
	Code              int
}

// Start starts a server on 127.0.0.1; Close stops it.
func Start(opts Options) *Server {
	s := &Server{behaviour: opts.Behaviour, retryAfter: opts.RetryAfter, resources: opts.Resources, refusals: opts.Refusals,
		opaque: opts.OpaqueRevisions, beforeList: opts.BeforeList, beforeGet: opts.BeforeGet, objects: map[string][]map[string]any{}, revision: 1, stop: make(chan struct{})}
	if s.retryAfter == 0 {
		s.retryAfter = 30
	}
	for _, o := range opts.Objects {
		if s.opaque {
			// (Every object at a resourceVersion of the server's own kind.)
			s.Set(o)
			continue
		}
		md, _ := o["metadata"].(map[string]any)
		if rv, _ := md["resourceVersion"].(string); rv != "" {
			// A list is never older than what it holds.
			if n, err := strconv.Atoi(rv); err == nil && n > s.revision {
				s.revision = n
			}
		}
		apiVersion, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		for _, r := range s.resources {
			if r.groupVersion() == apiVersion && r.Kind == kind {
				key := resourceKey(r.Group, r.Version, r.Plural)
				s.objects[key] = append(s.objects[key], o)
			}
		}
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// A client that gives up mid-handshake (a verdict given, a run stopped) is no news.
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS != nil {
		// HTTP/2, as a real API server speaks it: a client's lists and watches share one
		// connection (one TLS handshake), where HTTP/1.1 opens one per open watch.
		s.srv.EnableHTTP2 = true
		s.srv.TLS = opts.TLS
		s.srv.StartTLS()
		return s
	}
	s.srv.Start()
	return s
}

// URL is the server's base URL, for a kubeconfig's server.
func (s *Server) URL() string { return s.srv.URL }

// Set stores obj (a full object with apiVersion, kind and metadata), in place of the object
// of its kind, namespace and name if there is one, at the server's next revision, which
// becomes its resourceVersion and that of every list after. Watches open already are not
// told: they hold what they had, as a watch stream behind the cluster does. It returns that
// resourceVersion.
func (s *Server) Set(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision++
	stored := map[string]any{}
	for k, v := range obj {
		stored[k] = v
	}
	meta := map[string]any{}
	for k, v := range md {
		meta[k] = v
	}
	meta["resourceVersion"] = s.revisionString()
	stored["metadata"] = meta
	for _, r := range s.resources {
		if r.groupVersion() != apiVersion || r.Kind != kind {
			continue
		}
		key := resourceKey(r.Group, r.Version, r.Plural)
		objects := s.objects[key]
		i := 0
		for ; i < len(objects); i++ {
			if name(objects[i]) == name(stored) && namespace(objects[i]) == namespace(stored) {
				break
			}
		}
		// (A new slice: lists and watches under way keep the one they read.)
		s.objects[key] = append(append(append([]map[string]any{}, objects[:i]...), stored), objects[min(i+1, len(objects)):]...)
	}
	return s.revisionString()
}

// revisionString is the server's revision as it writes resourceVersions; s.mu is held.
func (s *Server) revisionString() string {
	if s.opaque {
		return fmt.Sprintf("opaque-%d", s.revision)
	}
	return strconv.Itoa(s.revision)
}

// ProtobufLists is how many lists of whole objects (not metadata) the server answered in
// protobuf.
func (s *Server) ProtobufLists() int64 { return s.protobufs.Load() }

// Requests is how many requests the server has received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close makes hanging requests return and stops the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func resourceKey(group, version, plural string) string { return group + "/" + version + "/" + plural }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	switch s.behaviour {
	case Hang:
		s.wait(r)
		return
	case Throttle:
		w.Header().Set("Retry-After", strconv.Itoa(s.retryAfter))
		writeStatus(w, http.StatusTooManyRequests, "TooManyRequests", "the server has received too many requests and has asked us to try again later")
		return
	case Fail:
		writeStatus(w, http.StatusInternalServerError, "InternalError", "an error on the server (\"etcdserver: request timed out\") has prevented the request from succeeding")
		return
	}
	path := strings.Trim(r.URL.Path, "/")
	if s.behaviour == HangDiscovery && isDiscovery(path) {
		s.wait(r)
		return
	}
	switch path {
	case "api":
		writeJSON(w, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}, "serverAddressByClientCIDRs": []any{}})
	case "apis":
		writeJSON(w, s.groupList())
	case "version":
		writeJSON(w, map[string]any{"major": "1", "minor": "36", "gitVersion": "v1.36.3-fakeapi"})
	default:
		s.serveResource(w, r, strings.Split(path, "/"))
	}
}

// isDiscovery reports whether a path is discovery's: /api, /apis, /api/v1, /apis/GROUP/VERSION.
func isDiscovery(path string) bool {
	parts := strings.Split(path, "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// wait blocks until the client goes away or the server closes.
func (s *Server) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.stop:
	}
}

func (s *Server) groupList() map[string]any {
	versions := map[string][]string{}
	var groups []string
	for _, r := range s.resources {
		if r.Group == "" {
			continue
		}
		if _, ok := versions[r.Group]; !ok {
			groups = append(groups, r.Group)
		}
		if !contains(versions[r.Group], r.Version) {
			versions[r.Group] = append(versions[r.Group], r.Version)
		}
	}
	sort.Strings(groups)
	var list []any
	for _, g := range groups {
		var vs []any
		for _, v := range versions[g] {
			vs = append(vs, map[string]any{"groupVersion": g + "/" + v, "version": v})
		}
		list = append(list, map[string]any{"name": g, "versions": vs, "preferredVersion": vs[0]})
	}
	return map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": list}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// serveResource answers /api/v1/..., /apis/GROUP/VERSION/...: a resource list (discovery), a
// list or watch of a kind (in a namespace or all), or one object.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, parts []string) {
	var group, version string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		version, rest = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, version, rest = parts[1], parts[2], parts[3:]
	default:
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	if len(rest) == 0 {
		s.writeResourceList(w, group, version)
		return
	}
	namespace := ""
	if rest[0] == "namespaces" && len(rest) >= 3 {
		namespace, rest = rest[1], rest[2:]
	}
	if s.refuse(w, r, group, namespace, rest[0]) {
		return
	}
	res, ok := s.resource(group, version, rest[0])
	if !ok {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	if len(rest) == 2 && s.beforeGet != nil {
		s.beforeGet(res.Plural, namespace, rest[1])
	}
	objects, revision := s.inNamespace(res, namespace)
	metadataOnly := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	if len(rest) == 2 {
		for _, o := range objects {
			if name(o) != rest[1] {
				continue
			}
			if metadataOnly {
				writeMetadata(w, r, partial(o))
				return
			}
			writeJSON(w, o)
			return
		}
		writeStatusDetails(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", res.Plural, rest[1]), rest[1], res)
		return
	}
	if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
		s.watch(w, r, res, objects, revision, metadataOnly)
		return
	}
	if s.beforeList != nil {
		s.beforeList(res.Plural, namespace)
	}
	s.writeList(w, r, res, objects, revision, metadataOnly)
}

// refuse answers a read that a Refusal refuses, and reports whether it did.
func (s *Server) refuse(w http.ResponseWriter, req *http.Request, group, namespace, plural string) bool {
	for _, r := range s.refusals {
		if r.Plural != plural || (r.Namespace != "" && r.Namespace != namespace) {
			continue
		}
		resource := plural
		if group != "" {
			resource += "." + group
		}
		switch r.Code {
		case 0:
			s.wait(req)
		case http.StatusNotFound:
			writeStatus(w, r.Code, "NotFound", "the server could not find the requested resource")
		case http.StatusForbidden:
			writeStatus(w, r.Code, "Forbidden", fmt.Sprintf("%s is forbidden: User \"fakeapi\" cannot list resource %q in API group %q in the namespace %q",
				resource, plural, group, namespace))
		default:
			writeStatus(w, r.Code, "InternalError", "an error on the server (\"proxy: upstream refused\") has prevented the request from succeeding")
		}
		return true
	}
	return false
}

func (s *Server) resource(group, version, plural string) (Resource, bool) {
	for _, r := range s.resources {
		if r.Group == group && r.Version == version && r.Plural == plural {
			return r, true
		}
	}
	return Resource{}, false
}

// inNamespace returns the objects of r in namespace ("" for all) and the revision the server
// is at.
func (s *Server) inNamespace(r Resource, ns string) ([]map[string]any, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, o := range s.objects[resourceKey(r.Group, r.Version, r.Plural)] {
		if ns == "" || namespace(o) == ns {
			out = append(out, o)
		}
	}
	return out, s.revisionString()
}

func name(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

func namespace(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	n, _ := md["namespace"].(string)
	return n
}

func (s *Server) writeResourceList(w http.ResponseWriter, group, version string) {
	var list []any
	for _, r := range s.resources {
		if r.Group == group && r.Version == version {
			list = append(list, map[string]any{"name": r.Plural, "singularName": strings.ToLower(r.Kind), "namespaced": r.Namespaced,
				"kind": r.Kind, "verbs": []string{"get", "list", "watch"}})
		}
	}
	if list == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	writeJSON(w, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
}

func (s *Server) writeList(w http.ResponseWriter, req *http.Request, r Resource, objects []map[string]any, revision string, metadataOnly bool) {
	items := make([]any, 0, len(objects))
	kind, apiVersion := r.Kind+"List", r.groupVersion()
	for _, o := range objects {
		if metadataOnly {
			items = append(items, partial(o))
		} else {
			items = append(items, o)
		}
	}
	list := map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": map[string]any{"resourceVersion": revision}, "items": items}
	if metadataOnly {
		list["kind"], list["apiVersion"] = "PartialObjectMetadataList", "meta.k8s.io/v1"
		writeMetadata(w, req, list)
		return
	}
	if acceptsProtobuf(req) && writeBuiltin(w, list) {
		s.protobufs.Add(1)
		return
	}
	writeJSON(w, list)
}

func acceptsProtobuf(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf)
}

// writeBuiltin writes a list of a built-in kind (client-go's scheme knows it) in protobuf, as
// kube-apiserver answers a client that accepts it; false, nothing written, for any other kind.
func writeBuiltin(w http.ResponseWriter, list map[string]any) bool {
	apiVersion, _ := list["apiVersion"].(string)
	kind, _ := list["kind"].(string)
	obj, err := scheme.Scheme.New(schema.FromAPIVersionAndKind(apiVersion, kind))
	if err != nil {
		return false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list, obj); err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", "fakeapi: "+err.Error())
		return true
	}
	w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
	_ = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, w)
	return true
}

// writeMetadata writes a PartialObjectMetadata or PartialObjectMetadataList (in its JSON
// form) as a real API server answers client-go's metadata client: in protobuf when the
// request accepts it, in JSON otherwise.
func writeMetadata(w http.ResponseWriter, r *http.Request, v map[string]any) {
	if !acceptsProtobuf(r) {
		writeJSON(w, v)
		return
	}
	var obj runtime.Object = &metav1.PartialObjectMetadata{}
	if v["kind"] == "PartialObjectMetadataList" {
		obj = &metav1.PartialObjectMetadataList{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(v, obj); err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", "fakeapi: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
	_ = protobuf.NewSerializer(nil, nil).Encode(obj, w)
}

func partial(o map[string]any) map[string]any {
	return map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
}

// watch keeps a watch open and quiet (Set tells it nothing), after ending the first one
// with 410 Gone for GoneWatch. A streaming list (sendInitialEvents=true, client-go's
// WatchListClient) first gets every object as ADDED and the bookmark that ends the initial
// events, as a real API server sends them; HangWatch never sends them.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, res Resource, objects []map[string]any, revision string, metadataOnly bool) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		defer f.Flush()
		f.Flush()
	}
	if r.URL.Query().Get("sendInitialEvents") == "true" && s.behaviour != HangWatch {
		enc := json.NewEncoder(w)
		kind, apiVersion := res.Kind, res.groupVersion()
		for _, o := range objects {
			if metadataOnly {
				o = partial(o)
			}
			_ = enc.Encode(map[string]any{"type": "ADDED", "object": o})
		}
		if metadataOnly {
			kind, apiVersion = "PartialObjectMetadata", "meta.k8s.io/v1"
		}
		_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{"kind": kind, "apiVersion": apiVersion,
			"metadata": map[string]any{"resourceVersion": revision, "annotations": map[string]any{"k8s.io/initial-events-end": "true"}}}})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	if s.behaviour == GoneWatch && r.URL.Query().Get("resourceVersion") == "1" {
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "ERROR", "object": map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
			"message": "too old resource version: 1 (2)"}})
		return
	}
	timeout := time.Duration(0)
	if t, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	if timeout > 0 {
		select {
		case <-r.Context().Done():
		case <-s.stop:
		case <-time.After(timeout):
		}
		return
	}
	s.wait(r)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code, "message": message})
}

func writeStatusDetails(w http.ResponseWriter, code int, reason, message, name string, r Resource) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code, "message": message,
		"details": map[string]any{"name": name, "group": r.Group, "kind": r.Plural}})
}
