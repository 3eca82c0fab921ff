package cli

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/verify"
)

// envStats names the file a run writes the engine's own counts to (docs/performance.md).
const envStats = "APP_STATUS_STATS"

// runStats is the document APP_STATUS_STATS names: what the engine did, not what it found
// (the report holds that). The fleet benchmark reads it.
type runStats struct {
	// Clusters is how many clusters the run verified, Judged how many of them were judged
	// at least once (the others never answered, or their kubeconfig could not be used).
	Clusters int `json:"clusters"`
	Judged   int `json:"judged"`
	// Passes is how many times the engine judged a cluster's whole tree (assess.Assess), in
	// all; MaxPasses the most one cluster took.
	Passes    int `json:"passes"`
	MaxPasses int `json:"maxPasses"`
}

// newRunStats sums the engine's counts.
func newRunStats(s *verify.Stats) runStats {
	out := runStats{Clusters: len(s.Passes)}
	for _, n := range s.Passes {
		out.Passes += n
		if n > 0 {
			out.Judged++
		}
	}
	if len(s.Passes) > 0 {
		out.MaxPasses = slices.Max(s.Passes)
	}
	return out
}

// writeStats writes the engine's counts to the file APP_STATUS_STATS names, if it names one; a
// file that cannot be written is said on stderr.
func writeStats(env Env, s *verify.Stats) {
	name := env.Getenv(envStats)
	if name == "" {
		return
	}
	data, err := json.Marshal(newRunStats(s))
	if err == nil {
		err = writeDiagnostic(env, name, append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status: %s\n", sanitize.Commands(sanitize.Line(fmt.Sprintf(
			"no stats: %s=%s: %v (name a file in a folder this process can write, or unset it)", envStats, name, err))))
	}
}
