package assess

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flagger"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// What the decision reads for a Canary (canary.go): the Canaries of a workload's namespace,
// a Canary's target and its primary, and the ConfigMaps and Secrets Flagger tracks.

// canaryOf finds the Canary that targets the workload u of the tree, listing the Canaries of
// its namespace when the cluster serves the kind. ok is false while that cannot be told yet;
// note says why the workload is judged without Flagger (credentials that may not list
// Canaries).
func (a *assessor) canaryOf(e *Assessment, u *unstructured.Unstructured, ownerID string) (cd *unstructured.Unstructured, note string, ok bool) {
	m := a.view.Mapping(CanaryGVK)
	if !m.Done {
		a.e.need(CanaryGVK)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Discovering", Message: "discovering whether the cluster serves Flagger's Canaries", Progress: ProgressStep})
		return nil, "", false
	}
	if m.Err != nil {
		var notServed NotServedError
		if errors.As(m.Err, &notServed) {
			// No Flagger: judged as any workload.
			return nil, "", true
		}
		a.e.need(CanaryGVK)
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "UnknownKind", Message: "discovering Flagger's Canaries: " + m.Err.Error()})
		e.recheckAt(a.now.Add(MappingRetry))
		return nil, "", false
	}
	ns := u.GetNamespace()
	key := ListKey{GVR: m.Mapping.Resource, Namespace: ns}
	w := a.list(key)
	what := m.Mapping.Resource.Resource + namespaceSuffix(ns)
	ready, forbidden := a.optionalWatchReady(e, w, what)
	if forbidden != "" {
		return nil, "not checked against Flagger's Canaries: " + forbidden, true
	}
	if !ready {
		e.listOnItsWay(w)
		return nil, "", false
	}
	a.consistent(key, w, ownerID)
	kind, name := u.GetKind(), u.GetName()
	for _, item := range w.Items() {
		c, isU := item.(*unstructured.Unstructured)
		if !isU {
			continue
		}
		tk, _, _ := unstructured.NestedString(c.Object, "spec", "targetRef", "kind")
		tn, _, _ := unstructured.NestedString(c.Object, "spec", "targetRef", "name")
		if tk == kind && tn == name && (cd == nil || c.GetName() < cd.GetName()) {
			cd = c
		}
	}
	return cd, "", true
}

// judgeCanaryObject judges Canary cd, reading its target and primary; ok is false while
// their list is on its way.
func (a *assessor) judgeCanaryObject(e *Assessment, cd *unstructured.Unstructured, ownerID string) (flagger.Judgement, bool) {
	c := flagger.Read(cd)
	ns := cd.GetNamespace()
	t := flagger.Target{PrimaryID: result.ObjectID(c.TargetKind, ns, c.TargetName+"-primary")}
	if gvr, workload := canaryTargets[c.TargetKind]; workload {
		t.Workload = true
		key := ListKey{GVR: gvr, Namespace: ns}
		w := a.list(key)
		if !a.watchReady(e, w, gvr.Resource+namespaceSuffix(ns)) {
			e.listOnItsWay(w)
			return flagger.Judgement{}, false
		}
		a.consistent(key, w, ownerID)
		gvk := gvr.GroupVersion().WithKind(c.TargetKind)
		var target *unstructured.Unstructured
		if obj, ok := w.Object(ns, c.TargetName); ok {
			target, t.Found = AsUnstructured(obj, gvk)
		}
		if t.Found {
			t.Written = w.Facts(ns, c.TargetName).TemplateWritten
		}
		if obj, ok := w.Object(ns, c.TargetName+"-primary"); ok {
			memo := a.mem.statuses.status(obj, gvk, a.spec.Health, nil)
			if memo.ok && memo.u != nil {
				t.PrimaryFound = true
				t.PrimaryStatus, t.PrimaryMessage = memo.status, memo.msg
				if memo.err != nil {
					t.PrimaryStatus, t.PrimaryMessage = result.ObjectUnknown, memo.err.Error()
				}
				if t.Found {
					t.Differs = cmp.Or(flagger.ImageDiff(target, memo.u), flagger.TemplateDiff(target, memo.u))
				}
			}
		}
	}
	if !a.trackedWritten(e, c, ns, ownerID, &t) {
		return flagger.Judgement{}, false
	}
	key := c.ID + "@" + t.Written.String() + "@" + c.Since.String()
	var staleFor time.Duration
	if first, seen := a.mem.canaryStale[key]; seen {
		staleFor = a.now.Sub(first)
	}
	j := flagger.Judge(c, t, staleFor)
	if j.Stale {
		if a.mem.canaryStale == nil {
			a.mem.canaryStale = map[string]time.Time{}
		}
		if _, seen := a.mem.canaryStale[key]; !seen {
			a.mem.canaryStale[key] = a.now
		}
		e.recheckAt(a.mem.canaryStale[key].Add(c.Pickup()))
	}
	return j, true
}

// isCanary reports whether an inventory entry is a Flagger Canary.
func isCanary(o flux.ObjectRef) bool { return o.Group == CanaryGVK.Group && o.Kind == CanaryGVK.Kind }

// judgedByCanary applies what a Canary says to ro, the object it judges (the Canary itself,
// or the workload it targets): current is whether the owner applied the expected revision,
// so a failure is this revision's. A Canary's status replaces kstatus's, which calls a
// Canary Current whatever its phase, and a target Current once its own pods are ready.
func judgedByCanary(ro *result.Object, j flagger.Judgement, current bool) {
	ro.Status = j.Status
	ro.Message = joinMessage(j.Message, ro.Message)
	if j.Failed {
		if current {
			ro.Failure = &result.Failure{Code: result.CodeCanaryFailed, Reason: flagger.PhaseFailed, Message: j.Message}
		} else {
			// The previous revision's failure: the expected one may fix it.
			ro.Status = result.ObjectInProgress
		}
	}
}

// canaryJudgement is what a Canary says of inventory object o (u as cached): judged is false
// for an object no Canary judges; ok is false while that cannot be told yet. A note on the
// object (Canaries the credentials may not list) is added to ro's message.
func (a *assessor) canaryJudgement(e *Assessment, o flux.ObjectRef, u *unstructured.Unstructured, ownerID string, ro *result.Object) (j flagger.Judgement, judged, ok bool) {
	switch {
	case isCanary(o):
		j, ok = a.judgeCanaryObject(e, u, ownerID)
		return j, ok, ok
	case o.Group == "apps" && canaryTargets[o.Kind] != (schema.GroupVersionResource{}):
		cd, note, found := a.canaryOf(e, u, ownerID)
		ro.Message = joinMessage(ro.Message, note)
		if !found {
			return j, false, false
		}
		if cd == nil {
			return j, false, true
		}
		j, ok = a.judgeCanaryObject(e, cd, ownerID)
		return j, ok, ok
	}
	return j, false, true
}

// trackedConfigs are the kinds of the configuration Flagger tracks, by its key's prefix.
var trackedConfigs = map[string]schema.GroupVersionResource{
	"configmap": {Version: "v1", Resource: "configmaps"},
	"secret":    {Version: "v1", Resource: "secrets"},
}

// trackedWritten compares each ConfigMap and Secret Flagger tracks for c with its NAME-primary
// copy (which the primary's template names) by their data, as Flagger does: it keeps a
// checksum of the data only (Flagger v1.36.1 pkg/canary/config_tracker.go checksum,
// HasConfigChanged) and, when it promotes, copies the data to the copy
// (CreatePrimaryConfigs). A copy whose data are not the source's says which (t.Configs), and
// the source's last write of its data (the managedFields entries owning them, kept by the
// view's metadata-only lists) moves t.Written: a change of data starts an analysis of the same
// template. A write that changed no data (a label, by kustomize-controller's one server-side
// apply entry that owns the data too) is not a change: Flagger never rewrites the copy for it.
// A read the credentials may not make leaves that unproven (t.Unproven), and the Canary waits.
// (Flagger's own status.trackedConfigs is no proof of a promotion: SyncStatus rewrites it at
// every tick, a Failed one's too, pkg/canary/deployment_status.go.) ok is false while a list
// or a read is on its way.
func (a *assessor) trackedWritten(e *Assessment, c flagger.Canary, ns, ownerID string, t *flagger.Target) (ok bool) {
	ok = true
	for _, key := range c.Tracked {
		kind, name, _ := strings.Cut(key, "/")
		gvr, known := trackedConfigs[kind]
		if !known {
			continue
		}
		key := ListKey{GVR: gvr, Namespace: ns}
		w := a.list(key)
		ready, forbidden := a.optionalWatchReady(e, w, gvr.Resource+namespaceSuffix(ns))
		if forbidden != "" {
			if t.Unproven == "" {
				t.Unproven = fmt.Sprintf("whether Flagger promoted the %s %s it tracks is unknown: %s", kind, name, forbidden)
			}
			continue
		}
		if !ready {
			e.listOnItsWay(w)
			return false
		}
		a.consistent(key, w, ownerID)
		obj, found := w.Object(ns, name)
		if !found {
			continue
		}
		differs, unreadable, read := a.trackedDiffers(e, w, kind, ns, name)
		switch {
		case !read:
			ok = false
			continue
		case unreadable != "":
			if t.Unproven == "" {
				t.Unproven = fmt.Sprintf("whether Flagger promoted the %s %s it tracks is unknown: %s", kind, name, unreadable)
			}
		case differs == "":
			continue
		}
		if written := lastWrite(obj); written.After(t.Written) {
			t.Written = written
		}
		if t.Configs == "" {
			t.Configs = differs
		}
	}
	return ok
}

// trackedDiffers says how the data of name, tracked as kind ("configmap", "secret") and listed
// in w, differ from its NAME-primary copy's ("" when they are the same), or why that cannot be
// told (unreadable); read is false while their data are being read.
func (a *assessor) trackedDiffers(e *Assessment, w List, kind, ns, name string) (differs, unreadable string, read bool) {
	gvr := trackedConfigs[kind]
	id := result.ObjectID(trackedKinds[kind], ns, name)
	copyObj, found := w.Object(ns, name+flagger.PrimarySuffix)
	if !found {
		return fmt.Sprintf("%s has no primary copy %s%s", id, name, flagger.PrimarySuffix), "", true
	}
	obj, _ := w.Object(ns, name)
	src, srcRead := a.configData(e, gvr, ns, name, obj)
	cp, cpRead := a.configData(e, gvr, ns, name+flagger.PrimarySuffix, copyObj)
	switch {
	case !srcRead || !cpRead:
		return "", "", false
	case src.Unreadable != "" || cp.Unreadable != "":
		return "", cmp.Or(src.Unreadable, cp.Unreadable), true
	case src.Checksum != cp.Checksum:
		return fmt.Sprintf("the data of %s differ from its primary copy %s%s's", id, name, flagger.PrimarySuffix), "", true
	}
	return "", "", true
}

// configData is what the view read of the data of ConfigMap or Secret ns/name, obj as its
// metadata-only list holds it, at that object's resourceVersion; read is false while it is
// being read (a need).
func (a *assessor) configData(e *Assessment, gvr schema.GroupVersionResource, ns, name string, obj any) (stored StoredConfig, read bool) {
	rv := ""
	if acc, err := meta.Accessor(obj); err == nil {
		rv = acc.GetResourceVersion()
	}
	key := gvr.Resource + "/" + ns + "/" + name + "@" + rv
	stored, cached := a.view.Config(key)
	if !cached || (!stored.RetryAt.IsZero() && !a.now.Before(stored.RetryAt)) {
		e.need(ConfigNeed{Key: key, GVR: gvr, Namespace: ns, Name: name})
	}
	if !cached {
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Reading",
			Message: fmt.Sprintf("reading the data of %s %s/%s, which a Flagger Canary tracks", gvr.Resource, ns, name), Progress: ProgressStep})
		return stored, false
	}
	e.retryReadAt(stored.RetryAt, a.now)
	return stored, true
}

// FlaggerChecksum is the checksum Flagger v1.36.1 keeps of a tracked ConfigMap's or Secret's
// data (pkg/canary/config_tracker.go checksum): the first 8 bytes of the SHA-256 of the data's
// JSON, in hex. data is a ConfigMap's Data (map[string]string: its binaryData is not in it) or
// a Secret's Data (map[string][]byte, which JSON writes in base64, as an unstructured Secret
// holds it).
func FlaggerChecksum(data any) string {
	b, _ := json.Marshal(data) // (as Flagger: data of these types always marshal)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// trackedKinds are the kinds of trackedConfigs' keys.
var trackedKinds = map[string]string{"configmap": "ConfigMap", "secret": "Secret"}

// lastWrite is the latest time of obj's managedFields entries that own its data (f:data,
// f:binaryData or f:stringData); zero when none says. It dates a change of data that the data
// themselves showed (trackedWritten): an entry that owns the data moves with a write of the
// labels alone too, when one manager owns both (a server-side apply).
func lastWrite(obj any) time.Time {
	var latest time.Time
	acc, err := meta.Accessor(obj)
	if obj == nil || err != nil {
		return latest
	}
	for _, f := range acc.GetManagedFields() {
		if f.Time == nil || f.FieldsV1 == nil || !f.Time.After(latest) {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &top) != nil {
			continue
		}
		for _, field := range []string{"f:data", "f:binaryData", "f:stringData"} {
			if _, owns := top[field]; owns {
				latest = f.Time.UTC()
				break
			}
		}
	}
	return latest
}
