package cli

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/verify"
)

// An exec credential plugin that client-go runs writes its standard error to the process's:
// client-go's exec authenticator (k8s.io/client-go/plugin/pkg/client/auth/exec, v0.37) sets
// the plugin's Stderr to os.Stderr, read when the authenticator is made, and has no setting
// for another writer. Unrouted, what a plugin prints (its errors, an identity provider's
// answer, a secret it echoes, "::" or "##[stop-commands]") would reach a CI log as it is. So,
// in CI (the action, the CLI in a pipeline), before the first client of a run whose clusters
// run a plugin is made, os.Stderr becomes, once for the process, a pipe whose lines are
// redacted with the run's secrets, made one line and cleaned of runner commands, then written
// to the run's log. At a terminal a plugin's prompt (a device code's, without a newline) goes
// to the terminal as it is.

// pluginStderr is the process's route for the plugins' standard error.
var pluginStderr struct {
	once sync.Once
	// pipe is what os.Stderr became; nil when the route could not be made.
	pipe *os.File
	// flush is the line that marks, through the pipe, that everything written before it has
	// been read; flushed is told each time it is read.
	flush   string
	flushed chan struct{}

	mu sync.Mutex
	// real is the process's standard error before the route; sink is the current run's log,
	// or real between runs; secrets are the current or last run's.
	real, sink io.Writer
	secrets    *kubeconfig.Secrets
}

// routePluginStderr sends what the exec plugins that client-go runs for req's clusters write to
// standard error to w, a line at a time, redacted with secrets and with no runner command, and
// returns the function that ends the route when the run is over: it waits until every line
// written so far has been passed on. A request whose clusters run no plugin changes nothing.
func routePluginStderr(req verify.Request, w io.Writer, secrets *kubeconfig.Secrets) func() {
	if !runsPlugin(req) {
		return func() {}
	}
	p := &pluginStderr
	p.once.Do(startPluginStderr)
	if p.pipe == nil {
		return func() {}
	}
	p.mu.Lock()
	p.sink, p.secrets = w, secrets
	p.mu.Unlock()
	return func() {
		// The pipe keeps the order of writes: once the flush line is read, so is everything a
		// plugin that has ended wrote.
		if _, err := io.WriteString(p.pipe, "\n"+p.flush+"\n"); err == nil {
			<-p.flushed
		}
		p.mu.Lock()
		if p.sink == w {
			// The run's secrets stay: a plugin client-go started cannot be stopped, and one
			// that outlives the run may still print them.
			p.sink = p.real
		}
		p.mu.Unlock()
	}
}

// runsPlugin reports whether client-go runs an exec plugin for one of req's clusters.
func runsPlugin(req verify.Request) bool {
	for _, t := range req.Targets {
		if t.Config != nil && t.Config.ExecProvider != nil {
			return true
		}
	}
	return false
}

// startPluginStderr makes os.Stderr a pipe read by copyPluginStderr; on failure os.Stderr is
// left as it is.
func startPluginStderr() {
	p := &pluginStderr
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	p.flush, p.flushed = "\x00app-status-flush-"+hex.EncodeToString(b[:]), make(chan struct{})
	p.real, p.sink = os.Stderr, os.Stderr
	p.pipe = w
	os.Stderr = w
	go copyPluginStderr(r)
}

// maxPluginLine bounds a line of a plugin's standard error: a longer one is passed on in parts.
const maxPluginLine = 64 << 10

// copyPluginStderr passes each line read from r to the current run's log, redacted, one line,
// with no runner command.
func copyPluginStderr(r io.Reader) {
	p := &pluginStderr
	longest := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.secrets.Longest()
	}
	redact := func(text string) string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.secrets.Redact(text)
	}
	relayLines(r, maxPluginLine, longest, redact, func(text string) {
		switch text {
		case "":
		case p.flush:
			p.flushed <- struct{}{}
		default:
			p.mu.Lock()
			text = sanitize.Commands(p.secrets.Redact(sanitize.Line(p.secrets.Redact(text))))
			_, _ = io.WriteString(p.sink, text+"\n")
			p.mu.Unlock()
		}
	})
}

// relayLines passes each line read from r to line, without its newline and redacted, until r
// ends. A line longer than size is passed in parts: each is redacted before the last
// longest()-1 bytes of it are kept back to go with the next part, so a secret (of at most
// longest() bytes) is redacted whole, never cut in two where neither half would be.
func relayLines(r io.Reader, size int, longest func() int, redact func(string) string, line func(string)) {
	br := bufio.NewReaderSize(r, size)
	held := ""
	for {
		part, err := br.ReadSlice('\n')
		text := redact(held + string(part))
		held = ""
		partial := errors.Is(err, bufio.ErrBufferFull)
		if partial {
			keep := min(len(text), max(longest()-1, 0))
			text, held = text[:len(text)-keep], text[len(text)-keep:]
		}
		line(strings.TrimSuffix(text, "\n"))
		if err != nil && !partial {
			return
		}
	}
}
