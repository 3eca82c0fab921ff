package verify

import (
	"flag"
	"io"
	"sync"

	"k8s.io/klog/v2"
)

// DiscardClientLogs stops client-go's own logging (every failed list, watch and retry goes
// through klog, errors to standard error whatever klog's output is): the verdicts say what
// matters, in one line per cluster. klog's settings are the process's, so the change is made
// once, whoever calls it first (a program's entry point, tests running it in parallel).
func DiscardClientLogs() { discardClientLogsOnce.Do(discardClientLogs) }

// discardClientLogsOnce guards klog's process-wide settings.
var discardClientLogsOnce sync.Once

func discardClientLogs() {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{
		"logtostderr":     "false",
		"alsologtostderr": "false",
		"stderrthreshold": "FATAL",
		"one_output":      "true",
	} {
		// The names are klog's own; a failure means klog renamed one, and it logs as before.
		_ = flags.Set(name, value)
	}
	klog.SetOutput(io.Discard)
}
