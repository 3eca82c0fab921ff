package kubeconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestLoadAction(t *testing.T) {
	t.Parallel()
	one := yamlOf(t, newConfig("a"))
	ab := yamlOf(t, newConfig("a", "b"))
	abCurrentB := yamlOf(t, withCurrent(newConfig("a", "b"), "b"))
	withExec := newConfig("a", "b")
	withExec.AuthInfos["b"] = execUser()
	// A kubeconfig whose token would be quoted by a careless parser.
	badYAML := "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    token: " + tokenFor("a") + "\n   bad: : x\n"
	badType := "apiVersion: v1\nkind: Config\nusers: " + tokenFor("a") + "\n"

	tests := []struct {
		name    string
		in      Input
		env     fakeEnv
		want    []summary
		wantErr string
	}{{
		name: "env plain YAML",
		in:   Input{Clusters: "prod=env:KC"},
		env:  fakeEnv{vars: map[string]string{"KC": one}},
		want: []summary{ok("prod", "env:KC", "a")},
	}, {
		name: "env base64 wrapped at 76",
		in:   Input{Clusters: "prod=env:KC"},
		env:  fakeEnv{vars: map[string]string{"KC": wrap(b64(one), 76, "\n")}},
		want: []summary{ok("prod", "env:KC", "a")},
	}, {
		name: "file relative to the workspace, absolute, and under home",
		in:   Input{Clusters: "rel=file:kc/one.yaml\nabs=file:/etc/kc/ab.yaml#b\nhome=file:~/kc.yaml"},
		env: fakeEnv{files: map[string]string{
			"/ws/kc/one.yaml": one, "/etc/kc/ab.yaml": ab, "/home/me/kc.yaml": b64(abCurrentB),
		}},
		want: []summary{ok("rel", "file:kc/one.yaml", "a"), ok("abs", "file:/etc/kc/ab.yaml#b", "b"), ok("home", "file:~/kc.yaml", "b")},
	}, {
		name: "context of the kubeconfig input",
		in:   Input{Clusters: "x=context:b\ny=context:a", Kubeconfig: b64(ab)},
		want: []summary{ok("x", "context:b", "b"), ok("y", "context:a", "a")},
	}, {
		name: "#context picks a context, current-context or only context otherwise",
		in:   Input{Clusters: "p=env:AB#a\nq=env:AB#b\nr=env:CUR\ns=env:ONE"},
		env:  fakeEnv{vars: map[string]string{"AB": ab, "CUR": abCurrentB, "ONE": one}},
		want: []summary{ok("p", "env:AB#a", "a"), ok("q", "env:AB#b", "b"), ok("r", "env:CUR", "b"), ok("s", "env:ONE", "a")},
	}, {
		name: "comments, blank lines and spaces",
		in:   Input{Clusters: "\n# production\n  prod = env:ONE  \r\n\n   # staging later\r\nstg=env: AB # b \n"},
		env:  fakeEnv{vars: map[string]string{"ONE": one, "AB": ab}},
		want: []summary{ok("prod", "env:ONE", "a"), ok("stg", "env:AB#b", "b")},
	}, {
		name:    "several contexts and no current-context",
		in:      Input{Clusters: "prod=env:KC"},
		env:     fakeEnv{vars: map[string]string{"KC": ab}},
		wantErr: `input clusters line 1: env:KC has several contexts and no current-context; add #context to pick one, e.g. env:KC#a (it has: a, b)`,
	}, {
		name: "no clusters: every context of the kubeconfig, sorted",
		in:   Input{Kubeconfig: yamlOf(t, newConfig("zeta", "alpha", "mid"))},
		want: []summary{ok("alpha", "context:alpha", "alpha"), ok("mid", "context:mid", "mid"), ok("zeta", "context:zeta", "zeta")},
	}, {
		name: "only comments: every context",
		in:   Input{Clusters: "# none yet\n", Kubeconfig: ab},
		want: []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b")},
	}, {
		name: "an exec user makes its cluster invalid, not the others",
		in:   Input{Kubeconfig: yamlOf(t, withExec)},
		want: []summary{ok("a", "context:a", "a"), {Name: "b", Source: "context:b", Context: "b", Invalid: true}},
	}, {
		name:    "missing variable",
		in:      Input{Clusters: "a=env:KC\n\nprod=env:PROD_KUBECONFIG"},
		env:     fakeEnv{vars: map[string]string{"KC": one}},
		wantErr: `input clusters line 3: "prod=env:PROD_KUBECONFIG": environment variable PROD_KUBECONFIG is empty or not set; map the secret in the step's env: (env: PROD_KUBECONFIG: ${{ secrets.PROD_KUBECONFIG }})`,
	}, {
		name:    "malformed line",
		in:      Input{Clusters: "prod=env:KC\nstaging"},
		env:     fakeEnv{vars: map[string]string{"KC": one}},
		wantErr: `input clusters line 2: "staging": expected name=source, where source is env:VAR, file:PATH, context:NAME or oidc:https://SERVER audience=AUDIENCE`,
	}, {
		name:    "duplicate name",
		in:      Input{Clusters: "prod=env:KC\n#\n\nprod=env:KC"},
		env:     fakeEnv{vars: map[string]string{"KC": one}},
		wantErr: `input clusters line 4: duplicate cluster name "prod" (first on line 1)`,
	}, {
		name:    "not a kubeconfig",
		in:      Input{Clusters: "prod=env:KC"},
		env:     fakeEnv{vars: map[string]string{"KC": "just some text!"}},
		wantErr: `input clusters line 1: env:KC: not a kubeconfig (neither YAML nor base64 of one)`,
	}, {
		name:    "invalid YAML holding a token",
		in:      Input{Clusters: "prod=env:KC"},
		env:     fakeEnv{vars: map[string]string{"KC": badYAML}},
		wantErr: `input clusters line 1: env:KC: not a valid kubeconfig: invalid YAML near line 6`,
	}, {
		name:    "base64 of invalid YAML holding a token",
		in:      Input{Clusters: "prod=env:KC"},
		env:     fakeEnv{vars: map[string]string{"KC": b64(badYAML)}},
		wantErr: `input clusters line 1: env:KC: base64 of an invalid kubeconfig: not a valid kubeconfig: invalid YAML near line 6`,
	}, {
		name:    "a token where a list belongs",
		in:      Input{Clusters: "prod=file:kc.yaml"},
		env:     fakeEnv{files: map[string]string{"/ws/kc.yaml": badType}},
		wantErr: `input clusters line 1: file:kc.yaml: not a valid kubeconfig: field users must be of type []v1.NamedAuthInfo`,
	}, {
		name:    "unreadable file",
		in:      Input{Clusters: "prod=file:missing.yaml"},
		wantErr: `input clusters line 1: file:missing.yaml: cannot read /ws/missing.yaml (relative paths start at the workspace, GITHUB_WORKSPACE; is the repository checked out?): open /ws/missing.yaml: no such file or directory`,
	}, {
		name:    "unknown context",
		in:      Input{Clusters: "a=env:KC#a\nb=env:KC#b\n\n\nc=env:KC#nope"},
		env:     fakeEnv{vars: map[string]string{"KC": ab}},
		wantErr: `input clusters line 5: context "nope" not found in env:KC; it has: a, b`,
	}, {
		name:    "unknown context of the kubeconfig input",
		in:      Input{Clusters: "a=context:nope", Kubeconfig: ab},
		wantErr: `input clusters line 1: context "nope" not found in input kubeconfig; it has: a, b`,
	}, {
		name:    "context: without the kubeconfig input",
		in:      Input{Clusters: "a=env:KC\nprod=context:prod"},
		env:     fakeEnv{vars: map[string]string{"KC": one}},
		wantErr: `input clusters line 2: context:prod needs the kubeconfig input`,
	}, {
		name:    "nothing given",
		wantErr: `no clusters: set the clusters input (one name=source per line, e.g. prod=env:PROD_KUBECONFIG) or the kubeconfig input`,
	}, {
		name:    "unparsable kubeconfig input",
		in:      Input{Clusters: "a=env:KC", Kubeconfig: "not base64 and not yaml"},
		env:     fakeEnv{vars: map[string]string{"KC": one}},
		wantErr: `input kubeconfig: not a kubeconfig (neither YAML nor base64 of one)`,
	}, {
		name:    "a context name that is no cluster name",
		in:      Input{Kubeconfig: yamlOf(t, newConfig("arn:aws:eks:eu-west-1:1:cluster/prod"))},
		wantErr: `context "arn:aws:eks:eu-west-1:1:cluster/prod" of input kubeconfig: invalid cluster name "arn:aws:eks:eu-west-1:1:cluster/prod": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit; name it in the clusters input: NAME=context:arn:aws:eks:eu-west-1:1:cluster/prod`,
	}, {
		name: "every bad line is reported",
		in:   Input{Clusters: "a=env:NOPE\nb=env:KC#x\nc=file:gone"},
		env:  fakeEnv{vars: map[string]string{"KC": ab}},
		wantErr: `input clusters line 1: "a=env:NOPE": environment variable NOPE is empty or not set; map the secret in the step's env: (env: NOPE: ${{ secrets.NOPE }})` + "\n" +
			`input clusters line 2: context "x" not found in env:KC; it has: a, b` + "\n" +
			`input clusters line 3: file:gone: cannot read /ws/gone (relative paths start at the workspace, GITHUB_WORKSPACE; is the repository checked out?): open /ws/gone: no such file or directory`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, secrets, err := Load(tt.in, tt.env.env())
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Load() error (-want +got):\n%s", diff)
			}
			want := tt.want
			if err != nil {
				want = nil
			}
			if diff := cmp.Diff(want, summarize(got)); diff != "" {
				t.Errorf("Load() clusters (-want +got):\n%s", diff)
			}
			if secrets == nil {
				t.Fatal("Load() secrets = nil")
			}
			var encoded []string
			for _, v := range tt.env.vars {
				if !strings.Contains(v, "apiVersion") {
					encoded = append(encoded, strings.ReplaceAll(v, "\n", ""))
				}
			}
			noSecret(t, "error", errString(err), encoded...)
			for _, c := range got {
				noSecret(t, "Invalid of "+c.Name, c.Invalid, encoded...)
			}
		})
	}
}

// TestLoadRecordsSecrets: the secrets of the users the contexts in use name are recorded,
// and the base64 text of an encoded kubeconfig, line by line; those of the kubeconfig's other
// users are not (never sent anywhere, they could only blank words from the job's outputs).
func TestLoadRecordsSecrets(t *testing.T) {
	t.Parallel()
	cfg := newConfig("a", "b", "unused")
	cfg.AuthInfos["b"] = &clientcmdapi.AuthInfo{Username: "admin", Password: "pw-" + marker + "-hunter2"}
	encoded := wrap(b64(yamlOf(t, newConfig("c"))), 76, "\n")
	env := fakeEnv{vars: map[string]string{"PLAIN": yamlOf(t, cfg), "ENCODED": encoded}}

	_, secrets, err := Load(Input{Clusters: "a=env:PLAIN#a\nc=env:ENCODED"}, env.env())
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	values := secrets.Values()
	for _, want := range []string{
		tokenFor("a"), tokenFor("c"),
		encoded[:76], // each line of the wrapped base64
	} {
		if !slices.Contains(values, want) {
			t.Errorf("Secrets.Values() lacks %q", want)
		}
	}
	for _, unused := range []string{tokenFor("unused"), "pw-" + marker + "-hunter2"} {
		if slices.Contains(values, unused) || secrets.Redact(unused) != unused {
			t.Errorf("Secrets holds %q, of a user no context in use names", unused)
		}
	}
	if slices.Contains(values, "admin") {
		t.Errorf("Secrets.Values() holds the user name")
	}
	msg := "curl -H 'Authorization: Bearer " + tokenFor("a") + "' failed; kubeconfig was " + encoded
	if got := secrets.Redact(msg); strings.Contains(got, marker) || strings.Contains(got, encoded[:76]) {
		t.Errorf("Redact() = %q, still holds a secret", got)
	}
}

// TestLoadKeep: a shard reads its own clusters' kubeconfigs alone. The others are listed,
// Elsewhere, with nothing read of them: no variable, no file, no secret recorded, and a
// kubeconfig that cannot be read is no error of this shard. The list itself is read whole:
// a line that does not parse is an error in every shard.
func TestLoadKeep(t *testing.T) {
	t.Parallel()
	keepA := func(name string) bool { return name == "a" || name == "ctx-a" }
	tests := []struct {
		name       string
		in         Input
		env        fakeEnv
		want       []summary
		wantErr    string
		wantSecret string // recorded: the kept cluster's
		notRead    string // a secret of a cluster not kept, never recorded
	}{{
		name:       "env and file sources",
		in:         Input{Clusters: "a=env:A\nb=env:B\nc=file:missing.yaml", Keep: keepA},
		env:        fakeEnv{vars: map[string]string{"A": yamlOf(t, newConfig("a")), "B": yamlOf(t, newConfig("b"))}},
		want:       []summary{ok("a", "env:A", "a"), {Name: "b", Source: "env:B"}, {Name: "c", Source: "file:missing.yaml"}},
		wantSecret: tokenFor("a"),
		notRead:    tokenFor("b"),
	}, {
		name: "every context of the kubeconfig",
		in:   Input{Kubeconfig: yamlOf(t, newConfig("ctx-a", "ctx-b")), Keep: keepA},
		want: []summary{ok("ctx-a", "context:ctx-a", "ctx-a"), {Name: "ctx-b", Source: "context:ctx-b", Context: "ctx-b"}},
		// The kubeconfig is one document, read for the kept context: the secrets of that
		// context's user alone are recorded, not the other context's.
		wantSecret: tokenFor("ctx-a"),
		notRead:    tokenFor("ctx-b"),
	}, {
		name: "a context: line of another shard needs no kubeconfig here",
		in:   Input{CLI: true, ClustersFile: "/ws/clusters", Keep: keepA},
		env: fakeEnv{files: map[string]string{
			"/ws/clusters": "a=file:a.yaml\nb=context:b\n", "/ws/a.yaml": yamlOf(t, newConfig("a")),
		}},
		want:       []summary{ok("a", "file:a.yaml", "a"), {Name: "b", Source: "context:b"}},
		wantSecret: tokenFor("a"),
	}, {
		name:       "explicit contexts",
		in:         Input{CLI: true, KubeconfigPath: "/ws/kc.yaml", Contexts: []string{"ctx-b", "ctx-a"}, Keep: keepA},
		env:        fakeEnv{files: map[string]string{"/ws/kc.yaml": yamlOf(t, newConfig("ctx-a", "ctx-b"))}},
		want:       []summary{{Name: "ctx-b", Source: "context:ctx-b", Context: "ctx-b"}, ok("ctx-a", "context:ctx-a", "ctx-a")},
		wantSecret: tokenFor("ctx-a"),
	}, {
		name:    "a line that does not parse fails every shard, every kubeconfig read to be masked",
		in:      Input{Clusters: "a=env:A\nb=env:B\nc=nope:C", Keep: keepA},
		env:     fakeEnv{vars: map[string]string{"A": yamlOf(t, newConfig("a")), "B": yamlOf(t, newConfig("b"))}},
		wantErr: "input clusters line 3",
		// Printed, the error is masked: every kubeconfig it could hold was read.
		wantSecret: tokenFor("b"),
	}, {
		name:    "a name given twice fails every shard",
		in:      Input{Clusters: "a=env:A\nb=env:B\nb=env:C", Keep: keepA},
		env:     fakeEnv{vars: map[string]string{"A": yamlOf(t, newConfig("a"))}},
		wantErr: `"b"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var read []string
			env := tt.env.env()
			getenv, readFile := env.Getenv, env.ReadFile
			env.Getenv = func(k string) string { read = append(read, "env:"+k); return getenv(k) }
			env.ReadFile = func(p string) ([]byte, error) { read = append(read, "file:"+p); return readFile(p) }
			clusters, secrets, err := Load(tt.in, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load() error = %v, want one naming %s", err, tt.wantErr)
				}
				if tt.wantSecret != "" && !slices.Contains(secrets.Values(), tt.wantSecret) {
					t.Errorf("Secrets.Values() lacks %q", tt.wantSecret)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, summarize(clusters)); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			for _, c := range clusters {
				if c.Elsewhere == keepA(c.Name) || (c.Elsewhere && (c.Config != nil || c.Invalid != "")) {
					t.Errorf("cluster %s: Elsewhere %v, Config %v, Invalid %q", c.Name, c.Elsewhere, c.Config != nil, c.Invalid)
				}
			}
			for _, r := range read {
				if r == "env:B" || r == "file:/ws/missing.yaml" || r == "file:/home/me/.kube/config" {
					t.Errorf("read %s, a cluster of another shard", r)
				}
			}
			if values := secrets.Values(); !slices.Contains(values, tt.wantSecret) {
				t.Errorf("Secrets.Values() lacks %q", tt.wantSecret)
			} else if tt.notRead != "" && slices.Contains(values, tt.notRead) {
				t.Errorf("Secrets.Values() holds %q, of a cluster not kept", tt.notRead)
			}
		})
	}
}

// TestLoadKeepDir: --kubeconfig-dir's files are read for the shard's own clusters alone.
func TestLoadKeepDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, doc := range map[string]string{"a.yaml": yamlOf(t, newConfig("a")), "b.yaml": yamlOf(t, newConfig("b"))} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var read []string
	env := fakeEnv{}.env()
	env.ReadFile = func(p string) ([]byte, error) { read = append(read, p); return os.ReadFile(p) }
	clusters, secrets, err := Load(Input{CLI: true, KubeconfigDir: dir, Keep: func(n string) bool { return n == "a" }}, env)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]summary{ok("a", "file:a.yaml", "a"), {Name: "b", Source: "file:b.yaml"}}, summarize(clusters)); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if slices.Contains(read, filepath.Join(dir, "b.yaml")) || slices.Contains(secrets.Values(), tokenFor("b")) {
		t.Errorf("b.yaml, of another shard, was read: %v", read)
	}
}
