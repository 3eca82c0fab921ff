package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/google/go-cmp/cmp"
)

func TestLoadCLI(t *testing.T) {
	t.Parallel()
	abc := yamlOf(t, newConfig("a", "b", "c"))
	relCA := newConfig("p")
	relCA.Clusters["p"].CertificateAuthorityData = nil
	relCA.Clusters["p"].CertificateAuthority = "ca.crt"

	tests := []struct {
		name      string
		in        Input
		env       fakeEnv
		want      []summary
		wantErr   string
		wantNotes []string
	}{{
		name: "--context repeated, in the order given",
		in:   Input{CLI: true, KubeconfigPath: "/k/config", Contexts: []string{"c", "a"}},
		env:  fakeEnv{files: map[string]string{"/k/config": abc}},
		want: []summary{ok("c", "context:c", "c"), ok("a", "context:a", "a")},
	}, {
		name: "--all-contexts: every context, sorted; relative --kubeconfig from the working directory",
		in:   Input{CLI: true, KubeconfigPath: "kc.yaml", AllContexts: true},
		env:  fakeEnv{files: map[string]string{"/ws/kc.yaml": b64(abc)}},
		want: []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b"), ok("c", "context:c", "c")},
	}, {
		name:      "no --context: the current-context alone, as kubectl",
		in:        Input{CLI: true, KubeconfigPath: "/k/config"},
		env:       fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a", "b", "c"), "b"))}},
		want:      []summary{ok("b", "context:b", "b")},
		wantNotes: []string{"verifying the current context b only (3 contexts in the kubeconfig): --all-contexts verifies every one, --context NAME one of them"},
	}, {
		name:    "no --context in CI, of several contexts: the job must say which it verifies",
		in:      Input{CLI: true, KubeconfigPath: "/k/config"},
		env:     fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a", "b", "c"), "b"))}, ci: true},
		wantErr: "verifying the current context b only (3 contexts in the kubeconfig): --all-contexts verifies every one, --context NAME one of them",
	}, {
		name: "no --context in CI, of one context: nothing narrowed",
		in:   Input{CLI: true, KubeconfigPath: "/k/config"},
		env:  fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("b"), "b"))}, ci: true},
		want: []summary{ok("b", "context:b", "b")},
	}, {
		name: "--context in CI, of several contexts",
		in:   Input{CLI: true, KubeconfigPath: "/k/config", Contexts: []string{"a"}},
		env:  fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a", "b", "c"), "b"))}, ci: true},
		want: []summary{ok("a", "context:a", "a")},
	}, {
		name: "--all-contexts in CI, of several contexts",
		in:   Input{CLI: true, KubeconfigPath: "/k/config", AllContexts: true},
		env:  fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a", "b"), "b"))}, ci: true},
		want: []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b")},
	}, {
		name: "--cluster in CI names the clusters: a context: line of a kubeconfig of several",
		in:   Input{CLI: true, KubeconfigPath: "/k/config", ClusterLines: []string{"dev=context:b"}},
		env:  fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a", "b"), "a"))}, ci: true},
		want: []summary{ok("dev", "context:b", "b")},
	}, {
		name:    "no --context and no current-context",
		in:      Input{CLI: true, KubeconfigPath: "/k/config"},
		env:     fakeEnv{files: map[string]string{"/k/config": abc}},
		wantErr: `kubeconfig /k/config has no current-context: name the context to verify with --context NAME (repeat for several), or verify every context with --all-contexts`,
	}, {
		name:    "a current-context that is not a context",
		in:      Input{CLI: true, KubeconfigPath: "/k/config"},
		env:     fakeEnv{files: map[string]string{"/k/config": yamlOf(t, withCurrent(newConfig("a"), "gone"))}},
		wantErr: `the current-context "gone" (pass --context NAME or --all-contexts to verify others): context "gone" not found in kubeconfig /k/config; it has: a`,
	}, {
		name:    "--all-contexts with --context",
		in:      Input{CLI: true, AllContexts: true, Contexts: []string{"a"}},
		wantErr: `--all-contexts and --context cannot be combined: give --all-contexts for every context, or --context NAME for each one to verify`,
	}, {
		name:    "--all-contexts with --clusters-file",
		in:      Input{CLI: true, AllContexts: true, ClustersFile: "c.txt"},
		wantErr: `--all-contexts cannot be combined with --clusters-file, --kubeconfig-dir or --cluster: they name the clusters themselves`,
	}, {
		name: "KUBECONFIG's missing files are skipped, as kubectl skips them",
		in:   Input{CLI: true, Contexts: []string{"b"}},
		env: fakeEnv{
			vars:  map[string]string{"KUBECONFIG": ":/k/first:/k/second"},
			files: map[string]string{"/k/first": abc},
		},
		want:      []summary{ok("b", "context:b", "b")},
		wantNotes: []string{"KUBECONFIG lists /k/second, which does not exist: skipped, as kubectl skips it"},
	}, {
		name: "in CI, a missing KUBECONFIG file is an error: the prod mount failed",
		in:   Input{CLI: true},
		env: fakeEnv{
			vars:  map[string]string{"KUBECONFIG": "/secrets/prod.yaml:/home/me/.kube/config"},
			files: map[string]string{"/home/me/.kube/config": yamlOf(t, withCurrent(newConfig("dev"), "dev"))},
			ci:    true,
		},
		wantErr: `KUBECONFIG /secrets/prod.yaml:/home/me/.kube/config: /secrets/prod.yaml does not exist, and a CI job does not go on without a file it lists (a secret's mount that failed): mount it, or leave it out of KUBECONFIG`,
	}, {
		name: "in CI, every missing KUBECONFIG file is named",
		in:   Input{CLI: true, Contexts: []string{"a"}},
		env: fakeEnv{
			vars:  map[string]string{"KUBECONFIG": "/k/a:/k/config:/k/b"},
			files: map[string]string{"/k/config": abc},
			ci:    true,
		},
		wantErr: `KUBECONFIG /k/a:/k/config:/k/b: /k/a, /k/b do not exist, and a CI job does not go on without a file it lists (a secret's mount that failed): mount it, or leave it out of KUBECONFIG`,
	}, {
		name: "in CI, KUBECONFIG's files all there",
		in:   Input{CLI: true, Contexts: []string{"a"}},
		env: fakeEnv{
			vars:  map[string]string{"KUBECONFIG": "/k/config"},
			files: map[string]string{"/k/config": abc},
			ci:    true,
		},
		want: []summary{ok("a", "context:a", "a")},
	}, {
		name: "~/.kube/config by default",
		in:   Input{CLI: true},
		// A name shorter than 8 bytes: the fixture's token holds its user's name, and a token
		// holding a word the run prints of 8 or more is refused.
		env:  fakeEnv{files: map[string]string{"/home/me/.kube/config": yamlOf(t, withCurrent(newConfig("dev"), "dev"))}},
		want: []summary{ok("dev", "context:dev", "dev")},
	}, {
		name: "clusters file: file: paths and their CA files relative to their folders",
		in:   Input{CLI: true, ClustersFile: "deploy/clusters.txt"},
		env: fakeEnv{
			vars: map[string]string{"STG": abc},
			files: map[string]string{
				"/ws/deploy/clusters.txt":  "# ours\nprod=file:kc/prod.yaml\nstg=env:STG#b\nlocal=context:c\n",
				"/ws/deploy/kc/prod.yaml":  yamlOf(t, relCA),
				"/ws/deploy/kc/ca.crt":     fakeCA,
				"/home/me/.kube/config":    abc,
				"/ws/deploy/unrelated.txt": "",
			},
		},
		want: []summary{ok("prod", "file:kc/prod.yaml", "p"), ok("stg", "env:STG#b", "b"), ok("local", "context:c", "c")},
	}, {
		name: "clusters file without context: sources needs no kubeconfig",
		in:   Input{CLI: true, ClustersFile: "/etc/clusters"},
		env: fakeEnv{
			vars:  map[string]string{"KC": abc},
			files: map[string]string{"/etc/clusters": "x=env:KC#a"},
		},
		want: []summary{ok("x", "env:KC#a", "a")},
	}, {
		name: "--cluster lines: an oidc: cluster and a context of --kubeconfig",
		in:   Input{CLI: true, KubeconfigPath: "/k/config", ClusterLines: []string{"prod=oidc:https://prod.example.com:6443 audience=k8s token=env:ID_TOKEN", "dev=context:b"}},
		env:  fakeEnv{files: map[string]string{"/k/config": abc}},
		want: []summary{{Name: "prod", Source: "oidc:https://prod.example.com:6443", Host: "https://prod.example.com:6443"}, ok("dev", "context:b", "b")},
	}, {
		name:    "--cluster with --context",
		in:      Input{CLI: true, ClusterLines: []string{"a=context:a"}, Contexts: []string{"a"}},
		wantErr: `--cluster cannot be combined with --clusters-file, --context or --kubeconfig-dir: give every cluster as --cluster NAME=SOURCE (NAME=context:CONTEXT for a context), or put the lines in the clusters file`,
	}, {
		name:    "a bad --cluster names the flag",
		in:      Input{CLI: true, ClusterLines: []string{"a=oidc:http://a.example.com audience=k8s"}},
		wantErr: `--cluster line 1: "a=oidc:http://a.example.com audience=k8s": oidc: the server http://a.example.com is not https: an ID token is sent only over TLS; write https://a.example.com`,
	}, {
		name:    "unknown --context",
		in:      Input{CLI: true, KubeconfigPath: "/k/config", Contexts: []string{"a", "nope"}},
		env:     fakeEnv{files: map[string]string{"/k/config": abc}},
		wantErr: `--context "nope": context "nope" not found in kubeconfig /k/config; it has: a, b, c`,
	}, {
		name:    "--context twice",
		in:      Input{CLI: true, KubeconfigPath: "/k/config", Contexts: []string{"a", "a"}},
		env:     fakeEnv{files: map[string]string{"/k/config": abc}},
		wantErr: `--context "a" is given twice`,
	}, {
		name:    "--context with --clusters-file",
		in:      Input{CLI: true, ClustersFile: "c.txt", Contexts: []string{"a"}},
		wantErr: `--context and --clusters-file cannot be combined: list the contexts in the clusters file as name=context:CONTEXT`,
	}, {
		name:    "--kubeconfig-dir with --kubeconfig",
		in:      Input{CLI: true, KubeconfigDir: "/k", KubeconfigPath: "/k/config"},
		wantErr: `--kubeconfig-dir cannot be combined with --clusters-file, --kubeconfig or --context: each file of the folder is a cluster`,
	}, {
		name:    "KUBECONFIG of missing files",
		in:      Input{CLI: true},
		env:     fakeEnv{vars: map[string]string{"KUBECONFIG": "/k/a:/k/b"}},
		wantErr: `KUBECONFIG /k/a:/k/b: none of its files exists; set KUBECONFIG to your kubeconfig files, or pass --kubeconfig PATH`,
	}, {
		name:    "KUBECONFIG of missing files, in CI",
		in:      Input{CLI: true},
		env:     fakeEnv{vars: map[string]string{"KUBECONFIG": "/k/a:/k/b"}, ci: true},
		wantErr: `KUBECONFIG /k/a:/k/b: none of its files exists; set KUBECONFIG to your kubeconfig files, or pass --kubeconfig PATH`,
	}, {
		name:    "no default kubeconfig",
		in:      Input{CLI: true},
		wantErr: `kubeconfig /home/me/.kube/config (the default; pass --kubeconfig or set KUBECONFIG to use another): cannot read it: open /home/me/.kube/config: no such file or directory`,
	}, {
		name:    "unparsable kubeconfig",
		in:      Input{CLI: true, KubeconfigPath: "/k/config"},
		env:     fakeEnv{files: map[string]string{"/k/config": "clusters: [\n"}},
		wantErr: `kubeconfig /k/config (--kubeconfig): not a valid kubeconfig: invalid YAML near line 1`,
	}, {
		name:    "missing clusters file",
		in:      Input{CLI: true, ClustersFile: "clusters.txt"},
		wantErr: `--clusters-file clusters.txt: cannot read it: open /ws/clusters.txt: no such file or directory`,
	}, {
		name:    "clusters file without clusters",
		in:      Input{CLI: true, ClustersFile: "clusters.txt"},
		env:     fakeEnv{files: map[string]string{"/ws/clusters.txt": "# todo\n"}},
		wantErr: `clusters.txt lists no clusters: add one name=source line per cluster, e.g. prod=context:prod`,
	}, {
		name:    "errors name the clusters file and the CLI's fixes",
		in:      Input{CLI: true, ClustersFile: "clusters.txt"},
		env:     fakeEnv{files: map[string]string{"/ws/clusters.txt": "a=env:KC\nb=file:kc.yaml"}},
		wantErr: "clusters.txt line 1: \"a=env:KC\": environment variable KC is empty or not set; export KC (a kubeconfig, plain or base64) before running the command\n" + `clusters.txt line 2: file:kc.yaml: cannot read /ws/kc.yaml (relative paths start at the clusters file's folder): open /ws/kc.yaml: no such file or directory`,
	}, {
		name:    "action inputs in CLI mode",
		in:      Input{CLI: true, Clusters: "a=env:KC"},
		wantErr: `kubeconfig: Clusters and Kubeconfig are action inputs: unset Input.CLI`,
	}, {
		name:    "CLI flags in action mode",
		in:      Input{Contexts: []string{"a"}},
		wantErr: `kubeconfig: ClustersFile, ClusterLines, KubeconfigPath, Contexts, AllContexts and KubeconfigDir are CLI flags: set Input.CLI`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := tt.env.env()
			var notes []string
			env.Note = func(n string) { notes = append(notes, n) }
			got, _, err := Load(tt.in, env)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Load() error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNotes, notes); diff != "" {
				t.Errorf("Load() notes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("Load() clusters (-want +got):\n%s", diff)
			}
			noSecret(t, "error", errString(err))
		})
	}
}

// TestLoadCLIMergesKUBECONFIG: the files of $KUBECONFIG are merged as kubectl merges them
// (client-go's loading rules): the current-context may come from any file, a context of
// each file can be named, and the first file to define a name wins.
func TestLoadCLIMergesKUBECONFIG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := newConfig("dev", "shared")
	second := withCurrent(newConfig("prod-eu", "prod-us", "shared"), "prod-eu")
	second.Clusters["shared"].Server = "https://other.example.com:6443"
	firstPath, secondPath := filepath.Join(dir, "dev.yaml"), filepath.Join(dir, "prod.yaml")
	for path, cfg := range map[string]*clientcmdapi.Config{firstPath: first, secondPath: second} {
		if err := os.WriteFile(path, []byte(yamlOf(t, cfg)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfigVar := strings.Join([]string{firstPath, filepath.Join(dir, "missing.yaml"), secondPath}, string(filepath.ListSeparator))

	tests := []struct {
		name    string
		in      Input
		want    []summary
		wantErr string
	}{{
		name: "no --context: the current-context, set by the second file",
		in:   Input{CLI: true},
		want: []summary{ok("prod-eu", "context:prod-eu", "prod-eu")},
	}, {
		name: "a context of each file by --context",
		in:   Input{CLI: true, Contexts: []string{"dev", "prod-us"}},
		want: []summary{ok("dev", "context:dev", "dev"), ok("prod-us", "context:prod-us", "prod-us")},
	}, {
		name: "--all-contexts: every context of every file, the first file's shared one",
		in:   Input{CLI: true, AllContexts: true},
		want: []summary{ok("dev", "context:dev", "dev"), ok("prod-eu", "context:prod-eu", "prod-eu"), ok("prod-us", "context:prod-us", "prod-us"), ok("shared", "context:shared", "shared")},
	}, {
		name:    "--kubeconfig reads that file alone",
		in:      Input{CLI: true, KubeconfigPath: firstPath, Contexts: []string{"prod-eu"}},
		wantErr: fmt.Sprintf(`--context "prod-eu": context "prod-eu" not found in kubeconfig %s; it has: dev, shared`, firstPath),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": kubeconfigVar}[k] }, ReadFile: os.ReadFile, Workspace: dir, Home: dir}
			got, _, err := Load(tt.in, env)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Load() error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("Load() clusters (-want +got):\n%s", diff)
			}
		})
	}
}
