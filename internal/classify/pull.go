package classify

import "strings"

// The words of a pull error that say the image cannot be had as it is named: it does not
// exist, or these credentials may not read it. The image or the pull secret must change.
var permanentPull = []string{
	"not found", "manifest unknown", "name unknown", "unauthorized", "authentication required",
	"pull access denied", "access denied", "denied:", "insufficient_scope", "forbidden",
	"invalid reference format", "repository does not exist", "no match for platform",
}

// retriedPull reports whether a container waiting with reason and message cannot pull its
// image for a reason that may pass, and so gets the retry grace period: the registry is
// unavailable, or the pull error says nothing that proves the image missing or forbidden (a
// timeout, a rate limit, a server error, an error never seen before). The kubelet gives the
// error in ErrImagePull's message and, from Kubernetes 1.31, after "Back-off pulling image
// ...: " in ImagePullBackOff's; before, a back-off says no why, and the engine carries the
// container's last ErrImagePull into it (keepPullErrors) so that it keeps its class. A
// back-off whose error was never seen waits out the grace period: only what is proven
// permanent fails at once.
func retriedPull(reason, message string) bool {
	switch reason {
	case reasonRegistryUnavailable:
		return true
	case reasonErrImagePull, reasonImagePullBackOff:
	default:
		return false
	}
	m := strings.ToLower(message)
	for _, w := range permanentPull {
		if strings.Contains(m, w) {
			return false
		}
	}
	return true
}
