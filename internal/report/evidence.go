package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/org/app-status-action/internal/result"
)

// Evidence says how much of what a failing rollout left on the cluster the published results
// keep (input evidence, flag --evidence): in a public repository, the job summary, the report
// files, the outputs, the JUnit report, the annotations and the pull-request comment are
// world-readable.
type Evidence string

// The evidence settings.
const (
	// EvidenceFull keeps the last lines of a failing container's log and the Warning events
	// (the default).
	EvidenceFull Evidence = "full"
	// EvidenceNoLogs leaves the containers' logs out; the events stay.
	EvidenceNoLogs Evidence = "no-logs"
	// EvidenceNone leaves the logs and the events out: a failure keeps its code, reason and
	// the status message Kubernetes wrote (waiting reason, exit code, condition), no text a
	// container or an event wrote.
	EvidenceNone Evidence = "none"
)

// ParseEvidence reads the evidence input or flag: full (or empty), no-logs or none.
func ParseEvidence(v string) (Evidence, error) {
	switch e := Evidence(strings.ToLower(strings.TrimSpace(v))); e {
	case "":
		return EvidenceFull, nil
	case EvidenceFull, EvidenceNoLogs, EvidenceNone:
		return e, nil
	}
	return "", fmt.Errorf("%q is not an evidence setting: use full, no-logs or none", v)
}

// KeepEvidence returns run with the failures' evidence that e leaves out removed: the one
// place it is applied, on the result before any renderer or publisher sees it. It copies what
// it changes and leaves run as it was.
func KeepEvidence(run result.Run, e Evidence) result.Run {
	if e == EvidenceFull || e == "" {
		return run
	}
	run.Results = slices.Clone(run.Results)
	for i := range run.Results {
		c := &run.Results[i]
		if !slices.ContainsFunc(c.Objects, func(o result.Object) bool { return o.Failure != nil }) {
			continue
		}
		c.Objects = slices.Clone(c.Objects)
		for j := range c.Objects {
			f := c.Objects[j].Failure
			if f == nil {
				continue
			}
			kept := *f
			kept.Logs, kept.LogsError = "", ""
			if e == EvidenceNone {
				kept.Events, kept.EventsError = nil, ""
			}
			c.Objects[j].Failure = &kept
		}
	}
	return run
}
