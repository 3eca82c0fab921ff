package kubeconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// agentConfig is a kubeconfig as the GitLab agent for Kubernetes gives a CI/CD job: one cluster,
// the agent server's Kubernetes API proxy, and for each agent the job may use a user with the
// agent's token and a context named PROJECT:AGENT; no current-context.
func agentConfig(contexts ...string) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gitlab"] = &clientcmdapi.Cluster{Server: "https://kas.gitlab.example.com/k8s-proxy"}
	for i, c := range contexts {
		user := "agent:" + string(rune('1'+i))
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tokenFor(user)}
		cfg.Contexts[c] = &clientcmdapi.Context{Cluster: "gitlab", AuthInfo: user}
	}
	return cfg
}

// agent is the summary of a cluster loaded from an agentConfig context.
func agent(name, context, user string) summary {
	return summary{Name: name, Source: "context:" + context, Context: context, Host: "https://kas.gitlab.example.com/k8s-proxy", Token: tokenFor(user)}
}

// TestLoadGitLabAgentContexts: every context of a GitLab agent's kubeconfig is a cluster named
// after its agent, with the action's inputs and the CLI's $KUBECONFIG alike; two contexts that
// would name one cluster are refused with the lines that name them apart.
func TestLoadGitLabAgentContexts(t *testing.T) {
	t.Parallel()
	fleet := yamlOf(t, agentConfig("mygroup/agent-config:prod-eu", "mygroup/agent-config:prod-us", "platform/infra/agents:staging"))
	twice := yamlOf(t, agentConfig("mygroup/agent-config:prod", "other/agents:prod"))
	plainToo := newConfig("prod")
	plainToo.Contexts["mygroup/agent-config:prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "prod"}

	tests := []struct {
		name    string
		in      Input
		env     fakeEnv
		want    []summary
		wantErr string
	}{{
		name: "$KUBECONFIG of the agent, every context",
		in:   Input{CLI: true, AllContexts: true},
		env:  fakeEnv{vars: map[string]string{"KUBECONFIG": "/builds/tmp/KUBECONFIG"}, files: map[string]string{"/builds/tmp/KUBECONFIG": fleet}},
		want: []summary{
			agent("prod-eu", "mygroup/agent-config:prod-eu", "agent:1"),
			agent("prod-us", "mygroup/agent-config:prod-us", "agent:2"),
			agent("staging", "platform/infra/agents:staging", "agent:3"),
		},
	}, {
		name: "--context of an agent",
		in:   Input{CLI: true, KubeconfigPath: "/k", Contexts: []string{"platform/infra/agents:staging"}},
		env:  fakeEnv{files: map[string]string{"/k": fleet}},
		want: []summary{agent("staging", "platform/infra/agents:staging", "agent:3")},
	}, {
		name: "the action's kubeconfig input",
		in:   Input{Kubeconfig: b64(fleet)},
		want: []summary{
			agent("prod-eu", "mygroup/agent-config:prod-eu", "agent:1"),
			agent("prod-us", "mygroup/agent-config:prod-us", "agent:2"),
			agent("staging", "platform/infra/agents:staging", "agent:3"),
		},
	}, {
		name: "a clusters line names an agent's context as it likes",
		in:   Input{CLI: true, ClustersFile: "/c", KubeconfigPath: "/k"},
		env:  fakeEnv{files: map[string]string{"/k": fleet, "/c": "eu=context:mygroup/agent-config:prod-eu\n"}},
		want: []summary{agent("eu", "mygroup/agent-config:prod-eu", "agent:1")},
	}, {
		name: "two agents of one name",
		in:   Input{CLI: true, KubeconfigPath: "/k", AllContexts: true},
		env:  fakeEnv{files: map[string]string{"/k": twice}},
		wantErr: `the contexts "mygroup/agent-config:prod" and "other/agents:prod" of kubeconfig /k both name the cluster "prod" ` +
			`(a GitLab agent's context, PROJECT:AGENT, is named after its agent): name them in a --clusters-file, a NAME=context:CONTEXT line each, ` +
			`e.g. prod-1=context:mygroup/agent-config:prod and prod-2=context:other/agents:prod`,
	}, {
		name: "two agents of one name, in the GitLab component",
		in:   Input{CLI: true, AllContexts: true, NamesClusters: "the component's clusters input"},
		env:  fakeEnv{vars: map[string]string{"KUBECONFIG": "/builds/tmp/KUBECONFIG"}, files: map[string]string{"/builds/tmp/KUBECONFIG": twice}},
		wantErr: `the contexts "mygroup/agent-config:prod" and "other/agents:prod" of kubeconfig /builds/tmp/KUBECONFIG both name the cluster "prod" ` +
			`(a GitLab agent's context, PROJECT:AGENT, is named after its agent): name them in the component's clusters input, a NAME=context:CONTEXT line each, ` +
			`e.g. prod-1=context:mygroup/agent-config:prod and prod-2=context:other/agents:prod`,
	}, {
		name: "an agent named as a plain context",
		in:   Input{Kubeconfig: yamlOf(t, plainToo)},
		wantErr: `the contexts "mygroup/agent-config:prod" and "prod" of input kubeconfig both name the cluster "prod" ` +
			`(a GitLab agent's context, PROJECT:AGENT, is named after its agent): name them in the clusters input, a NAME=context:CONTEXT line each, ` +
			`e.g. prod-1=context:mygroup/agent-config:prod and prod-2=context:prod`,
	}, {
		name:    "not an agent's context: no project path before the ':'",
		in:      Input{Kubeconfig: yamlOf(t, newConfig("admin@prod:eu"))},
		wantErr: `context "admin@prod:eu" of input kubeconfig: invalid cluster name "admin@prod:eu": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit; name it in the clusters input: NAME=context:admin@prod:eu`,
	}, {
		name:    "not an agent's name: upper case",
		in:      Input{Kubeconfig: yamlOf(t, newConfig("mygroup/agent-config:Prod"))},
		wantErr: `context "mygroup/agent-config:Prod" of input kubeconfig: invalid cluster name "mygroup/agent-config:Prod": use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit; name it in the clusters input: NAME=context:mygroup/agent-config:Prod`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := Load(tt.in, tt.env.env())
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Load() error (-want +got):\n%s", diff)
			}
			if err != nil {
				got = nil
			}
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("Load() clusters (-want +got):\n%s", diff)
			}
			noSecret(t, "error", errString(err))
		})
	}
}

func TestContextClusterName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ context, want string }{
		{"mygroup/agent-config:prod-eu", "prod-eu"},
		{"a/b/c/d:x", "x"},
		{"kind-dev", "kind-dev"},
		{"project-only:prod", "project-only:prod"},
		{"arn:aws:eks:eu-west-1:1:cluster/prod", "arn:aws:eks:eu-west-1:1:cluster/prod"},
		{"group/project:", "group/project:"},
		{"group/project:-x", "group/project:-x"},
		{"group/project:a:b", "group/project:a:b"},
	} {
		if got := contextClusterName(tc.context); got != tc.want {
			t.Errorf("contextClusterName(%q) = %q, want %q", tc.context, got, tc.want)
		}
	}
}
