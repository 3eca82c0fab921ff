package classify

import "strings"

// The words of a pull error that say the image cannot be had as it is named: it does not
// exist, or these credentials may not read it. The image or the pull secret must change.
var permanentPull = []string{
	"not found", "manifest unknown", "name unknown", "unauthorized", "authentication required",
	"pull access denied", "access denied", "denied:", "insufficient_scope", "forbidden",
	"invalid reference format", "repository does not exist", "no match for platform",
}

// The words of a pull error that say the registry could not be reached or refused for now
// (a timeout, a rate limit, a server error): the kubelet tries again, and it may pass.
var transientPullWords = []string{
	"i/o timeout", "tls handshake timeout", "context deadline exceeded", "timeout exceeded",
	"connection refused", "connection reset", "no route to host", "network is unreachable",
	"no such host", "temporary failure in name resolution", "server misbehaving",
	"too many requests", "toomanyrequests", "rate limit",
	"500 internal server error", "502 bad gateway", "503 service unavailable", "504 gateway timeout",
	"unexpected eof", ": eof",
}

// transientPull reports whether a container waiting with reason and message cannot pull its
// image for a reason that may pass: the registry is unavailable, or the error names a network
// failure, a rate limit or a server error and nothing that says the image is missing or
// forbidden. The kubelet gives the error in ErrImagePull's message and, from Kubernetes 1.31,
// after "Back-off pulling image ...: " in ImagePullBackOff's. A back-off that does not say why
// is not transient: it fails at once, as every other pull error does.
func transientPull(reason, message string) bool {
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
	for _, w := range transientPullWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}
