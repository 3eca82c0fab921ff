package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/verify"
)

// fleetCredentials is a fleet's kubeconfigs as real clusters have them: each its own client
// key (the size and shape of an RSA 2048 key, 27 PEM lines) and its own bearer token, loaded
// through kubeconfig.Load as the action loads them.
type fleetCredentials struct {
	secrets *kubeconfig.Secrets
	keys    []string // each cluster's client key, PEM
	tokens  []string
}

func newFleetCredentials(tb testing.TB, n int) fleetCredentials {
	tb.Helper()
	f := fleetCredentials{}
	vars := map[string]string{}
	var clusters strings.Builder
	for i := range n {
		key := pemShapedKey(tb)
		token := "eyJhbGciOiJSUzI1NiJ9." + randomText(tb, 48) + "." + randomText(tb, 64)
		f.keys, f.tokens = append(f.keys, key), append(f.tokens, token)
		name := fmt.Sprintf("c%04d", i)
		user := "admin"
		if i%2 == 1 {
			user = "ci"
		}
		doc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: %[1]s\n  cluster:\n    server: https://%[1]s.example.test:6443\n"+
			"users:\n- name: %[2]s\n  user:\n    client-certificate-data: %[3]s\n    client-key-data: %[4]s\n    token: %[5]s\n"+
			"contexts:\n- name: %[1]s\n  context:\n    cluster: %[1]s\n    user: %[2]s\ncurrent-context: %[1]s\n",
			name, user, base64.StdEncoding.EncodeToString([]byte(fakeCertificate)), base64.StdEncoding.EncodeToString([]byte(key)), token)
		vars["KUBECONFIG_"+strings.ToUpper(name)] = doc
		fmt.Fprintf(&clusters, "%s=env:KUBECONFIG_%s\n", name, strings.ToUpper(name))
	}
	_, secrets, err := kubeconfig.Load(kubeconfig.Input{Clusters: clusters.String()}, kubeconfig.Env{Getenv: func(k string) string { return vars[k] }})
	if err != nil {
		tb.Fatal(err)
	}
	f.secrets = secrets
	return f
}

const fakeCertificate = "-----BEGIN CERTIFICATE-----\nMIIBfakeClientCertificateForTestsOnly0123456789\n-----END CERTIFICATE-----\n"

// pemShapedKey is random data shaped as an RSA 2048 private key's PEM: 25 lines of 64 base64
// characters and a shorter last one. Secrets never parse a key, so the shape is what counts.
func pemShapedKey(tb testing.TB) string {
	raw := make([]byte, 1190)
	if _, err := rand.Read(raw); err != nil {
		tb.Fatal(err)
	}
	body := base64.StdEncoding.EncodeToString(raw)
	var b strings.Builder
	b.WriteString("-----BEGIN RSA PRIVATE KEY-----\n")
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n-----END RSA PRIVATE KEY-----\n")
	return b.String()
}

func randomText(tb testing.TB, n int) string {
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		tb.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(raw)[:n]
}

// fleetResult is a run over len(creds.keys) clusters of objects objects each, the same app
// everywhere (a fleet repeats its kinds, names and messages), with each cluster's secrets
// quoted in its messages, events and logs in every form a server or proxy may echo them in
// when plant is set.
func fleetResult(creds fleetCredentials, objects int, plant bool) result.Run {
	clusters := make([]result.Cluster, len(creds.keys))
	for i := range clusters {
		key, token := creds.keys[i], creds.tokens[i]
		keyLine := strings.Split(key, "\n")[3]
		c := result.Cluster{Name: fmt.Sprintf("c%04d", i), Verdict: result.VerdictFailed, Code: result.CodeImagePull,
			Reason: "ImagePullBackOff", Message: "Deployment/apps/web-0: Back-off pulling image \"registry.example/web:1.4.0\""}
		c.Flux = []result.FluxObject{{ID: "Kustomization/flux-system/app", Kind: "Kustomization", Namespace: "flux-system", Name: "app",
			Verdict: result.VerdictCurrent, Ready: "True", Reason: "ReconciliationSucceeded",
			Message: "Applied revision: main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", LastAppliedRevision: "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"}}
		for j := range objects {
			o := result.Object{ID: fmt.Sprintf("Deployment/apps/web-%d", j), Group: "apps", Version: "v1", Kind: "Deployment",
				Namespace: "apps", Name: fmt.Sprintf("web-%d", j), Owner: "Kustomization/flux-system/app", Status: result.ObjectCurrent,
				Message: "Deployment is available. Replicas: 3"}
			if j == 0 {
				o.Status = result.ObjectFailed
				o.Failure = &result.Failure{Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: "Back-off pulling image",
					Pod: "web-0-5d9c7b8f4-x2x7q", Container: "web", Logs: "starting web\nlistening on :8080\n",
					Events: []result.Event{{Object: "Pod/apps/web-0-5d9c7b8f4-x2x7q", Reason: "Failed", Message: "Failed to pull image", Count: 3}}}
			}
			c.Objects = append(c.Objects, o)
		}
		if plant {
			c.Flux[0].Message += " (401 for Bearer " + token + ")"
			c.Message += "; Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("ci:"+token))
			obj := &c.Objects[0]
			obj.Message = "proxy echoed " + base64.URLEncoding.EncodeToString([]byte(token)) + " and " + url.QueryEscape(token)
			obj.Failure.Message = "key " + base64.RawStdEncoding.EncodeToString([]byte(key)) + " line " + keyLine
			obj.Failure.Logs += "dumped key:\n" + key + "again " + base64.RawURLEncoding.EncodeToString([]byte(key)) + "\n"
			obj.Failure.Events[0].Message += " " + strings.TrimSpace(key)
		}
		clusters[i] = c
	}
	return result.NewRun([]string{"Kustomization/flux-system/app"}, "a1b2c3d", clusters, 0)
}

// TestCleanRunMasksEveryCredentialOfAFleet: with a few hundred clusters, each with its own key
// and token quoted in every form in its messages, events and logs, no secret value (in any
// of the forms the runner is asked to mask) is left anywhere in the cleaned run, and the text
// around them is kept.
func TestCleanRunMasksEveryCredentialOfAFleet(t *testing.T) {
	t.Parallel()
	creds := newFleetCredentials(t, 300)
	run := cleanRun(fleetResult(creds, 20, true), creds.secrets, never, report.EvidenceFull)
	var all strings.Builder
	result.RewriteStrings(&run, func(_, s string) string {
		all.WriteString(s)
		all.WriteString("\x00")
		return s
	})
	text := all.String()
	for _, v := range creds.secrets.Values() {
		if len(v) >= 6 && strings.Contains(text, v) {
			t.Fatalf("secret form %q is still in the cleaned run", v)
		}
	}
	for i, token := range creds.tokens {
		if strings.Contains(text, token[len(token)-20:]) || strings.Contains(text, strings.Split(creds.keys[i], "\n")[5]) {
			t.Fatalf("cluster %d: a part of its token or key is still in the cleaned run", i)
		}
	}
	if got := run.Results[7].Flux[0].Message; got != "Applied revision: main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678 (401 for Bearer ***)" {
		t.Errorf("Flux message = %q: the text around the secret should stay", got)
	}
	if got := run.Results[7].Objects[0].Failure.Logs; !strings.HasPrefix(got, "starting web\nlistening on :8080\ndumped key:\n") {
		t.Errorf("logs = %q: the lines should stay", got)
	}
}

// BenchmarkCleanRun: making a fleet's whole result safe to print (issue 26), with every
// cluster's kubeconfig holding its own client key and token, 200 objects per cluster.
// Run: go test -run '^$' -bench CleanRun -benchtime 3x ./internal/cli
func BenchmarkCleanRun(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			creds := newFleetCredentials(b, n)
			b.ReportMetric(float64(len(creds.secrets.Values())), "secrets")
			for b.Loop() {
				b.StopTimer()
				run := fleetResult(creds, 200, true)
				b.StartTimer()
				cleanRun(run, creds.secrets, never, report.EvidenceFull)
			}
		})
	}
}

func never() bool { return false }

// TestCleanRunInAHurry: once the job has been cancelled a while, the clusters not yet cleaned
// keep their verdicts, codes, messages and requested Flux objects, without their objects, and
// every secret is still redacted from what is kept.
func TestCleanRunInAHurry(t *testing.T) {
	t.Parallel()
	creds := newFleetCredentials(t, 20)
	in := fleetResult(creds, 50, true)
	in.Results[15].Flux = append(in.Results[15].Flux, result.FluxObject{ID: "HelmRelease/apps/db", Owner: "Kustomization/flux-system/app"})
	calls := 0
	hurryFromTheTenth := func() bool { calls++; return calls > 10 }
	run := cleanRun(in, creds.secrets, hurryFromTheTenth, report.EvidenceFull)
	if len(run.Results) != 20 || !run.Truncated {
		t.Fatalf("%d clusters, truncated %t; want 20, true", len(run.Results), run.Truncated)
	}
	for i, c := range run.Results {
		hurried := i >= 10
		if got := len(c.Objects) == 0; got != hurried || c.Truncated != hurried {
			t.Errorf("cluster %d: %d objects, truncated %t; want them left out: %t", i, len(c.Objects), c.Truncated, hurried)
		}
		if c.Name != fmt.Sprintf("c%04d", i) || c.Verdict != result.VerdictFailed || c.Code != result.CodeImagePull || len(c.Flux) != 1 {
			t.Errorf("cluster %d = %s %s %s with %d Flux objects", i, c.Name, c.Verdict, c.Code, len(c.Flux))
		}
		if !strings.Contains(c.Flux[0].Message, "Bearer ***") || strings.Contains(c.Flux[0].Message, creds.tokens[i]) {
			t.Errorf("cluster %d: Flux message %q, want its token redacted", i, c.Flux[0].Message)
		}
	}
}

// TestCleanRunKeepsTheRunsWords: secrets equal to the run's words (its status, verdicts, a
// code, a reason, a kind, a namespace, the requested resource's name) rewrite none of them, on
// a failing run and a healthy one: the status, the exit code it decides, and every verdict,
// code, reason, kind, namespace, ID and resource stay as the engine gave them. The free text
// quoting them (messages, events, logs) is redacted. The loader refuses such secrets before
// they are recorded (TestUnsafeSecretsRefused in internal/kubeconfig); this holds if one is
// recorded all the same.
func TestCleanRunKeepsTheRunsWords(t *testing.T) {
	t.Parallel()
	secrets := &kubeconfig.Secrets{}
	for _, w := range []string{"success", "failure", "Current", "Failed", "flux-system", "image-pull", "ImagePullBackOff", "Deployment", "apps", "web-app", "ReconciliationSucceeded"} {
		secrets.Add(w)
	}
	type words struct {
		Status                                           result.RunStatus
		Resources                                        []string
		ConditionReason                                  string
		Verdicts, Codes, Reasons, Kinds, Namespaces, IDs []string
	}
	wordsOf := func(run result.Run) words {
		w := words{Status: run.Status, Resources: run.Resources, ConditionReason: run.Condition.Reason}
		for _, c := range run.Results {
			w.Verdicts = append(w.Verdicts, string(c.Verdict))
			w.Codes = append(w.Codes, string(c.Code))
			w.Reasons = append(w.Reasons, c.Reason)
			for _, f := range c.Flux {
				w.Verdicts = append(w.Verdicts, string(f.Verdict))
				w.Reasons = append(w.Reasons, f.Reason)
				w.Kinds, w.Namespaces, w.IDs = append(w.Kinds, f.Kind), append(w.Namespaces, f.Namespace), append(w.IDs, f.ID, f.Name)
			}
			for _, o := range c.Objects {
				w.Verdicts = append(w.Verdicts, string(o.Status))
				w.Kinds, w.Namespaces, w.IDs = append(w.Kinds, o.Kind), append(w.Namespaces, o.Namespace), append(w.IDs, o.ID, o.Owner, o.Group)
				if o.Failure != nil {
					w.Codes, w.Reasons = append(w.Codes, string(o.Failure.Code)), append(w.Reasons, o.Failure.Reason)
					for _, e := range o.Failure.Events {
						w.IDs = append(w.IDs, e.Object) // an event's reason is free text (TestCleanRunRedactsEventReasons)
					}
				}
			}
		}
		return w
	}
	cluster := func(name string, failing bool) result.Cluster {
		c := result.Cluster{Name: name, Verdict: result.VerdictCurrent, Message: "2 objects Current",
			Flux: []result.FluxObject{{ID: "Kustomization/flux-system/web-app", Kind: "Kustomization", Namespace: "flux-system", Name: "web-app",
				Verdict: result.VerdictCurrent, Ready: "True", Reason: "ReconciliationSucceeded", Message: "Applied revision: main@sha1:a1b2c3d"}},
			Objects: []result.Object{{ID: "Deployment/apps/web-app", Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web-app",
				Owner: "Kustomization/flux-system/web-app", Status: result.ObjectCurrent, Message: "Deployment is available. Replicas: 2"}}}
		if failing {
			c.Verdict, c.Code, c.Reason, c.Message = result.VerdictFailed, result.CodeImagePull, "ImagePullBackOff", "Deployment/apps/web-app: image-pull: Failed to pull image"
			c.Objects[0].Status = result.ObjectFailed
			c.Objects[0].Failure = &result.Failure{Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: "Back-off pulling image: Failed",
				Events: []result.Event{{Object: "Pod/apps/web-app-5d9c7b8f4-x2x7q", Reason: "Failed", Message: "Failed to pull image", Count: 3}}}
		}
		return c
	}
	for _, tt := range []struct {
		name       string
		clusters   []result.Cluster
		wantStatus result.RunStatus
	}{
		{"healthy", []result.Cluster{cluster("prod-eu", false), cluster("prod-us", false)}, result.RunSuccess},
		{"failing", []result.Cluster{cluster("prod-eu", true), cluster("prod-us", false)}, result.RunFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := result.NewRun([]string{"Kustomization/flux-system/web-app"}, "a1b2c3d", tt.clusters, 0)
			want := wordsOf(in)
			got := cleanRun(in, secrets, never, report.EvidenceFull)
			if got.Status != tt.wantStatus {
				t.Errorf("Status = %q, want %q", got.Status, tt.wantStatus)
			}
			if diff := cmp.Diff(want, wordsOf(got)); diff != "" {
				t.Errorf("the run's words after cleanRun (-want +got):\n%s", diff)
			}
			if msg := got.Results[0].Objects[0].Message; !strings.Contains(msg, "***") {
				t.Errorf("object message = %q, want the secret \"Deployment\" redacted from free text", msg)
			}
		})
	}
}

// TestCleanRunRedactsEventReasons: an event's reason is written by whatever recorded the
// event (an app may record its own, with any reason), so it is free text: cleaned to one line
// and redacted as its message is, while the failure's own reason, a word of the run, is kept.
func TestCleanRunRedactsEventReasons(t *testing.T) {
	t.Parallel()
	const token = "k8s-token-0123456789abcdefXYZ"
	secrets := &kubeconfig.Secrets{}
	secrets.Add(token)
	c := result.Cluster{Name: "prod-eu", Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ImagePullBackOff",
		Objects: []result.Object{{ID: "Deployment/apps/web", Kind: "Deployment", Namespace: "apps", Name: "web", Status: result.ObjectFailed,
			Failure: &result.Failure{Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: "Back-off pulling image",
				Events: []result.Event{
					{Object: "Pod/apps/web-1", Reason: "Leak" + token + "\n::error::x\x1b[31m", Message: "auth " + token, Count: 1},
					{Object: "Pod/apps/web-1", Reason: "Failed", Message: "Failed to pull image", Count: 2},
				}}}}}
	run := cleanRun(result.NewRun(nil, "", []result.Cluster{c}, 0), secrets, never, report.EvidenceFull)
	f := run.Results[0].Objects[0].Failure
	got := []result.Event{f.Events[0], f.Events[1]}
	want := []result.Event{
		{Object: "Pod/apps/web-1", Reason: sanitize.Compact("Leak***\n::error::x\x1b[31m"), Message: "auth ***", Count: 1},
		{Object: "Pod/apps/web-1", Reason: "Failed", Message: "Failed to pull image", Count: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events after cleanRun (-want +got):\n%s", diff)
	}
	if f.Reason != "ImagePullBackOff" {
		t.Errorf("failure reason = %q, want the run's word kept", f.Reason)
	}
}

// TestHurryOnceCancelled: the hurry starts grace after the cancellation, never without one.
func TestHurryOnceCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	hurry, stop := hurryOnceCancelled(ctx, 500*time.Millisecond)
	defer stop()
	if hurry() {
		t.Fatal("in a hurry before the cancellation")
	}
	cancel()
	if hurry() {
		t.Fatal("in a hurry at once: the grace should come first")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !hurry() {
		if time.Now().After(deadline) {
			t.Fatal("not in a hurry 10 s after the cancellation")
		}
		time.Sleep(5 * time.Millisecond)
	}
	uncancelled, stopUncancelled := hurryOnceCancelled(context.Background(), time.Millisecond)
	stopUncancelled()
	time.Sleep(20 * time.Millisecond)
	if uncancelled() {
		t.Error("in a hurry without a cancellation")
	}
}

// TestCleanRunJoinsNoSecret: a secret split by an escape sequence or a bidirectional control
// (which cleaning drops) is redacted all the same, in a message and in a log.
func TestCleanRunJoinsNoSecret(t *testing.T) {
	t.Parallel()
	secrets := &kubeconfig.Secrets{}
	const secret = "sk-abcdefghij123456"
	secrets.Add(secret)
	for _, split := range []string{"sk-abcdefg\x1b[0mhij123456", "sk-abcdefg\u200ehij123456", "sk-abc\u202adefghij123456"} {
		run := result.NewRun(nil, "", []result.Cluster{{Name: "prod", Verdict: result.VerdictFailed, Message: "leak " + split,
			Objects: []result.Object{{ID: "Deployment/a/b", Failure: &result.Failure{Logs: "line one\nkey=" + split + "\r\nline three\n"}}}}}, 0)
		got := cleanRun(run, secrets, never, report.EvidenceFull)
		c := got.Results[0]
		for what, text := range map[string]string{"message": c.Message, "logs": c.Objects[0].Failure.Logs, "condition": got.Condition.Message} {
			if strings.Contains(sanitizeAll(text), secret) {
				t.Errorf("%q: the %s shows the secret once cleaned: %q", split, what, text)
			}
		}
		if logs := c.Objects[0].Failure.Logs; !strings.HasPrefix(logs, "line one\nkey=***\nline three") {
			t.Errorf("%q: logs = %q, want the lines kept and the secret redacted", split, logs)
		}
	}
	var progress strings.Builder
	newProgressLog(&progress, secrets.Redact, 1, nil).show(verify.Progress{Cluster: "prod", Message: "token sk-abcdefg\x1b[0mhij123456"})
	if strings.Contains(progress.String(), secret) {
		t.Errorf("progress line shows the secret: %q", progress.String())
	}
}

// sanitizeAll is what any renderer may do to text: clean it to a line or a log line.
func sanitizeAll(s string) string { return sanitize.Compact(s) + sanitize.LogLine(s) }

// TestFleetProgressLog: above fleetLogAbove clusters the log has the verdicts that are not
// Current and a tally, not every state change: 1000 clusters make a few hundred lines.
func TestFleetProgressLog(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	const clusters = 1000
	printer := newProgressLog(&log, func(s string) string { return s }, clusters, nil).show
	for step := range 5 {
		for i := range clusters {
			p := verify.Progress{Cluster: fmt.Sprintf("c%04d", i), Elapsed: time.Duration(step)*4*time.Second + time.Duration(i)*time.Millisecond,
				Verdict: result.VerdictInProgress, Message: "waiting for Deployment/app/web"}
			if step == 4 {
				p.Final, p.Verdict = true, result.VerdictCurrent
				if i%50 == 7 {
					p.Verdict, p.Message = result.VerdictFailed, "crash-loop: Deployment/app/web"
				}
			}
			printer(p)
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	last := lines[len(lines)-1]
	if len(lines) > 100 || !strings.HasSuffix(last, "980/1000 Current, 20 Failed") {
		t.Errorf("%d lines ending %q, want at most 100 ending with the fleet's tally:\n%s", len(lines), last, log.String())
	}
	if n := strings.Count(log.String(), "crash-loop"); n != 20 {
		t.Errorf("%d failure lines, want each of the 20", n)
	}
}

// TestShardPostsNothingToGitHub: a shard leaves deployments and the comment to the merge,
// which sees the whole fleet.
func TestShardPostsNothingToGitHub(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	gha := githubactions.New(githubactions.WithWriter(&log), githubactions.WithGetenv(func(string) string { return "" }))
	s := actionConfig{settings: settings{shard: shard.Shard{Index: 1, Count: 2}}}
	s.publish.Deployments, s.publish.PRComment, s.publish.Token = true, true, "t"
	if pub := startPublisher(context.Background(), gha, Env{Getenv: func(string) string { return "" }}, s, verify.Request{}); pub != nil {
		t.Error("a shard started a publisher")
	}
	if !strings.Contains(log.String(), "::warning") || !strings.Contains(log.String(), "merge step") {
		t.Errorf("no warning that the merge posts: %q", log.String())
	}
}
