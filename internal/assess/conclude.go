package assess

import (
	"fmt"
	"time"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/result"
)

// CurrentMessage says what was verified; the applied revision has a column of its own. It
// names what was left out: objects the credentials may not read, nested Flux objects that are
// suspended, objects applied to a remote cluster.
func CurrentMessage(c *Assessment) string {
	msg := fmt.Sprintf("%d Flux objects Ready", len(c.Flux))
	if len(c.Objects) > 0 {
		unverified, ignored := 0, c.ReadinessIgnored
		for _, o := range c.Objects {
			if o.Status != result.ObjectCurrent {
				unverified++
			}
		}
		unverified -= ignored
		msg = fmt.Sprintf("%d objects Current", len(c.Objects)-unverified-ignored)
		if unverified > 0 {
			msg += fmt.Sprintf(", %d not verified (the credentials may not read them)", unverified)
		}
		if ignored > 0 {
			msg += fmt.Sprintf(", %d not verified (%s)", ignored, classify.AnnotationIgnoreReadiness)
		}
	}
	var suspended, remote []string
	for _, f := range c.Flux {
		switch {
		case f.Verdict == result.VerdictSuspended:
			suspended = append(suspended, f.ID)
		case f.Remote:
			remote = append(remote, f.ID)
		}
	}
	if len(suspended) > 0 {
		msg += "; suspended, not verified: " + FewOf(suspended)
	}
	if len(remote) > 0 {
		msg += "; applied to a remote cluster (spec.kubeConfig), not verified here: " + FewOf(remote)
	}
	return msg
}

// ThrottledMessage says the API server refuses to answer for now, and for how long it asked
// to wait.
func ThrottledMessage(wait time.Duration, what string) string {
	after := ""
	if wait > 0 {
		after = fmt.Sprintf(" and asked to retry after %s", wait)
	}
	return fmt.Sprintf("the API server answered 429 Too Many Requests while reading %s%s: it is overloaded or limits this client "+
		"(API Priority and Fairness); retry later or raise the limits of the kubeconfig's user", what, after)
}
