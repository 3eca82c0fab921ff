package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
)

// The public delimiter go-githubactions writes outputs with, and what an attacker who knows
// it would put in any text a cluster returns.
const (
	publicDelimiter = "_GitHubActionsFileCommandDelimeter_"
	forgery         = "denied\n" + publicDelimiter + "\nstatus=success\nfailed-clusters=[]\nowned<<EOF\nyes\nEOF\n" +
		"::add-mask::x\n'; id; echo '"
)

// hostileServer is an API server on 127.0.0.1 that refuses everything with a 403 whose
// message is the forgery, followed by whatever Authorization header it was sent (as a proxy
// echoing the request would).
func hostileServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
			"message": forgery + " (you sent: " + r.Header.Get("Authorization") + ")",
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// basicKubeconfig authenticates with basic auth; the password ends in a backslash, which broke
// the JSON round trip redaction once was.
func basicKubeconfig(server, password string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {username: deploy, password: %q}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server, password)
}

// TestHostileClusterCannotForgeOutputs: a cluster whose every answer carries a forged output
// block, an echoed Basic credential and a shell injection changes no output, adds none, and
// leaks the password in no form: the step fails with the Forbidden verdict, written intact.
func TestHostileClusterCannotForgeOutputs(t *testing.T) {
	t.Parallel()
	srv := hostileServer(t)
	const password = `pa55-w0rd\`
	f := newFakeEnv(t, map[string]string{
		"INPUT_CLUSTERS": "hostile=env:KC\nsecond=env:KC", "KC": basicKubeconfig(srv.URL, password),
		"INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "20s",
	})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1", code)
	}
	data := f.file(t, f.output)
	outputs, err := filecommand.ParseOutputs(data)
	if err != nil {
		t.Fatalf("the runner could not read the outputs: %v\n%s", err, data)
	}
	want := []string{"duration", "failed-clusters", "junit-file", "message", "ready-clusters", "report", "report-file", "results", "status"}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(outputs))); diff != "" {
		t.Errorf("output names (-want +got):\n%s", diff)
	}
	if outputs["status"] != "failure" || outputs["failed-clusters"] != `["hostile","second"]` || outputs["ready-clusters"] != "[]" {
		t.Errorf("status %q, failed %q, ready %q: want failure, both clusters failed, none ready", outputs["status"], outputs["failed-clusters"], outputs["ready-clusters"])
	}
	for name, v := range outputs {
		if strings.ContainsAny(v, "\r\n") {
			t.Errorf("output %s spans several lines: %q", name, v)
		}
	}
	var results []map[string]any
	if err := json.Unmarshal([]byte(outputs["results"]), &results); err != nil || len(results) != 2 || results[0]["verdict"] != "Forbidden" {
		t.Errorf("results = %s (%v), want two Forbidden clusters", outputs["results"], err)
	}
	if !strings.Contains(outputs["message"], publicDelimiter+" status=success") {
		t.Errorf("message %q, want the forged text kept, harmless, on one line", outputs["message"])
	}
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + password))
	assertNoLeak(t, f.stdout.String(), data+f.file(t, f.summary), []string{password, basic})
}

// TestOutputWriteFailure: outputs that cannot be written fail the step, saying why.
func TestOutputWriteFailure(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t, map[string]string{"INPUT_RESOURCE": "ks/app"})
	f.vars["GITHUB_OUTPUT"] = t.TempDir() // a folder: it cannot be opened for writing
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1", code)
	}
	if log := f.stdout.String(); !strings.Contains(log, "::error title=app-status could not write its results::") || !strings.Contains(log, "GITHUB_OUTPUT") {
		t.Errorf("log does not say the outputs could not be written:\n%s", log)
	}
}

// TestReportFile: the whole report is written under RUNNER_TEMP, named by the report-file
// output, and is the document the report output holds (uncut here).
func TestReportFile(t *testing.T) {
	t.Parallel()
	srv := hostileServer(t)
	f := newFakeEnv(t, map[string]string{"INPUT_CLUSTERS": "c=env:KC", "KC": basicKubeconfig(srv.URL, "pw-123456"), "INPUT_RESOURCE": "ks/app"})
	f.vars["RUNNER_TEMP"] = t.TempDir()
	f.vars["GITHUB_ACTION"] = "status"
	Run(context.Background(), []string{"action"}, f.env())
	outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
	if err != nil {
		t.Fatal(err)
	}
	// Named after the step's id and a hash of the run (legFileBase).
	want := outputs["report-file"]
	if !regexp.MustCompile("^" + regexp.QuoteMeta(filepath.Join(f.vars["RUNNER_TEMP"], "app-status-status-")) + `[0-9a-f]{12}\.json$`).MatchString(want) {
		t.Fatalf("report-file = %q, want app-status-status-HASH.json in RUNNER_TEMP", want)
	}
	if junit := strings.TrimSuffix(want, ".json") + ".junit.xml"; outputs["junit-file"] != junit {
		t.Errorf("junit-file = %q, want %q, beside report-file", outputs["junit-file"], junit)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	var file, output map[string]any
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(outputs["report"]), &output); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(output, file); diff != "" {
		t.Errorf("report file differs from the report output (-output +file):\n%s", diff)
	}
}
