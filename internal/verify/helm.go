package verify

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/helmstorage"
	"github.com/org/app-status-action/internal/result"
)

// storageRetry is how long a Helm storage secret that could not be read waits before it is
// read again; a secret read once is never read again (a release version does not change).
const storageRetry = 2 * time.Second

// readRelease reads one Helm storage secret and decodes the objects of its release, for the
// HelmRelease id without an inventory (assess.ReleaseNeed).
func (s *clusterState) readRelease(ctx context.Context, id, namespace, name string, now time.Time) assess.StoredRelease {
	what := fmt.Sprintf("the Helm storage secret %s/%s", namespace, name)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	secret, err := s.core.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return assess.StoredRelease{Finding: assess.Finding{Verdict: result.VerdictForbidden, Reason: string(result.VerdictForbidden), Message: fmt.Sprintf(
			"%s has no .status.inventory (helm-controller older than 1.5), and the credentials may not read %s (403) that lists what it deployed: "+
				"grant get on secrets in namespace %s to the kubeconfig's user, or upgrade helm-controller to 1.5 or later", id, what, namespace)}}
	case apierrors.IsNotFound(err):
		return assess.StoredRelease{RetryAt: now.Add(storageRetry), Finding: assess.Finding{Verdict: result.VerdictInProgress, Reason: "NotFound",
			Message: fmt.Sprintf("%s: waiting for %s, which lists what it deployed (it has no .status.inventory)", id, what)}}
	case err != nil:
		if v, msg, ok := connectionVerdict(err, what); ok && v == result.VerdictUnauthorized {
			return assess.StoredRelease{Finding: assess.Finding{Verdict: v, Reason: string(v), Message: msg}}
		}
		return assess.StoredRelease{RetryAt: now.Add(storageRetry), Finding: assess.Finding{Verdict: result.VerdictInProgress, Reason: "ReadFailed",
			Message: fmt.Sprintf("%s: reading %s: %s", id, what, apiMessage(err))}}
	}
	refs, err := helmstorage.Objects(secret.Data[helmstorage.DataKey])
	if err != nil {
		// (Its error may quote the release: assess says it in words of its own.)
		return assess.StoredRelease{Undecodable: true}
	}
	return assess.StoredRelease{Objects: refs}
}
