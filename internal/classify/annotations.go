package classify

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The annotations a team sets on a workload (its metadata, in Git) to tune how its rollout is
// judged, for every run and every workflow at once. Each grace annotation overrides the run's
// setting of the same name for this workload; failure-grace sets the three graces at once, and
// a grace of its own wins over it.
const (
	AnnotationFailureGrace       = "app-status.io/failure-grace"
	AnnotationRetryGrace         = "app-status.io/retry-grace"
	AnnotationUnschedulableGrace = "app-status.io/unschedulable-grace"
	AnnotationNeverReadyGrace    = "app-status.io/never-ready-grace"
	AnnotationCrashRestarts      = "app-status.io/crash-restarts"
	// AnnotationIgnoreReadiness "true" makes a workload's readiness not count: it neither holds
	// nor fails the verdict, and is reported with its state. (Flux's own health checks, a
	// Kustomization's wait or a HelmRelease's, still apply.)
	AnnotationIgnoreReadiness = "app-status.io/ignore-readiness"
)

// AnnotationPrefix starts every annotation of this package.
const AnnotationPrefix = "app-status.io/"

// maxAnnotatedGrace bounds a grace read from a cluster: past it, the value is refused.
const maxAnnotatedGrace = 24 * time.Hour

// ForObject returns the options for one workload, its annotations overriding o, and a note
// for each annotation of this package that was ignored because its value cannot be read (the
// note quotes the value, shortened: it comes from the cluster).
func (o Options) ForObject(annotations map[string]string) (Options, []string) {
	var notes []string
	grace := func(key string) (time.Duration, bool) {
		v, ok := annotations[key]
		if !ok {
			return 0, false
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 || d > maxAnnotatedGrace {
			notes = append(notes, fmt.Sprintf("annotation %s=%s ignored: want a duration such as 5m, above 0 and at most 24h", key, quoteShort(v)))
			return 0, false
		}
		return d, true
	}
	if d, ok := grace(AnnotationFailureGrace); ok {
		o.RetryGrace, o.UnschedulableGrace, o.NeverReadyGrace = d, d, d
	}
	if d, ok := grace(AnnotationRetryGrace); ok {
		o.RetryGrace = d
	}
	if d, ok := grace(AnnotationUnschedulableGrace); ok {
		o.UnschedulableGrace = d
	}
	if d, ok := grace(AnnotationNeverReadyGrace); ok {
		o.NeverReadyGrace = d
	}
	if v, ok := annotations[AnnotationCrashRestarts]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 1 || n > 1000 {
			notes = append(notes, fmt.Sprintf("annotation %s=%s ignored: want a whole number from 1 to 1000", AnnotationCrashRestarts, quoteShort(v)))
		} else {
			o.CrashRestarts = int32(n)
		}
	}
	return o, notes
}

// IgnoreReadiness reports whether a workload's annotations say its readiness does not count,
// with a note when the annotation is there but not "true" or "false".
func IgnoreReadiness(annotations map[string]string) (bool, string) {
	v, ok := annotations[AnnotationIgnoreReadiness]
	if !ok {
		return false, ""
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, fmt.Sprintf("annotation %s=%s ignored: want \"true\" or \"false\"", AnnotationIgnoreReadiness, quoteShort(v))
}

// quoteShort quotes a value read from a cluster, cut to 40 runes.
func quoteShort(v string) string {
	if utf8.RuneCountInString(v) > 40 {
		v = string([]rune(v)[:40]) + "…"
	}
	return strconv.Quote(v)
}
