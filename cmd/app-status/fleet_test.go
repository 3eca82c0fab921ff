package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/testing/runnertest"
)

// TestActionFleetStopsAtOnceAfterItsVerdicts (issue 26): a fleet of 300 clusters, each
// kubeconfig with its own token (300 secrets, in all their forms), 200 objects each. SIGTERM,
// sent as soon as the last verdict is printed, ends the step within a second or two, with
// every output written and every cluster in it; no token is printed, and the log holds no
// runner command but the step's own.
// It runs alone (not in parallel): 300 servers and the binary take both cores.
func TestActionFleetStopsAtOnceAfterItsVerdicts(t *testing.T) {
	const clusters = 300
	resources, objects := fakeapi.App("app", "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 200)
	workspace := t.TempDir()
	var lines strings.Builder
	var tokens []string
	env := []string{}
	for i := range clusters {
		s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
		t.Cleanup(s.Close)
		token := fmt.Sprintf("tok-%04d-%s", i, strings.Repeat(string(rune('a'+i%26)), 24))
		tokens = append(tokens, token)
		name := fmt.Sprintf("KC_%04d", i)
		env = append(env, name+"="+fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: %s}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", s.URL(), token))
		fmt.Fprintf(&lines, "c%04d=env:%s\n", i, name)
	}
	outFile, summaryFile := filepath.Join(workspace, "github_output"), filepath.Join(workspace, "step_summary")
	for _, f := range []string{outFile, summaryFile} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, "action")
	cmd.Env = append(env, "PATH="+os.Getenv("PATH"), "HOME="+workspace, "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+workspace,
		"GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+summaryFile, "RUNNER_TEMP="+workspace,
		"INPUT_CLUSTERS="+lines.String(), "INPUT_RESOURCE=ks/app", "INPUT_REVISION=a1b2c3d4", "INPUT_TIMEOUT=2m", "INPUT_MAX-PARALLEL=50")
	stdout := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	// The last verdict: the fleet's tally says every cluster is Current (above 30 clusters the
	// log tallies the fleet instead of a line per Current cluster).
	var signalled time.Time
	deadline := time.After(2 * time.Minute)
wait:
	for {
		select {
		case err := <-ended:
			ended <- err
			break wait
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("no verdicts after 2 minutes:\n%.2000s", stdout.String())
		case <-time.After(10 * time.Millisecond):
			if strings.Contains(stdout.String(), fmt.Sprintf(" %d/%d Current", clusters, clusters)) {
				signalled = time.Now()
				_ = cmd.Process.Signal(syscall.SIGTERM)
				break wait
			}
		}
	}
	var err error
	select {
	case err = <-ended:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the action did not end within 30 s of SIGTERM after its verdicts")
	}
	if !signalled.IsZero() {
		t.Logf("ended %s after SIGTERM, sent once the last of %d verdicts was printed", time.Since(signalled).Round(time.Millisecond), clusters)
	}
	run := readRun(t, err, stdout.String(), outFile, summaryFile)
	var ready []string
	if err := json.Unmarshal([]byte(run.outputs["ready-clusters"]), &ready); err != nil || len(ready) != clusters {
		t.Errorf("ready-clusters holds %d clusters (%v), want all %d", len(ready), err, clusters)
	}
	var results []map[string]any
	if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil || len(results) != clusters {
		t.Errorf("results holds %d clusters (%v), want all %d", len(results), err, clusters)
	}
	written := stdout.String() + run.summary + run.outputs["results"] + run.outputs["report"]
	masks := map[string]bool{}
	for _, c := range runnertest.Commands(stdout.String()) {
		switch {
		case c.Form == "::" && c.Name == "add-mask":
			masks[strings.TrimPrefix(strings.TrimSpace(c.Line), "::add-mask::")] = true
		case c.Form == "::" && strings.HasPrefix(c.Line, "::error title="):
		default:
			t.Errorf("the log holds a command that is not the step's own: %+v", c)
		}
	}
	for _, token := range tokens {
		if !masks[token] {
			t.Errorf("token %.8s… was not masked", token)
		}
		if strings.Count(written, token) > 1 { // once: its own ::add-mask:: line
			t.Errorf("token %.8s… is printed", token)
		}
	}
}
