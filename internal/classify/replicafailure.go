package classify

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// retriedRefusalWords are the words of a refusal to create pods that may pass by itself while
// the controller retries: a quota the old pods still hold (the surge pod of a rolling update),
// a webhook that is not up yet (installed by the same rollout), a service account on its way.
// A policy that denies the pod, or a LimitRange it exceeds, needs a change: it fails at once.
var retriedRefusalWords = []string{
	"exceeded quota", "failed calling webhook", "no endpoints available", "connection refused",
	"context deadline exceeded", "i/o timeout", "error looking up service account",
}

// refusal says whether a controller's refusal to create pods (ReplicaFailure, set at since)
// fails the rollout now, and with what message: at once when it cannot pass by itself, once
// Options.RetryGrace has passed when it may.
func (e *findings) refusal(message string, since time.Time) (string, bool) {
	m := strings.ToLower(message)
	for _, w := range retriedRefusalWords {
		if strings.Contains(m, w) {
			lasted := e.lasted(since, e.opts.RetryGrace)
			if !e.elapsed(since, e.opts.RetryGrace) {
				e.note(fmt.Sprintf("pods refused since %s, fails at %s: %s", stamp(since), stamp(since.Add(e.opts.RetryGrace)), message))
				return "", false
			}
			return fmt.Sprintf("still refused after %s: %s", lasted, message), true
		}
	}
	return message, true
}

// replicaFailureCode tells why a controller could not create pods, from the API server's
// refusal it quotes in its ReplicaFailure condition:
//   - quota: a ResourceQuota ("exceeded quota") or a LimitRange ("maximum cpu usage per
//     Container", "must specify limits.memory") refused them: raise the quota or lower the
//     requests;
//   - admission-denied: an admission webhook, a ValidatingAdmissionPolicy or Pod Security
//     admission refused them: the policy's message says what it wants;
//   - config: the pod refers to what does not exist (a service account), or is invalid.
//
// A refusal it does not recognise is admission-denied when the API server called it forbidden
// (only admission forbids a create the controller may make), config otherwise.
func replicaFailureCode(message string) result.Code {
	m := strings.ToLower(message)
	switch {
	case strings.Contains(m, "exceeded quota"), strings.Contains(m, "per container"),
		strings.Contains(m, "per pod"), strings.Contains(m, "must specify limits"),
		strings.Contains(m, "must specify requests"), strings.Contains(m, "limitrange"):
		return result.CodeQuota
	case strings.Contains(m, "service account"), strings.Contains(m, "serviceaccount"):
		return result.CodeConfig
	case strings.Contains(m, "violates podsecurity"), strings.Contains(m, "admission webhook"), strings.Contains(m, "failed calling webhook"),
		strings.Contains(m, "validatingadmissionpolicy"), strings.Contains(m, "denied the request"),
		strings.Contains(m, "is forbidden"):
		return result.CodeAdmissionDenied
	}
	return result.CodeConfig
}
