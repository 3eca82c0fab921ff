package report

import (
	"fmt"
	"sort"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// node is a Flux object of a cluster, with what its inventory lists.
type node struct {
	flux    result.FluxObject
	total   int     // objects its inventory lists
	current int     // of those, the ones that are Current
	entries []entry // nested Flux objects and objects that are not Current, sorted by ID
}

// entry is one line under a node: a nested Flux object or an object that is not Current.
type entry struct {
	id     string
	node   *node
	object *result.Object
}

// tree is what the reports show of a cluster that is not Current: its Flux objects nested by
// Owner, with the objects that are not Current under the Flux object that lists them. Current
// objects are only counted.
type tree struct {
	roots []*node
	// orphans are objects that are not Current whose owner is not among the Flux objects.
	orphans []result.Object
}

// listed is how many objects the tree lists (those that are not Current).
func (t tree) listed() int {
	n := len(t.orphans)
	var walk func(*node)
	walk = func(nd *node) {
		for _, e := range nd.entries {
			if e.object != nil {
				n++
			} else {
				walk(e.node)
			}
		}
	}
	for _, r := range t.roots {
		walk(r)
	}
	return n
}

func buildTree(c result.Cluster) tree {
	nodes := make([]*node, len(c.Flux))
	byID := make(map[string]*node, len(c.Flux))
	for i, f := range c.Flux {
		nodes[i] = &node{flux: f}
		if _, dup := byID[f.ID]; !dup {
			byID[f.ID] = nodes[i]
		}
	}

	var t tree
	for i := range c.Objects {
		o := &c.Objects[i]
		owner := byID[o.Owner]
		if owner != nil {
			owner.total++
			if o.Status == result.ObjectCurrent {
				owner.current++
			}
		}
		if o.Status == result.ObjectCurrent {
			continue
		}
		// A nested Flux object is also an object of its owner's inventory: its own line
		// says more, unless the object carries a failure.
		if _, isFlux := byID[o.ID]; isFlux && o.Failure == nil {
			continue
		}
		if owner == nil {
			t.orphans = append(t.orphans, *o)
			continue
		}
		owner.entries = append(owner.entries, entry{id: o.ID, object: o})
	}

	for _, n := range nodes {
		if parent := rootedParent(n, byID, len(nodes)); parent != nil {
			parent.entries = append(parent.entries, entry{id: n.flux.ID, node: n})
			continue
		}
		t.roots = append(t.roots, n)
	}
	for _, n := range nodes {
		sort.SliceStable(n.entries, func(i, j int) bool { return n.entries[i].id < n.entries[j].id })
	}
	return t
}

// rootedParent is the node n nests under: its owner, when following owners from n ends at a
// Flux object without one (a requested one). A Flux object without an owner, with an owner
// that was not checked, or in a cycle of owners is a root: it is nil.
func rootedParent(n *node, byID map[string]*node, limit int) *node {
	parent := byID[n.flux.Owner]
	if n.flux.Owner == "" || parent == nil {
		return nil
	}
	for cur, steps := parent, 0; ; cur, steps = byID[cur.flux.Owner], steps+1 {
		if cur == n || steps > limit {
			return nil
		}
		if cur.flux.Owner == "" || byID[cur.flux.Owner] == nil {
			return parent
		}
	}
}

// fluxFacts are the parts of a Flux object's line after its ID, most telling first and the
// message last: its verdict when not Current, Ready, revisions, how many of its objects are
// Current; and the reason and message of its Ready condition when it is not True.
func fluxFacts(n *node) (facts []string, message string) {
	f := n.flux
	if f.Verdict != result.VerdictCurrent && f.Verdict != "" {
		facts = append(facts, verdictCode(f.Verdict, f.Code))
	}
	if f.Ready != "" {
		facts = append(facts, "Ready="+f.Ready)
	}
	if f.LastAppliedRevision != "" {
		facts = append(facts, "applied "+flux.ShortRevision(f.LastAppliedRevision))
	}
	if f.LastAttemptedRevision != "" && f.LastAttemptedRevision != f.LastAppliedRevision {
		facts = append(facts, "attempted "+flux.ShortRevision(f.LastAttemptedRevision))
	}
	if f.ChartVersion != "" && f.ChartVersion != f.LastAppliedRevision {
		facts = append(facts, "chart "+f.ChartVersion)
	}
	if f.Suspended && f.Verdict != result.VerdictSuspended {
		facts = append(facts, "suspended")
	}
	if f.ObservedGeneration != f.Generation {
		facts = append(facts, fmt.Sprintf("generation %d observed %d", f.Generation, f.ObservedGeneration))
	}
	if n.total > 0 {
		facts = append(facts, fmt.Sprintf("%d/%d objects Current", n.current, n.total))
	}
	if f.Ready != "True" {
		message = joinNonEmpty(": ", f.Reason, f.Message)
	}
	return facts, message
}

// objectSummary is what an object's line says after its ID and status: the classified
// failure when there is one, otherwise the kstatus message.
func objectSummary(o *result.Object) string {
	if o.Failure == nil {
		return o.Message
	}
	return joinNonEmpty(": ", string(o.Failure.Code), o.Failure.Reason, o.Failure.Message)
}

// statusMessage is the kstatus message of a failing object, when it adds to the failure.
func statusMessage(o *result.Object) string {
	if o.Failure == nil || o.Message == o.Failure.Message {
		return ""
	}
	return o.Message
}

// eventCount is " (x3)" for an event seen more than once.
func eventCount(e result.Event, times string) string {
	if e.Count <= 1 {
		return ""
	}
	return fmt.Sprintf(" (%s%d)", times, e.Count)
}
