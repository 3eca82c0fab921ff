package result

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Group is the clusters of a run that share a verdict and a failure code.
type Group struct {
	Verdict  Verdict
	Code     Code
	Clusters []string // sorted by name
}

// verdictOrder ranks verdicts for the rollup: what needs action first, Current last.
var verdictOrder = []Verdict{
	VerdictUnknown, VerdictFailed, VerdictNotFound, VerdictUnauthorized, VerdictForbidden, VerdictInvalidConfig,
	VerdictUnverified, VerdictUnreachable, VerdictThrottled, VerdictTimeout, VerdictCancelled, VerdictSuspended,
	VerdictInProgress, VerdictCurrent,
}

// MoreUrgent reports whether verdict a needs action before verdict b, in the rollup's order: a
// Failed before a NotFound, both before an Unverified or a Suspended.
func MoreUrgent(a, b Verdict) bool { return verdictRank(a) < verdictRank(b) }

func verdictRank(v Verdict) int {
	if i := slices.Index(verdictOrder, v); i >= 0 {
		return i
	}
	return len(verdictOrder)
}

// Rollup groups the clusters by verdict and code: the groups that need action first (by
// verdict, then the biggest group first, then by code), Current last.
func Rollup(clusters []Cluster) []Group {
	byKey := map[[2]string]*Group{}
	var groups []*Group
	for _, c := range clusters {
		key := [2]string{string(c.Verdict), string(c.Code)}
		g := byKey[key]
		if g == nil {
			g = &Group{Verdict: c.Verdict, Code: c.Code}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.Clusters = append(g.Clusters, c.Name)
	}
	out := make([]Group, len(groups))
	for i, g := range groups {
		slices.Sort(g.Clusters)
		out[i] = *g
	}
	slices.SortFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(verdictRank(a.Verdict), verdictRank(b.Verdict)),
			cmp.Compare(len(b.Clusters), len(a.Clusters)), strings.Compare(string(a.Code), string(b.Code)),
			strings.Compare(string(a.Verdict), string(b.Verdict)))
	})
	return out
}

// Label is "Failed (image-pull)", or the bare verdict.
func (g Group) Label() string {
	if g.Code == "" {
		return string(g.Verdict)
	}
	return fmt.Sprintf("%s (%s)", g.Verdict, g.Code)
}

// Names lists at most n of the group's clusters, then "and N more".
func (g Group) Names(n int) string {
	if len(g.Clusters) <= n {
		return strings.Join(g.Clusters, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(g.Clusters[:n], ", "), len(g.Clusters)-n)
}
