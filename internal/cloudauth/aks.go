package cloudauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/org/app-status-action/internal/result"
)

// kubeloginArgs are the arguments of kubelogin get-token, as az aks get-credentials and
// kubelogin convert-kubeconfig write them.
type kubeloginArgs struct {
	login, serverID, clientID, tenantID, environment    string
	clientSecret, clientCert, clientCertPassword        string
	federatedTokenFile, authorityHost                   string
	legacy, popEnabled, useAzureRMEnv, noInstanceDiscov bool
}

// parseKubelogin reads `kubelogin get-token --login MODE --server-id ID ...`.
func parseKubelogin(args []string) (func(*provider) (fetcher, error), error) {
	var a kubeloginArgs
	f := flags{
		values: map[string]*string{
			"-l": &a.login, "--login": &a.login, "--server-id": &a.serverID, "--client-id": &a.clientID,
			"-t": &a.tenantID, "--tenant-id": &a.tenantID, "-e": &a.environment, "--environment": &a.environment,
			"--client-secret": &a.clientSecret, "--client-certificate": &a.clientCert,
			"--client-certificate-password": &a.clientCertPassword, "--federated-token-file": &a.federatedTokenFile,
			"--authority-host": &a.authorityHost, "--token-cache-dir": nil, "--timeout": nil, "--pop-claims": nil,
		},
		switches: map[string]*bool{
			"--legacy": &a.legacy, "--pop-enabled": &a.popEnabled, "--use-azurerm-env-vars": &a.useAzureRMEnv,
			"--disable-instance-discovery": &a.noInstanceDiscov,
		},
	}
	positional, err := f.parse(args)
	switch {
	case err != nil:
		return nil, err
	case len(positional) != 1:
		return nil, unexpectedArguments(len(positional)-1, "kubelogin get-token")
	case a.legacy:
		return nil, errors.New("the option --legacy (ADAL tokens) is not supported by the built-in provider")
	case a.popEnabled:
		return nil, errors.New("the option --pop-enabled (proof-of-possession tokens) is not supported by the built-in provider")
	}
	return a.start, nil
}

// The variables kubelogin reads, in its order: a later one wins.
var (
	azureClientIDVars     = []string{"AAD_SERVICE_PRINCIPAL_CLIENT_ID", "AZURE_CLIENT_ID"}
	azureClientSecretVars = []string{"AAD_SERVICE_PRINCIPAL_CLIENT_SECRET", "AZURE_CLIENT_SECRET"}
	azureClientCertVars   = []string{"AAD_SERVICE_PRINCIPAL_CLIENT_CERTIFICATE", "AZURE_CLIENT_CERTIFICATE_PATH"}
	azureCertPasswordVars = []string{"AAD_SERVICE_PRINCIPAL_CLIENT_CERTIFICATE_PASSWORD", "AZURE_CLIENT_CERTIFICATE_PASSWORD"}
)

// kubeloginModes are kubelogin's login modes, the only values of --login a message quotes.
var kubeloginModes = []string{"devicecode", "interactive", "spn", "ropc", "msi", "azurecli", "azd", "workloadidentity", "azurepipelines"}

// githubOIDCAudience is the audience Microsoft Entra ID expects of a federated GitHub token.
const githubOIDCAudience = "api://AzureADTokenExchange"

const azureWorkloadHelp = "set AZURE_CLIENT_ID and AZURE_TENANT_ID to the app registration or managed identity " +
	"with a federated credential for the workflow, and give the job `permissions: id-token: write`"

// last returns the value of the last of the variables that is set, or fallback.
func (e environ) last(fallback string, names ...string) string {
	for _, n := range names {
		if v := e.get(n); v != "" {
			fallback = v
		}
	}
	return fallback
}

// start reads the login mode's settings from the arguments and the environment, as kubelogin
// does (the environment wins), and returns the fetcher of Microsoft Entra ID tokens for the
// --server-id audience.
func (a kubeloginArgs) start(p *provider) (fetcher, error) {
	login := a.login
	if v := p.env.get("AAD_LOGIN_METHOD"); v != "" {
		login = v
	}
	if login == "" {
		login = "devicecode" // kubelogin's default
	}
	if a.serverID == "" {
		return nil, invalid("kubelogin get-token has no --server-id (the AKS server application ID, 6dae42f8-4368-4678-94ff-3960e28e3630 for AKS-managed Microsoft Entra ID)")
	}
	if p.opts.Repository && !serverApplicationID(a.serverID) {
		return nil, invalid("kubelogin --server-id is not an AKS server application ID (a GUID: 6dae42f8-4368-4678-94ff-3960e28e3630 for AKS-managed Microsoft Entra ID, " +
			"or the server application of a cluster with the legacy integration): it is the audience of the job's token, and a kubeconfig from the repository " +
			"may not get a token for another service (a URL, Azure Resource Manager, Microsoft Graph, Key Vault, Storage)")
	}
	authority, err := a.authority(p.env)
	if err != nil {
		return nil, err
	}
	clientOpts := azcore.ClientOptions{
		Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: authority},
		Transport: p.http,
		Retry:     policy.RetryOptions{MaxRetries: 1},
	}
	tenantID := p.env.last(a.tenantID, "AZURE_TENANT_ID")
	var cred azcore.TokenCredential
	switch login {
	case "workloadidentity":
		cred, err = a.workloadIdentity(p, tenantID, p.env.last(a.clientID, "AZURE_CLIENT_ID"), clientOpts)
	case "spn":
		cred, err = a.servicePrincipal(p, tenantID, clientOpts)
	case "azurecli", "devicecode":
		// The Azure CLI's login (azure/aks-set-context converts kubeconfigs to it) or a
		// person's: a container has neither, but when the environment names the app that
		// azure/login signed in with a federated credential, that identity serves. The
		// kubeconfig's --client-id is the Azure CLI's public client, never the app.
		if clientID := p.env.get("AZURE_CLIENT_ID"); clientID != "" && tenantID != "" && hasFederatedToken(p.env, a) {
			cred, err = a.workloadIdentity(p, tenantID, clientID, clientOpts)
			break
		}
		fallthrough
	default:
		if !slices.Contains(kubeloginModes, login) {
			login = "MODE" // not one of kubelogin's: a mistake, or a value not meant to be shown
		}
		return nil, invalid("kubelogin --login %s needs a person or the Azure CLI's login, which a workflow step in a container does not have: "+
			"%s (the app azure/login signs in with; the kubeconfig then needs no change), or convert the kubeconfig with kubelogin convert-kubeconfig -l workloadidentity; "+
			"or use a service principal (AAD_LOGIN_METHOD=spn with AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET)", login, azureWorkloadHelp)
	}
	if err != nil {
		return nil, err
	}
	l := &aksLocator{p: p, cred: cred, environment: a.environment, serverID: a.serverID}
	p.locate, p.locatable = l.locate, l.locatable
	scope := strings.TrimSuffix(a.serverID, "/") + "/.default"
	return func(ctx context.Context) (token, error) {
		tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
		if err != nil {
			return token{}, err
		}
		return token{value: tok.Token, expiry: tok.ExpiresOn}, nil
	}, nil
}

// microsoftServices are application IDs of Microsoft's own services (Azure Resource
// Manager, Microsoft Graph, Azure AD Graph, Key Vault, Storage, Azure DevOps): a token for one
// of them opens far more than a cluster, so no repository kubeconfig may ask for it.
var microsoftServices = []string{
	"797f4846-ba00-4fd7-ba43-dac1f8f63013", "00000003-0000-0000-c000-000000000000", "00000002-0000-0000-c000-000000000000",
	"cfa8b339-82a2-471a-a3c9-0fc0be7a4093", "e406a681-f3d4-42a8-90b6-c2b029497af1", "499b84ac-1321-427f-aa17-267ca6975798",
}

// serverApplicationID reports whether id may be an AKS server application's ID: a GUID
// (8-4-4-4-12 hexadecimal digits) that is not one of microsoftServices.
func serverApplicationID(id string) bool {
	id = strings.ToLower(id)
	return isGUID(id) && !slices.Contains(microsoftServices, id)
}

// azureAuthorities are the Microsoft Entra ID authority hosts of Azure's clouds.
var azureAuthorities = []string{
	strings.TrimSuffix(cloud.AzurePublic.ActiveDirectoryAuthorityHost, "/"),
	strings.TrimSuffix(cloud.AzureChina.ActiveDirectoryAuthorityHost, "/"),
	strings.TrimSuffix(cloud.AzureGovernment.ActiveDirectoryAuthorityHost, "/"),
}

// authority is the Microsoft Entra ID host: AZURE_AUTHORITY_HOST, --authority-host, or the
// host of --environment's cloud.
func (a kubeloginArgs) authority(e environ) (string, error) {
	if v, _ := e.first("AZURE_AUTHORITY_HOST"); v != "" {
		return v, nil
	}
	if a.authorityHost != "" {
		// The kubeconfig may name a cloud's own authority, never another host: the federated
		// token or the client secret would be sent there.
		if !slices.Contains(azureAuthorities, strings.TrimSuffix(strings.ToLower(a.authorityHost), "/")) {
			return "", invalid("kubelogin --authority-host is not a Microsoft Entra ID authority (%s): the kubeconfig may not choose where credentials are sent; "+
				"set AZURE_AUTHORITY_HOST in the step's env: for another one", strings.Join(azureAuthorities, ", "))
		}
		return a.authorityHost, nil
	}
	switch strings.ToLower(a.environment) {
	case "", "azurepubliccloud", "azurecloud":
		return cloud.AzurePublic.ActiveDirectoryAuthorityHost, nil
	case "azurechinacloud":
		return cloud.AzureChina.ActiveDirectoryAuthorityHost, nil
	case "azureusgovernmentcloud", "azureusgovernment":
		return cloud.AzureGovernment.ActiveDirectoryAuthorityHost, nil
	}
	return "", invalid("kubelogin --environment names a cloud the built-in provider does not know (it knows AzurePublicCloud, AzureChinaCloud and AzureUSGovernmentCloud): set AZURE_AUTHORITY_HOST to its Microsoft Entra ID host")
}

// workloadIdentity exchanges a federated token for an access token, as kubelogin does:
// AZURE_FEDERATED_TOKEN_FILE's, else GitHub's OIDC token when the job may request one.
func (a kubeloginArgs) workloadIdentity(p *provider, tenantID, clientID string, clientOpts azcore.ClientOptions) (azcore.TokenCredential, error) {
	switch {
	case clientID == "":
		return nil, invalid("AZURE_CLIENT_ID is not set: %s", azureWorkloadHelp)
	case tenantID == "":
		return nil, invalid("AZURE_TENANT_ID is not set: %s", azureWorkloadHelp)
	}
	var assertion func(context.Context) (string, error)
	reqURL, reqToken := p.env.get("ACTIONS_ID_TOKEN_REQUEST_URL"), p.env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	tokenFile := p.env.last(a.federatedTokenFile, "AZURE_FEDERATED_TOKEN_FILE")
	switch {
	case tokenFile != "":
		assertion = func(context.Context) (string, error) { return federatedTokenFile(p, tokenFile) }
	case reqURL != "" && reqToken != "":
		p.secrets.add(reqToken)
		assertion = func(ctx context.Context) (string, error) {
			return githubIDToken(ctx, p, reqURL, reqToken, githubOIDCAudience)
		}
	default:
		return nil, invalid("no federated token: give the job `permissions: id-token: write` (GitHub's OIDC token), or set AZURE_FEDERATED_TOKEN_FILE")
	}
	return azidentity.NewClientAssertionCredential(tenantID, clientID, assertion, &azidentity.ClientAssertionCredentialOptions{
		ClientOptions: clientOpts, DisableInstanceDiscovery: true,
	})
}

// hasFederatedToken reports whether the environment offers a federated token: GitHub's OIDC
// token endpoint, or a token file.
func hasFederatedToken(e environ, a kubeloginArgs) bool {
	return (e.get("ACTIONS_ID_TOKEN_REQUEST_URL") != "" && e.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN") != "") ||
		e.last(a.federatedTokenFile, "AZURE_FEDERATED_TOKEN_FILE") != ""
}

// servicePrincipal signs in with a client secret or certificate.
func (a kubeloginArgs) servicePrincipal(p *provider, tenantID string, clientOpts azcore.ClientOptions) (azcore.TokenCredential, error) {
	clientID := p.env.last(a.clientID, azureClientIDVars...)
	secret := p.env.last(a.clientSecret, azureClientSecretVars...)
	certPath := p.env.last(a.clientCert, azureClientCertVars...)
	certPassword := p.env.last(a.clientCertPassword, azureCertPasswordVars...)
	if a.useAzureRMEnv {
		clientID = p.env.last(clientID, "ARM_CLIENT_ID")
		secret = p.env.last(secret, "ARM_CLIENT_SECRET")
		certPath = p.env.last(certPath, "ARM_CLIENT_CERTIFICATE_PATH")
		certPassword = p.env.last(certPassword, "ARM_CLIENT_CERTIFICATE_PASSWORD")
		tenantID = p.env.last(tenantID, "ARM_TENANT_ID")
	}
	p.secrets.add(secret)
	p.secrets.add(certPassword)
	switch {
	case clientID == "":
		return nil, invalid("kubelogin --login spn has no client ID: set AZURE_CLIENT_ID")
	case tenantID == "":
		return nil, invalid("kubelogin --login spn has no tenant ID: set AZURE_TENANT_ID")
	case certPath != "":
		data, err := p.opts.ReadFile(certPath)
		if err != nil {
			return nil, invalid("the client certificate %s cannot be read here", certPath)
		}
		certs, key, err := azidentity.ParseCertificates(data, []byte(certPassword))
		if err != nil {
			return nil, invalid("the client certificate %s cannot be used: %s", certPath, p.secrets.quote(err))
		}
		return azidentity.NewClientCertificateCredential(tenantID, clientID, certs, key, &azidentity.ClientCertificateCredentialOptions{
			ClientOptions: clientOpts, DisableInstanceDiscovery: true,
		})
	case secret == "":
		return nil, invalid("kubelogin --login spn has no client secret: set AZURE_CLIENT_SECRET (or AZURE_CLIENT_CERTIFICATE_PATH)")
	}
	return azidentity.NewClientSecretCredential(tenantID, clientID, secret, &azidentity.ClientSecretCredentialOptions{
		ClientOptions: clientOpts, DisableInstanceDiscovery: true,
	})
}

// federatedTokenFile reads the federated token, each time one is needed (it is rotated).
func federatedTokenFile(p *provider, path string) (string, error) {
	data, err := readRunnerFile(p.env, p.opts, path)
	if err != nil {
		why := "cannot be read"
		if errors.Is(err, fs.ErrNotExist) {
			why = "does not exist"
		}
		return "", invalid("AZURE_FEDERATED_TOKEN_FILE %s %s", path, why)
	}
	tok := strings.TrimSpace(string(data))
	p.secrets.add(tok)
	return tok, nil
}

// githubIDToken asks GitHub's OIDC token endpoint of the job for a token for audience
// (Microsoft Entra ID's, or an API server's own).
func githubIDToken(ctx context.Context, p *provider, reqURL, reqToken, audience string) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", invalid("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
	}
	q := u.Query()
	q.Set("audience", audience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("GitHub's OIDC token: %w", err)
	}
	req.Header.Set("Authorization", "bearer "+reqToken)
	req.Header.Set("Accept", "application/json; api-version=2.0")
	resp, err := p.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("GitHub's OIDC token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("GitHub's OIDC token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &Error{Verdict: classify(statusError(resp.StatusCode)),
			Message: fmt.Sprintf("GitHub's OIDC token endpoint answered %s: does the job have `permissions: id-token: write`?", resp.Status)}
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", errors.New("GitHub's OIDC token endpoint answered without a token")
	}
	p.secrets.add(out.Value)
	return out.Value, nil
}

// statusError is an HTTP status as an error that classify reads.
type statusError int

func (s statusError) Error() string       { return http.StatusText(int(s)) }
func (s statusError) HTTPStatusCode() int { return int(s) }

// The Azure Resource Manager API version of the managed cluster calls.
const aksAPIVersion = "2024-09-01"

// azureResourceManager is the Azure Resource Manager endpoint of the cloud kubelogin's
// --environment names.
func azureResourceManager(environment string) (string, bool) {
	var c cloud.Configuration
	switch strings.ToLower(environment) {
	case "", "azurepubliccloud", "azurecloud":
		c = cloud.AzurePublic
	case "azurechinacloud":
		c = cloud.AzureChina
	case "azureusgovernmentcloud", "azureusgovernment":
		c = cloud.AzureGovernment
	default:
		return "", false
	}
	return c.Services[cloud.ResourceManager].Endpoint, true
}

// aksClusterName and aksResourceGroup are the shapes of an AKS cluster's name and of a
// resource group's.
var (
	aksClusterName   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
	aksResourceGroup = regexp.MustCompile(`^[-\w.()]{0,89}[-\w()]$`)
)

// aksUserPrefixes begin the user entries az aks get-credentials writes:
// clusterUser_RESOURCEGROUP_NAME, clusterAdmin_RESOURCEGROUP_NAME with --admin.
var aksUserPrefixes = []string{"clusterUser_", "clusterAdmin_"}

// aksLocator asks Azure Resource Manager, with the job's Microsoft Entra credentials, where a
// repository kubeconfig's AKS cluster is: the managed cluster's FQDNs, and the CA of the
// kubeconfig listClusterUserCredential gives (the managed cluster's resource holds no CA).
type aksLocator struct {
	p           *provider
	cred        azcore.TokenCredential
	environment string // kubelogin's --environment
	serverID    string // kubelogin's --server-id: the audience of the cluster's tokens
}

// aksManagedServerID is the server application of AKS-managed Microsoft Entra ID, the
// audience every AKS cluster with Entra ID accepts.
const aksManagedServerID = "6dae42f8-4368-4678-94ff-3960e28e3630"

// aksCluster is what the managed cluster calls name: the subscription, resource group and name.
type aksCluster struct {
	subscription, resourceGroup, name string
}

// cluster reads the managed cluster's subscription (AZURE_SUBSCRIPTION_ID), resource group and
// name (the kubeconfig's entries as az aks get-credentials names them: the user
// clusterUser_RESOURCEGROUP_NAME and the cluster NAME), or says what is missing.
func (l *aksLocator) cluster(entry Entry) (aksCluster, error) {
	cannot := func(format string, args ...any) error {
		e := invalid("the built-in provider asks Azure Resource Manager where a repository kubeconfig's AKS cluster is before it sends a token, and "+format, args...)
		e.cannotLocate = true
		return e
	}
	if _, _, ok := l.arm(); !ok {
		return aksCluster{}, cannot("kubelogin --environment names a cloud whose Azure Resource Manager it does not know: use AzurePublicCloud, AzureChinaCloud or AzureUSGovernmentCloud")
	}
	sub := strings.TrimSpace(l.p.env.get("AZURE_SUBSCRIPTION_ID"))
	switch {
	case sub == "":
		return aksCluster{}, cannot("AZURE_SUBSCRIPTION_ID is not set: set it in the step's env: to the cluster's subscription")
	case !isGUID(sub):
		return aksCluster{}, cannot("AZURE_SUBSCRIPTION_ID is not a subscription ID (a GUID): set it to the cluster's subscription")
	}
	name := entry.Cluster
	var rg string
	for _, prefix := range aksUserPrefixes {
		if rest, ok := strings.CutPrefix(entry.User, prefix); ok {
			if g, ok := strings.CutSuffix(rest, "_"+name); ok {
				rg = g
			}
		}
	}
	if rg == "" || !aksResourceGroup.MatchString(rg) || !aksClusterName.MatchString(name) {
		return aksCluster{}, cannot("the kubeconfig's user is named %q and its cluster %q, not clusterUser_RESOURCEGROUP_NAME and NAME as az aks get-credentials names them "+
			"(the resource group and the name of the managed cluster): rename the entries (and the context's user: and cluster:)",
			sanitizeLength(entry.User), sanitizeLength(name))
	}
	return aksCluster{subscription: strings.ToLower(sub), resourceGroup: rg, name: name}, nil
}

// locatable says why Azure Resource Manager cannot be asked about the entry's cluster. Where
// it cannot, a server the workflow allows or a pinned CA may stand in, but they say nothing of
// the token's audience: the kubeconfig, which can be a pull request's, would still choose the
// application the job's token is made for (any GUID but Microsoft's services) and have it
// sent to that server. So the token of such a cluster is for AKS-managed Entra ID's server
// application alone; another --server-id is refused for good (CannotLocate is false).
func (l *aksLocator) locatable(entry Entry) error {
	_, err := l.cluster(entry)
	var e *Error
	if err == nil || strings.EqualFold(l.serverID, aksManagedServerID) || !errors.As(err, &e) {
		return err
	}
	return invalid("%s; until it is asked, the token of a repository kubeconfig is made only for AKS-managed Microsoft Entra ID's server application (--server-id %s), "+
		"the audience every AKS cluster accepts, and the kubeconfig's --server-id is another: a kubeconfig from the repository does not choose the audience of a token for a cluster "+
		"the cloud is not asked about, even for a server the workflow allows or a CA it pins (or put the kubeconfig in the workflow: the kubeconfig input, an env: source)",
		e.Message, aksManagedServerID)
}

// arm is the Azure Resource Manager endpoint of kubelogin's --environment, and the scope of
// its tokens; Options.AKSAPI replaces the endpoint (not the scope).
func (l *aksLocator) arm() (base, scope string, ok bool) {
	endpoint, ok := azureResourceManager(l.environment)
	if !ok {
		return "", "", false
	}
	base = endpoint
	if l.p.opts.AKSAPI != "" {
		base = l.p.opts.AKSAPI
	}
	return strings.TrimSuffix(base, "/"), strings.TrimSuffix(endpoint, "/") + "/.default", true
}

// locate asks Azure Resource Manager for the managed cluster (its fqdn and privateFQDN) and
// for its user kubeconfig (listClusterUserCredential: the CA), with an Azure Resource Manager
// token of the credentials the cluster's tokens come from.
func (l *aksLocator) locate(ctx context.Context, entry Entry) (Endpoint, error) {
	c, err := l.cluster(entry)
	if err != nil {
		return Endpoint{}, err
	}
	base, scope, _ := l.arm()
	of := fmt.Sprintf("the cluster %q in the resource group %q of the subscription %s", c.name, c.resourceGroup, c.subscription)
	call := apiCall{cloud: "Azure Resource Manager", what: "the managed cluster read of " + of,
		permission: "Microsoft.ContainerService/managedClusters/read and Microsoft.ContainerService/managedClusters/listClusterUserCredential/action " +
			"(the role Azure Kubernetes Service Cluster User Role has both)",
		notFound: "check AZURE_SUBSCRIPTION_ID, and the resource group and name in the kubeconfig's user clusterUser_RESOURCEGROUP_NAME and cluster NAME"}
	tok, err := l.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
	if err != nil {
		return Endpoint{}, err
	}
	l.p.secrets.add(tok.Token)
	resource := base + "/subscriptions/" + url.PathEscape(c.subscription) + "/resourceGroups/" + url.PathEscape(c.resourceGroup) +
		"/providers/Microsoft.ContainerService/managedClusters/" + url.PathEscape(c.name)
	send := func(method, path string, call apiCall, out any) error {
		req, err := http.NewRequestWithContext(ctx, method, resource+path+"?api-version="+aksAPIVersion, nil)
		if err != nil {
			return fmt.Errorf("the request to Azure Resource Manager for %s: %w", call.what, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		req.Header.Set("Accept", "application/json")
		return call.do(l.p.http, req, out)
	}
	var cluster struct {
		Properties struct {
			FQDN        string `json:"fqdn"`
			PrivateFQDN string `json:"privateFQDN"`
		} `json:"properties"`
	}
	if err := send(http.MethodGet, "", call, &cluster); err != nil {
		return Endpoint{}, err
	}
	var creds struct {
		Kubeconfigs []struct {
			Value []byte `json:"value"` // base64, as encoding/json reads it
		} `json:"kubeconfigs"`
	}
	call.what = "listClusterUserCredential of " + of
	if err := send(http.MethodPost, "/listClusterUserCredential", call, &creds); err != nil {
		return Endpoint{}, err
	}
	var ep Endpoint
	for _, h := range []string{cluster.Properties.FQDN, cluster.Properties.PrivateFQDN} {
		if h := endpointHost(h); h != "" && !slices.Contains(ep.Hosts, h) {
			ep.Hosts = append(ep.Hosts, h)
		}
	}
	for _, k := range creds.Kubeconfigs {
		cfg, err := clientcmd.Load(k.Value)
		if err != nil {
			return Endpoint{}, &Error{Verdict: result.VerdictUnreachable, Message: fmt.Sprintf("Azure Resource Manager's answer to %s is not a kubeconfig", call.what)}
		}
		for _, u := range cfg.AuthInfos { // a local account's credentials: never used, never shown
			l.p.secrets.add(u.Token)
			l.p.secrets.add(string(u.ClientKeyData))
		}
		for _, name := range slices.Sorted(maps.Keys(cfg.Clusters)) {
			ep.CAData = append(ep.CAData, cfg.Clusters[name].CertificateAuthorityData...)
			ep.CAData = append(ep.CAData, '\n')
		}
	}
	return ep, nil
}

// isGUID reports whether s is a GUID: 8-4-4-4-12 hexadecimal digits.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case strings.IndexByte("0123456789abcdefABCDEF", c) < 0:
			return false
		}
	}
	return true
}
