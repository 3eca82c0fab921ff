package kubeconfig

import (
	"slices"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// runVocabulary is what the CLI passes as Input.Words, in part: run statuses, verdicts, a code,
// the Ready condition's reason and the Flux namespace.
var runVocabulary = []string{"success", "failure", "timeout", "Current", "Failed", "InProgress", "image-pull", "ClustersNotReady", "flux-system"}

// TestUnsafeSecretsRefused: a credential of a user in use that cannot be masked safely (shorter
// than the runner's masking minimum, a word the run prints, a part of one or a value holding
// one: a status, a verdict, the Flux namespace, a cluster's name) makes its cluster InvalidConfig, saying why
// without quoting it, and is neither recorded nor given to the runner to mask; the other
// cluster loads. The same value in a user no context in use names is ignored: nothing is
// recorded and its cluster loads.
func TestUnsafeSecretsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		user   *clientcmdapi.AuthInfo
		files  map[string]string
		secret string // the value refused
		want   string // in the Invalid message
	}{
		{name: "token success", user: &clientcmdapi.AuthInfo{Token: "success"}, secret: "success", want: `user "bad" has a token that cannot be masked safely: it is shorter than 8 characters`},
		{name: "token failure", user: &clientcmdapi.AuthInfo{Token: "failure"}, secret: "failure", want: "shorter than 8 characters"},
		{name: "token Current", user: &clientcmdapi.AuthInfo{Token: "Current"}, secret: "Current", want: "shorter than 8 characters"},
		{name: "token Failed", user: &clientcmdapi.AuthInfo{Token: "Failed"}, secret: "Failed", want: "shorter than 8 characters"},
		{name: "token flux-system", user: &clientcmdapi.AuthInfo{Token: "flux-system"}, secret: "flux-system", want: `user "bad" has a token that cannot be masked safely: it is, is part of, or holds a word the run prints`},
		{name: "token part of a word", user: &clientcmdapi.AuthInfo{Token: "ClustersNot"}, secret: "ClustersNot", want: "is part of, or holds a word the run prints"},
		{name: "token a cluster's name", user: &clientcmdapi.AuthInfo{Token: "prod-eu-west-1"}, secret: "prod-eu-west-1", want: "a word the run prints"},
		// The runner would drop failed-clusters, ["prod-eu-west-1"], and the results.
		{name: "token holding a cluster's name", user: &clientcmdapi.AuthInfo{Token: `["prod-eu-west-1"]`}, secret: `["prod-eu-west-1"]`, want: "holds a word the run prints"},
		{name: "token holding a cluster's name and more", user: &clientcmdapi.AuthInfo{Token: `prod-eu-west-1","bad`}, secret: `prod-eu-west-1","bad`, want: "holds a word the run prints"},
		// Short words in JSON's quotes: the runner would drop results and failed-clusters.
		{name: "token of JSON's quotes around a key", user: &clientcmdapi.AuthInfo{Token: `"verdict":"`}, secret: `"verdict":"`, want: "holds a double quote"},
		{name: "token of JSON's quotes around a list", user: &clientcmdapi.AuthInfo{Token: `["eu","us"]`}, secret: `["eu","us"]`, want: "holds a double quote"},
		{name: "token holding a status", user: &clientcmdapi.AuthInfo{Token: "ClustersNotReady-0123"}, secret: "ClustersNotReady-0123", want: "holds a word the run prints"},
		{name: "short password", user: &clientcmdapi.AuthInfo{Username: "deploy", Password: "hunter2"}, secret: "hunter2", want: `user "bad" has a password that cannot be masked safely`},
		{name: "tokenFile", user: &clientcmdapi.AuthInfo{TokenFile: "token"}, files: map[string]string{"/ws/token": "flux-system\n"}, secret: "flux-system",
			want: `user "bad" has a token in its tokenFile that cannot be masked safely`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, used := range []bool{true, false} {
				cfg := newConfig("good", "bad")
				cfg.AuthInfos["other"] = tt.user
				if used {
					cfg.AuthInfos["bad"] = tt.user
				}
				env := fakeEnv{vars: map[string]string{"KC": yamlOf(t, cfg)}, files: tt.files}
				clusters, secrets, err := Load(Input{Clusters: "prod-eu-west-1=env:KC#good\nbad=env:KC#bad", Words: runVocabulary}, env.env())
				if err != nil {
					t.Fatalf("Load() error = %v", err)
				}
				got := summarize(clusters)
				if got[0] != ok("prod-eu-west-1", "env:KC#good", "good") {
					t.Errorf("used %t: the other cluster = %+v, want it loaded", used, got[0])
				}
				if slices.Contains(secrets.Values(), tt.secret) || secrets.Redact("x "+tt.secret+" y") != "x "+tt.secret+" y" {
					t.Errorf("used %t: %q is recorded", used, tt.secret)
				}
				if !used {
					if clusters[1].Invalid != "" {
						t.Errorf("unused: the cluster is invalid: %s", clusters[1].Invalid)
					}
					continue
				}
				if invalid := clusters[1].Invalid; !strings.Contains(invalid, tt.want) || strings.Contains(invalid, tt.secret) {
					t.Errorf("Invalid = %q, want it to hold %q and not quote the secret", invalid, tt.want)
				}
			}
		})
	}
}

// TestGuessedSecretsNeverMaskWords: a value only taken for a credential by its name (an exec
// plugin's --token, an auth provider's client-secret) that is a word the run prints is not
// recorded: the cluster loads as before, and no word is masked.
func TestGuessedSecretsNeverMaskWords(t *testing.T) {
	t.Parallel()
	cfg := newConfig("a")
	cfg.AuthInfos["a"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "my-plugin", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		Args: []string{"--token=flux-system", "--api-key", "Current"}, Env: []clientcmdapi.ExecEnvVar{{Name: "MY_SECRET", Value: "ClustersNotReady"}}}}
	env := fakeEnv{vars: map[string]string{"KC": yamlOf(t, cfg)}, path: []string{"my-plugin"}}
	clusters, secrets, err := Load(Input{CLI: true, ClustersFile: "/ws/clusters", Words: runVocabulary},
		Env{Getenv: env.env().Getenv, ReadFile: fakeEnv{files: map[string]string{"/ws/clusters": "a=env:KC"}}.env().ReadFile, LookPath: env.env().LookPath, Workspace: "/ws"})
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if clusters[0].Invalid != "" || clusters[0].Config == nil {
		t.Errorf("cluster a: Invalid %q, want it loaded", clusters[0].Invalid)
	}
	if values := secrets.Values(); len(values) != 0 {
		t.Errorf("Values() = %q, want none", values)
	}
}

// TestSecretsInWord: a value is a word the run prints when it is one, a part of one, or holds
// one, of MinMaskLen bytes or more; another, or one with only a part of a word, is not.
func TestSecretsInWord(t *testing.T) {
	t.Parallel()
	s := &Secrets{}
	s.addWords("flux-system", "ClustersNotReady", "Current", "platform-prod-eu-west-1", "")
	tests := []struct {
		v    string
		want bool
	}{
		{"flux-system", true},
		{"lux-syst", true},
		{"ClustersNot", true},
		{"NotReady", true},
		{"prod-eu-west", true},
		{"platform-prod-eu-west-1", true},
		{"platform-prod-eu-west-1-x", true}, // it holds a word
		{"flux-systems", true},
		{`["platform-prod-eu-west-1"]`, true},
		{"x-lux-system", false}, // it holds no word whole
		{"Current1", false},
		{"Current", false}, // shorter than MinMaskLen: never masked, so never checked here
		{"tok-0123456789abcdef", false},
		{"clustersnotready", false}, // another case is another word
	}
	for _, tt := range tests {
		if got := s.inWord(tt.v); got != tt.want {
			t.Errorf("inWord(%q) = %t, want %t", tt.v, got, tt.want)
		}
	}
}
