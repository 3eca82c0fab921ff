package verify

import (
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
)

// sinceTracker remembers, for each Flux object and inventory object of one cluster, the status
// it was last seen in and when the run first saw it there: the moments of the summary's
// timeline (result.Object.SinceMs, result.FluxObject.SinceMs).
type sinceTracker map[sinceKey]sinceEntry

// sinceKey names a Flux object (owner empty, flux true) or an inventory object under its owner.
type sinceKey struct {
	flux      bool
	owner, id string
}

type sinceEntry struct {
	status string
	at     time.Duration
}

// note records one assessment made at (from the cluster's start).
func (t sinceTracker) note(e *assess.Assessment, at time.Duration) {
	for _, f := range e.Flux {
		t.update(sinceKey{flux: true, id: f.ID}, string(f.Verdict), at)
	}
	for _, o := range e.Objects {
		t.update(sinceKey{owner: o.Owner, id: o.ID}, string(o.Status), at)
	}
}

func (t sinceTracker) update(key sinceKey, status string, at time.Duration) {
	if cur, ok := t[key]; !ok || cur.status != status {
		t[key] = sinceEntry{status: status, at: at}
	}
}

// stamp sets SinceMs on the cluster's objects that are in the status last noted for them.
func (t sinceTracker) stamp(c *result.Cluster) {
	for i := range c.Flux {
		f := &c.Flux[i]
		if e, ok := t[sinceKey{flux: true, id: f.ID}]; ok && e.status == string(f.Verdict) {
			f.SinceMs = millis(e.at)
		}
	}
	for i := range c.Objects {
		o := &c.Objects[i]
		if e, ok := t[sinceKey{owner: o.Owner, id: o.ID}]; ok && e.status == string(o.Status) {
			o.SinceMs = millis(e.at)
		}
	}
}

func millis(d time.Duration) *int64 {
	ms := max(d.Milliseconds(), 0)
	return &ms
}
