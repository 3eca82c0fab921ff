package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/testing/runnertest"
)

// maskFleetKubeconfig is a kubeconfig of one cluster at server whose user is given as YAML.
func maskFleetKubeconfig(name, server, user string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: %s, cluster: {server: %q}}]\ncontexts: [{name: %s, context: {cluster: %s, user: %s}}]\n"+
		"current-context: %s\nusers:\n- name: %s\n  user:\n%s", name, server, name, name, name, name, name, user)
}

// TestActionOutputsSurviveRunnerMasks: a fleet of EKS, GKE and AKS exec kubeconfigs, an OIDC
// auth-provider one, a token one, and Teleport (tsh) and Pinniped exec ones whose flags name
// the cluster and addresses, named as platforms name clusters
// (platform-prod-us-east-1, which is also the EKS plugin's --cluster-name), verified by the
// action: read with the runner's rules, the masks it registers (its secrets: the token, the
// keys, the minted cloud tokens) hide nothing of any output, so the runner passes every job
// output on, the cluster lists and the report whole. Registering a plugin's --cluster-name, the
// OIDC client-id "kubernetes" or config-mode "1" would drop them all.
func TestActionOutputsSurviveRunnerMasks(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	api := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(api.Close)
	oidc := cloudauthtest.NewGitHubOIDC()
	t.Cleanup(oidc.Close)
	google := cloudauthtest.NewGoogle(oidc)
	t.Cleanup(google.Close)

	const token = "eyJhbGciOiJSUzI1NiJ9.platform-prod-token.Zx9Qp3Lm7Vb2Kk4Rr8"
	kubeconfigs := map[string]string{
		"platform-prod-us-east-1": "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n" +
			"      args: [--region, us-east-1, eks, get-token, --cluster-name, platform-prod-us-east-1, --output, json]\n" +
			"      env: [{name: AWS_PROFILE, value: platform-prod-us-east-1-deploy}]\n",
		"platform-prod-europe-west1": "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: gke-gcloud-auth-plugin\n      provideClusterInfo: true\n",
		"platform-prod-westeurope-2": "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n" +
			"      args: [get-token, --environment, AzurePublicCloud, --server-id, 6dae42f8-4368-4678-94ff-3960e28e3630, --client-id, 80faf920-1908-4b52-b5ef-a8e7bedfc67a, " +
			"--tenant-id, 72f988bf-86f1-41af-91ab-2d7cd011db47, --login, spn]\n",
		"platform-prod-us-west-2-oidc": "    auth-provider:\n      name: oidc\n      config:\n        client-id: kubernetes\n" +
			"        idp-issuer-url: https://sso.example.com/realms/platform-prod-us-west-2\n        config-mode: \"1\"\n        extra-scopes: groups\n" +
			"        client-secret: oidc-client-secret-0123456789\n        id-token: eyJhbGciOiJSUzI1NiJ9.oidc-id-token.0123456789\n        refresh-token: rt-0123456789abcdef\n",
		"platform-prod-ap-south-1": "    token: " + token + "\n",
		// Plugins no built-in provider replaces, not installed here: the clusters fail, and
		// failed-clusters must name them.
		"platform-prod-us-east-2": "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: tsh\n" +
			"      args: [kube, credentials, --kube-cluster=platform-prod-us-east-2, --teleport-cluster=teleport.example.com, --proxy=teleport.example.com:443]\n",
		"platform-prod-eu-north-1": "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: pinniped\n" +
			"      args: [login, oidc, --enable-concierge, --concierge-authenticator-name=platform-prod-eu-north-1-jwt, --concierge-authenticator-type=jwt, " +
			"--concierge-endpoint=https://platform-prod-eu-north-1.example.com:6443, --concierge-ca-bundle-data=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM2akNDQWRLZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFWTVJNd0VRWURWUVFERXdwcmRXSmwK, " +
			"--issuer=https://sso.example.com/realms/platform-prod-eu-north-1, --client-id=pinniped-cli, --scopes=offline_access,openid,pinniped:request-audience, " +
			"--request-audience=platform-prod-eu-north-1]\n",
	}
	vars := map[string]string{
		"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "a1b2c3d4", "INPUT_TIMEOUT": "20s",
		// aws-actions/configure-aws-credentials
		"AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_REGION": "us-east-1",
		// the runner, for a job with id-token: write
		"ACTIONS_ID_TOKEN_REQUEST_URL": oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc.RequestToken,
		// a service principal whose authority does not answer: AKS fails, and is named among
		// the failed clusters
		"AZURE_CLIENT_ID": "80faf920-1908-4b52-b5ef-a8e7bedfc67a", "AZURE_TENANT_ID": "72f988bf-86f1-41af-91ab-2d7cd011db47",
		"AZURE_CLIENT_SECRET": "azure-client-secret~0123456789", "AZURE_AUTHORITY_HOST": "https://127.0.0.1:1/",
	}
	var clusters strings.Builder
	for name, user := range kubeconfigs {
		v := "KC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		vars[v] = maskFleetKubeconfig(name, api.URL(), user)
		fmt.Fprintf(&clusters, "%s=env:%s\n", name, v)
	}
	vars["INPUT_CLUSTERS"] = clusters.String()
	f := newFakeEnv(t, vars)
	creds, err := google.WriteCredentialsFile(f.vars["GITHUB_WORKSPACE"])
	if err != nil {
		t.Fatal(err)
	}
	f.vars["GOOGLE_APPLICATION_CREDENTIALS"] = creds

	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1 (AKS, OIDC, Teleport and Pinniped fail)", code)
	}
	log := f.stdout.String()
	masks := runnertest.Masks(log)
	for _, secret := range []string{token, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "oidc-client-secret-0123456789", "azure-client-secret~0123456789"} {
		if !masks[secret] {
			t.Errorf("%q is not masked: the test proves nothing", secret)
		}
	}
	data := f.file(t, f.output)
	outputs, err := filecommand.ParseOutputs(data)
	if err != nil {
		t.Fatalf("the runner could not read the outputs: %v\n%s", err, data)
	}
	want := map[string]string{
		"status":          "failure",
		"ready-clusters":  `["platform-prod-ap-south-1","platform-prod-europe-west1","platform-prod-us-east-1"]`,
		"failed-clusters": `["platform-prod-eu-north-1","platform-prod-us-east-2","platform-prod-us-west-2-oidc","platform-prod-westeurope-2"]`,
	}
	for name, v := range want {
		if outputs[name] != v {
			t.Errorf("output %s = %q, want %q\n%s", name, outputs[name], v, log)
		}
	}
	for _, name := range []string{"status", "results", "ready-clusters", "failed-clusters", "report", "report-file", "junit-file", "duration", "message"} {
		if _, ok := outputs[name]; !ok {
			t.Errorf("output %s not written", name)
		}
	}
	for name, v := range outputs {
		if m := runnertest.Hidden(masks, v); m != "" {
			t.Errorf("output %s holds the mask %q: the runner would drop it (%.200s)", name, m, v)
		}
	}
}

// TestSecretsNeverRewriteTheRunsWords: a kubeconfig whose token is one of the run's words
// (success, failure, Current, Failed, the Flux namespace) changes no word of the run, on a
// healthy cluster and a failing one. In a user no context in use names, it is ignored: the
// exit code, the status output and every verdict in results are the engine's, and no mask
// is registered. In the user of a context in use, that cluster is InvalidConfig, saying why,
// the other keeps its verdict, and the word is never given to the runner to mask: the runner
// drops no output, and blanks nothing in them.
func TestSecretsNeverRewriteTheRunsWords(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	healthy := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(healthy.Close)
	resources, objects = fakeapi.App("app", rev, 3)
	objects[0]["status"].(map[string]any)["conditions"] = []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "BuildFailed", "message": "kustomize build failed", "observedGeneration": int64(1)},
	}
	failing := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(failing.Close)

	kubeconfig := func(server, token, spare string) string {
		doc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\ncontexts: [{name: c, context: {cluster: c, user: deploy}}]\n"+
			"current-context: c\nusers:\n- name: deploy\n  user: {token: %q}\n", server, token)
		if spare != "" {
			doc += fmt.Sprintf("- name: spare\n  user: {token: %q}\n", spare)
		}
		return doc
	}
	for _, word := range []string{"success", "failure", "Current", "Failed", "flux-system"} {
		for _, fleet := range []struct {
			name    string
			server  string
			verdict string
			status  string
		}{{"healthy", healthy.URL(), "Current", "success"}, {"failing", failing.URL(), "Failed", "failure"}} {
			for _, used := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/used=%t", word, fleet.name, used), func(t *testing.T) {
					t.Parallel()
					vars := map[string]string{"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "a1b2c3d4", "INPUT_TIMEOUT": "20s",
						"INPUT_CLUSTERS": "prod=env:KC_PROD\n", "KC_PROD": kubeconfig(fleet.server, "tok-prod-0123456789", word)}
					wantVerdicts := map[string]string{"prod": fleet.verdict}
					wantStatus, wantCode := fleet.status, map[string]int{"success": 0, "failure": 1}[fleet.status]
					if used {
						vars["INPUT_CLUSTERS"] += "extra=env:KC_EXTRA\n"
						vars["KC_EXTRA"] = kubeconfig(healthy.URL(), word, "")
						wantVerdicts["extra"] = "InvalidConfig"
						wantStatus, wantCode = "failure", 1
					}
					f := newFakeEnv(t, vars)
					if code := Run(context.Background(), []string{"action"}, f.env()); code != wantCode {
						t.Errorf("Run() = %d, want %d\n%s", code, wantCode, f.stdout.String())
					}
					log := f.stdout.String()
					masks := runnertest.Masks(log)
					if masks[word] {
						t.Errorf("%q is registered as a mask", word)
					}
					data := f.file(t, f.output)
					outputs, err := filecommand.ParseOutputs(data)
					if err != nil {
						t.Fatalf("the runner could not read the outputs: %v\n%s", err, data)
					}
					if outputs["status"] != wantStatus {
						t.Errorf("output status = %q, want %q", outputs["status"], wantStatus)
					}
					var results []struct {
						Cluster, Verdict, Message string
						Flux                      []struct{ ID, Namespace, Verdict string }
					}
					if err := json.Unmarshal([]byte(outputs["results"]), &results); err != nil {
						t.Fatalf("results = %s: %v", outputs["results"], err)
					}
					got := map[string]string{}
					for _, r := range results {
						got[r.Cluster] = r.Verdict
						for _, fo := range r.Flux {
							if fo.ID != "Kustomization/flux-system/app" || fo.Namespace != "flux-system" || fo.Verdict == "***" {
								t.Errorf("cluster %s: Flux object %+v rewritten", r.Cluster, fo)
							}
						}
						if r.Verdict == "InvalidConfig" && !strings.Contains(r.Message, "cannot be masked safely") {
							t.Errorf("cluster %s: message %q, want it to say the token cannot be masked", r.Cluster, r.Message)
						}
					}
					if diff := cmp.Diff(wantVerdicts, got); diff != "" {
						t.Errorf("verdicts in results (-want +got):\n%s", diff)
					}
					for name, v := range outputs {
						if m := runnertest.Hidden(masks, v); m != "" {
							t.Errorf("output %s holds the mask %q: the runner would drop it", name, m)
						}
					}
				})
			}
		}
	}
}

// TestRunWords: the words a kubeconfig's credential may not be are the run's vocabulary and
// its inputs as it prints them: the namespace, the revision, and each requested resource's
// kind, namespace, name and ID.
func TestRunWords(t *testing.T) {
	t.Parallel()
	s := settings{resources: []string{"ks/web-frontend", "helmrelease/payments/billing-api"}, namespace: "apps-system", revision: " 5f1c0ffee0dd "}
	words := s.runWords()
	for _, want := range []string{"success", "Current", "image-pull", "failedClusters", "apps-system", "5f1c0ffee0dd",
		"Kustomization", "web-frontend", "Kustomization/apps-system/web-frontend", "HelmRelease", "payments", "billing-api", "HelmRelease/payments/billing-api"} {
		if !slices.Contains(words, want) {
			t.Errorf("runWords() lacks %q", want)
		}
	}
}
