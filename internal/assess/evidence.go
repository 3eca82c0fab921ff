package assess

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/org/app-status-action/internal/result"
)

// EvidenceWait is how long a read done only to explain what was judged may take before the
// verdict is given without it.
const EvidenceWait = 10 * time.Second

// evidenceReady is how the decision waits for a read done only to explain or classify what
// was judged: the classifier's ReplicaSets, Pods, ControllerRevisions and Jobs, the
// ConfigMaps and Secrets a failed release's values come from. Evidence never decides: a list
// that fails, whatever the error (404 from a server or a proxy that does not serve the kind
// there, 401, 403, 429, 5xx, a timeout), or that has not answered within EvidenceWait, leaves
// the verdict to what was judged (the workload's own status, Flux's conditions), and note says
// what could not be read, for the object's message. Only the reads of the objects being judged
// (watchReady) settle a cluster's access verdicts. While the list is on its way (within
// EvidenceWait), ready and note are both empty and the assessment waits for it.
func (a *assessor) evidenceReady(e *Assessment, w List, what string) (ready bool, note string) {
	if w.Synced() {
		return true, ""
	}
	if err := w.Err(); err != nil {
		if apierrors.IsForbidden(err) {
			return false, fmt.Sprintf("the credentials may not list %s (403); grant get, list and watch on it for a precise reason", what)
		}
		return false, fmt.Sprintf("listing %s failed: %s", what, w.Read().Failure.Detail)
	}
	if a.spec.Snapshot {
		// A snapshot lists once: what it did not list is not waited for.
		return false, what + " not listed"
	}
	since := w.WaitingSince()
	if waited := a.now.Sub(since); !since.IsZero() && waited >= EvidenceWait {
		return false, fmt.Sprintf("%s not listed after %s", what, waited.Round(time.Second))
	}
	if e.Pending == nil {
		e.wait(Finding{Verdict: result.VerdictInProgress, Reason: "Listing", Message: waitingMessage(w, what, a.now), Progress: ProgressStep})
	}
	if !since.IsZero() {
		e.recheckAt(since.Add(EvidenceWait))
	}
	e.Listing = true
	e.Syncing = true
	return false, ""
}
