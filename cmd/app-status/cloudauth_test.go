package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/org/app-status-action/internal/cloudauth"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/cloudauthtest"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// cloudFakes is what the tests of the built-in credential providers run against: one test-bed
// cluster (with Flux) whose kube-apiserver asks a TokenReview webhook served by this test about
// every bearer token, and the fakes of the clouds' token endpoints the webhook trusts. The
// webhook's users get deploy/rbac/base/app-status.yaml's read-only ClusterRole, nothing more.
type cloudFakes struct {
	dir     string
	webhook *cloudauthtest.Webhook
	aws     *cloudauthtest.AWS
	oidc    *cloudauthtest.GitHubOIDC
	google  *cloudauthtest.Google
	entra   *cloudauthtest.Entra
	bed     *testbed.Shared

	bindOnce sync.Once
	bindErr  error
}

// eksCluster is the cluster name the EKS tokens must be signed for.
const eksCluster = "prod-eks"

var clouds *cloudFakes

// newCloudFakes starts the fakes; the cluster starts on first use.
func newCloudFakes() (*cloudFakes, error) {
	dir, err := os.MkdirTemp("", "app-status-clouds-")
	if err != nil {
		return nil, err
	}
	f := &cloudFakes{dir: dir, webhook: cloudauthtest.NewWebhook(), aws: cloudauthtest.NewAWS(), oidc: cloudauthtest.NewGitHubOIDC()}
	f.google = cloudauthtest.NewGoogle(f.oidc)
	f.entra = cloudauthtest.NewEntra(f.oidc)
	f.webhook.Accept(func(tok string) (string, bool) {
		arn, err := f.aws.VerifyEKSToken(tok, eksCluster)
		return arn, err == nil
	})
	f.webhook.Accept(f.google.Valid)
	f.webhook.Accept(f.entra.Valid)
	args, err := f.webhook.APIServerArgs(dir)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.bed = testbed.NewShared(testbed.Options{Clusters: 1, Flux: true, Prefix: "clouds", APIServerArgs: args})
	return f, nil
}

func (f *cloudFakes) Close() {
	f.bed.Close()
	f.webhook.Close()
	f.aws.Close()
	f.google.Close()
	f.entra.Close()
	f.oidc.Close()
	_ = os.RemoveAll(f.dir)
}

// cluster returns the test cluster, with the webhook's group bound to the read-only role.
func (f *cloudFakes) cluster(t *testing.T) *testbed.Cluster {
	t.Helper()
	c := f.bed.Get(t).Clusters[0]
	f.bindOnce.Do(func() { f.bindErr = bindReadOnly(c, f.webhook.Group) })
	if f.bindErr != nil {
		t.Fatal(f.bindErr)
	}
	return c
}

// bindReadOnly creates deploy/rbac/base/app-status.yaml's ClusterRole and binds it to group.
func bindReadOnly(c *testbed.Cluster, group string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := repoRoot()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "rbac", "base", "app-status.yaml"))
	if err != nil {
		return err
	}
	objs, err := testbed.DecodeManifests(data)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
			return err
		}
		if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "cloud-users-read-only"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: group}},
		}
		if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	}
	return fmt.Errorf("deploy/rbac/base/app-status.yaml has no ClusterRole")
}

// signedBy returns the access key ID that signed an EKS token.
func signedBy(token string) string {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "k8s-aws-v1."))
	if err != nil {
		return ""
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		return ""
	}
	id, _, _ := strings.Cut(u.Query().Get("X-Amz-Credential"), "/")
	return id
}

// repoRoot is the repository's root, two folders up from this package.
func repoRoot() (string, error) {
	return filepath.Abs(filepath.Join("..", ".."))
}

// clusterEntry is the kubeconfig's cluster entry the clouds' CLIs write: the server and its CA.
func clusterEntry(c *testbed.Cluster, name string) string {
	return fmt.Sprintf("- cluster:\n    certificate-authority-data: %s\n    server: %s\n  name: %s\n",
		base64.StdEncoding.EncodeToString(c.Config.CAData), c.Config.Host, name)
}

// eksKubeconfig is what `aws eks update-kubeconfig --name NAME --region eu-west-1` writes.
func eksKubeconfig(c *testbed.Cluster, name string) string {
	arn := "arn:aws:eks:eu-west-1:111122223333:cluster/" + name
	return "apiVersion: v1\nclusters:\n" + clusterEntry(c, arn) + `contexts:
- context:
    cluster: ` + arn + `
    user: ` + arn + `
  name: ` + arn + `
current-context: ` + arn + `
kind: Config
preferences: {}
users:
- name: ` + arn + `
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      - --cluster-name
      - ` + name + `
      - --output
      - json
      command: aws
`
}

// gkeKubeconfig is what `gcloud container clusters get-credentials prod-gke --region
// europe-west1` writes.
func gkeKubeconfig(c *testbed.Cluster) string {
	const name = "gke_my-project_europe-west1_prod-gke"
	return "apiVersion: v1\nclusters:\n" + clusterEntry(c, name) + `contexts:
- context:
    cluster: ` + name + `
    user: ` + name + `
  name: ` + name + `
current-context: ` + name + `
kind: Config
preferences: {}
users:
- name: ` + name + `
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
`
}

// aksKubeconfig is what `az aks get-credentials -g my-rg -n prod-aks` writes for a cluster
// with Microsoft Entra ID.
func aksKubeconfig(c *testbed.Cluster, tenant string) string {
	return "apiVersion: v1\nclusters:\n" + clusterEntry(c, "prod-aks") + `contexts:
- context:
    cluster: prod-aks
    user: clusterUser_my-rg_prod-aks
  name: prod-aks
current-context: prod-aks
kind: Config
preferences: {}
users:
- name: clusterUser_my-rg_prod-aks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - get-token
      - --environment
      - AzurePublicCloud
      - --server-id
      - 6dae42f8-4368-4678-94ff-3960e28e3630
      - --client-id
      - 80faf920-1908-4b52-b5ef-a8e7bedfc67a
      - --tenant-id
      - ` + tenant + `
      - --login
      - devicecode
      command: kubelogin
      env: null
      installHint: |2

        kubelogin is not installed which is required to connect to AAD enabled cluster.

        To learn more, please go to https://aka.ms/aks/kubelogin
      provideClusterInfo: false
`
}

// TestActionManagedClusters: the kubeconfigs of EKS, GKE and AKS exactly as the clouds' CLIs
// write them verify an app with only what the standard login actions leave in the
// environment: aws-actions/configure-aws-credentials' keys, google-github-actions/auth's
// credentials file (named by its path on the runner, found in the workspace), the job's
// GitHub OIDC token with azure/login's client and tenant IDs. The API server checks every
// token with the clouds' fakes (an EKS token signed for another cluster is refused:
// Unauthorized). Every token it saw was masked, and none appears in the log, the outputs or
// the summary.
func TestActionManagedClusters(t *testing.T) {
	c := clouds.cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
		t.Fatal(err)
	}
	workspace := t.TempDir()
	creds, err := clouds.google.WriteCredentialsFile(workspace)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := clouds.entra.WriteCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := clouds.aws.NewKey("arn:aws:sts::111122223333:assumed-role/deployer/GitHubActions", true)
	// The webhook is shared by the package's tests (which do not run in parallel): this run's
	// reviews are the ones after these.
	earlier := len(clouds.webhook.Reviews())
	run := runAction(t, workspace, map[string]string{
		"clusters": "eks=env:KC_EKS\ngke=env:KC_GKE\naks=env:KC_AKS\neks-other=env:KC_EKS_OTHER\n",
		"resource": "kustomization/" + ns, "revision": commit, "timeout": "2m", "max-parallel": "4",
	}, map[string]string{
		"KC_EKS":       eksKubeconfig(c, eksCluster),
		"KC_EKS_OTHER": eksKubeconfig(c, "staging-eks"),
		"KC_GKE":       gkeKubeconfig(c),
		"KC_AKS":       aksKubeconfig(c, clouds.entra.TenantID),
		// aws-actions/configure-aws-credentials
		"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "AWS_SESSION_TOKEN": key.SessionToken,
		"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
		// google-github-actions/auth: the path on the runner; the container sees the workspace
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join("/home/runner/work/app/app", filepath.Base(creds)),
		// the runner, for a job with id-token: write
		"ACTIONS_ID_TOKEN_REQUEST_URL": clouds.oidc.RequestURL, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": clouds.oidc.RequestToken,
		// the workflow's env, as docs/credentials.md shows
		"AZURE_CLIENT_ID": clouds.entra.ClientID, "AZURE_TENANT_ID": clouds.entra.TenantID,
		// the test's Entra ID instead of login.microsoftonline.com, and its CA
		"AZURE_AUTHORITY_HOST": clouds.entra.URL, "SSL_CERT_FILE": ca,
	}, "")

	var results []result.Cluster
	if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil {
		t.Fatalf("results output is not JSON: %v\n%s", err, run.stdout)
	}
	got := map[string]string{}
	for _, r := range results {
		got[r.Name] = string(r.Verdict)
		t.Logf("%s: %s: %s", r.Name, r.Verdict, r.Message)
		if r.Name == "eks-other" && !strings.HasPrefix(r.Message, "EKS credentials (aws eks get-token, built in): the API server refused the token (401): ") {
			t.Errorf("eks-other's message %q does not say whose token was refused", r.Message)
		}
	}
	want := map[string]string{"eks": "Current", "gke": "Current", "aks": "Current", "eks-other": "Unauthorized"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s\n%s", diff, run.stdout)
	}
	if run.exitCode != 1 || run.outputs["ready-clusters"] != `["aks","eks","gke"]` {
		t.Errorf("exit code %d, ready-clusters %s; want 1 and the three clusters", run.exitCode, run.outputs["ready-clusters"])
	}

	// Every token the API server was shown, accepted or not, was masked before it was used.
	var tokens []string
	for _, r := range clouds.webhook.Reviews()[earlier:] {
		if !slices.Contains(tokens, r.Token) {
			tokens = append(tokens, r.Token)
		}
	}
	if len(tokens) < 4 {
		t.Fatalf("the API server saw %d tokens, want at least one per cluster", len(tokens))
	}
	masked := map[string]bool{}
	for _, l := range strings.Split(run.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "::add-mask::"); ok {
			masked[v] = true
		}
	}
	secrets := append(tokens, key.SecretAccessKey, key.SessionToken, clouds.oidc.RequestToken)
	for _, s := range secrets {
		if !masked[s] {
			t.Errorf("%.16s… was never masked", s)
		}
		for _, l := range strings.Split(run.stdout, "\n") {
			if !strings.HasPrefix(l, "::add-mask::") && strings.Contains(l, s) {
				t.Errorf("a secret leaked into the log: %.80s…", l)
			}
		}
		for name, v := range run.outputs {
			if strings.Contains(v, s) {
				t.Errorf("a secret leaked into output %s", name)
			}
		}
		if strings.Contains(run.summary, s) {
			t.Error("a secret leaked into the summary")
		}
	}
}

// TestTokenRefreshedDuringTheWait: EKS tokens that STS accepts for only 5 s, used for at most
// 4 s (replaced in the background from 2 s before), while the wait lasts three times as long:
// the app's Kustomization only appears after 15 s, so the lists and watches of its objects
// start long after the first token expired, while the first watches go on. The verdict
// arrives, and the API server never had to refuse a token. The control keeps a token for an
// hour: the API server refuses it once it expired, and the request is sent again with a new
// token (the refresh on a 401), so the verdict arrives all the same.
func TestTokenRefreshedDuringTheWait(t *testing.T) {
	c := clouds.cluster(t)
	for _, tt := range []struct {
		name         string
		lifetime     time.Duration
		wantRejected bool
	}{
		{name: "refreshed ahead", lifetime: 4 * time.Second},
		{name: "control: kept until refused", lifetime: time.Hour, wantRejected: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			ns := c.Namespace(t)
			aws := cloudauthtest.NewAWS()
			defer aws.Close()
			aws.Validity = 5 * time.Second
			const cluster = "refresh-eks"
			key := aws.NewKey("arn:aws:iam::111122223333:user/"+ns, false)
			clouds.webhook.Accept(func(tok string) (string, bool) {
				arn, err := aws.VerifyEKSToken(tok, cluster)
				return arn, err == nil
			})
			vars := map[string]string{"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey, "KC": eksKubeconfig(c, cluster)}
			clusters, secrets, err := kubeconfig.Load(kubeconfig.Input{Clusters: "refresh=env:KC"}, kubeconfig.Env{
				Getenv:    func(k string) string { return vars[k] },
				CloudAuth: cloudauth.Options{EKSTokenLifetime: tt.lifetime, RefreshMargin: 2 * time.Second},
			})
			if err != nil || clusters[0].Config == nil {
				t.Fatalf("Load() = %+v, %v", clusters, err)
			}
			ref, err := flux.ParseResource("kustomization/"+ns, "flux-system")
			if err != nil {
				t.Fatal(err)
			}
			rev, err := flux.ParseRevision(commit)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(15 * time.Second)
				if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
					t.Error(err)
				}
			}()
			start := time.Now()
			run := verify.Run(ctx, verify.Request{
				Targets:   []verify.Target{{Name: "refresh", Config: clusters[0].Config, Invalid: clusters[0].Invalid}},
				Resources: []flux.Ref{ref}, Revision: rev, Timeout: 2 * time.Minute, Workloads: true,
			})
			took := time.Since(start)
			got := run.Results[0]
			if got.Verdict != result.VerdictCurrent {
				t.Fatalf("verdict = %s: %s, want Current", got.Verdict, got.Message)
			}
			if took < 15*time.Second {
				t.Fatalf("the verdict came after %s, before the app existed", took)
			}
			accepted, rejected := map[string]bool{}, 0
			for _, r := range clouds.webhook.Reviews() {
				if signedBy(r.Token) != key.AccessKeyID {
					continue // another test's
				}
				if r.Authenticated {
					accepted[r.Token] = true
				} else {
					rejected++
				}
			}
			t.Logf("%s: Current after %s; %d tokens accepted, %d requests refused", tt.name, took.Round(time.Millisecond), len(accepted), rejected)
			if tt.wantRejected != (rejected > 0) {
				t.Errorf("requests refused = %d, want refusals %v", rejected, tt.wantRejected)
			}
			if len(accepted) < 2 {
				t.Errorf("the API server accepted %d tokens over %s, want a new one once the first expired", len(accepted), took)
			}
			for tok := range accepted {
				if !slices.Contains(secrets.Values(), tok) {
					t.Errorf("token %.16s… never reached the secrets to redact", tok)
				}
			}
		})
	}
}
