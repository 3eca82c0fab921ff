package cloudauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/org/app-status-action/internal/result"
)

// An EKS token is "k8s-aws-v1." and the base64url of a presigned STS GetCallerIdentity URL
// that signs the x-k8s-aws-id header with the cluster's name: EKS sends the URL to STS with
// its own name in that header, so a token signed for another cluster does not verify. STS
// accepts the URL for 15 minutes after its X-Amz-Date, whatever X-Amz-Expires says; the 60
// is what aws eks get-token and aws-iam-authenticator write. Presigning needs no network.
const (
	eksTokenPrefix  = "k8s-aws-v1." //nolint:gosec // G101: the prefix of every EKS token, not a credential
	eksClusterIDKey = "x-k8s-aws-id"
	eksPresignTTL   = "60"
	defaultRegion   = "us-east-1"
)

// awsRegion is the shape of an AWS region's name.
var awsRegion = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-[0-9]+$`)

// eksArgs are the arguments of aws eks get-token or aws-iam-authenticator token.
type eksArgs struct {
	cluster     string // the x-k8s-aws-id: --cluster-name, or --cluster-id for EKS local clusters
	region      string
	roleARN     string
	profile     string // aws --profile, which wins over the environment's keys
	sessionName string
	externalID  string
}

// parseAWSCLI reads `aws [--region R] eks get-token --cluster-name N [--role-arn A] ...`, as
// aws eks update-kubeconfig writes it.
func parseAWSCLI(args []string) (func(*provider) (fetcher, error), error) {
	var a eksArgs
	var name, id string
	f := flags{
		values: map[string]*string{
			"--region": &a.region, "--profile": &a.profile, "--cluster-name": &name, "--cluster-id": &id,
			"--role-arn": &a.roleARN, "--output": nil, "--query": nil, "--color": nil,
			"--cli-read-timeout": nil, "--cli-connect-timeout": nil,
		},
		switches: map[string]*bool{"--debug": nil, "--no-cli-pager": nil, "--no-paginate": nil, "--no-cli-auto-prompt": nil},
	}
	positional, err := f.parse(args)
	switch {
	case err != nil:
		return nil, err
	case len(positional) != 2:
		return nil, unexpectedArguments(len(positional)-2, "aws eks get-token")
	}
	a.cluster = id
	if a.cluster == "" {
		a.cluster = name
	}
	if a.cluster == "" {
		return nil, errors.New("aws eks get-token has no --cluster-name")
	}
	a.sessionName = "EKSGetTokenAuth" // what the AWS CLI names the session of --role-arn
	return a.start, nil
}

// parseIAMAuthenticator reads `aws-iam-authenticator token -i N [-r ROLE] ...`.
func parseIAMAuthenticator(args []string) (func(*provider) (fetcher, error), error) {
	var a eksArgs
	f := flags{
		values: map[string]*string{
			"-i": &a.cluster, "--cluster-id": &a.cluster, "-r": &a.roleARN, "--role": &a.roleARN,
			"--region": &a.region, "--session-name": &a.sessionName, "--external-id": &a.externalID,
		},
		switches: map[string]*bool{"--token-only": nil, "--forward-session-name": nil, "--cache": nil},
	}
	positional, err := f.parse(args)
	switch {
	case err != nil:
		return nil, err
	case len(positional) != 1:
		return nil, unexpectedArguments(len(positional)-1, "aws-iam-authenticator token")
	case a.cluster == "":
		return nil, errors.New("aws-iam-authenticator token has no -i CLUSTER_ID")
	}
	return func(p *provider) (fetcher, error) {
		if a.roleARN == "" {
			a.roleARN = p.env.get("DEFAULT_ROLE") // aws-iam-authenticator reads it too
		}
		return a.start(p)
	}, nil
}

const awsCredentialsHelp = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (aws-actions/configure-aws-credentials exports them), " +
	"AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE, or AWS_PROFILE with a shared config file"

// start checks the environment's AWS credentials and returns the fetcher of EKS tokens.
func (a eksArgs) start(p *provider) (fetcher, error) {
	region, _ := p.env.first("AWS_REGION", "AWS_DEFAULT_REGION")
	if a.region != "" {
		region = a.region
	}
	// The region becomes the STS endpoint's host name: a region only, never more of a host.
	if region != "" && !awsRegion.MatchString(region) {
		return nil, invalid("the AWS region is not a region name (such as eu-west-1): it names the STS endpoint credentials are sent to")
	}
	base, err := a.credentials(p, region)
	if err != nil {
		return nil, err
	}
	e := &eksTokens{args: a, p: p, region: region, base: base}
	p.locate = e.locate
	return e.token, nil
}

// credentials returns the base credentials, in the AWS CLI's order: --profile, the
// environment's keys, web identity, then a profile (AWS_PROFILE, the default profile of a
// shared config file, or container credentials) through the SDK's own loading. The EC2
// instance metadata service is never asked: a container action cannot count on reaching it,
// and a wrong guess would hang.
func (a eksArgs) credentials(p *provider, region string) (aws.CredentialsProvider, error) {
	if a.profile == "" {
		id, secret := p.env.get("AWS_ACCESS_KEY_ID"), p.env.get("AWS_SECRET_ACCESS_KEY")
		switch {
		case id != "" && secret != "":
			session := p.env.get("AWS_SESSION_TOKEN")
			p.secrets.add(secret)
			p.secrets.add(session)
			return credentials.NewStaticCredentialsProvider(id, secret, session), nil
		case id != "":
			return nil, invalid("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set both (aws-actions/configure-aws-credentials does)")
		case secret != "":
			return nil, invalid("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not: set both (aws-actions/configure-aws-credentials does)")
		}
		role, file := p.env.get("AWS_ROLE_ARN"), p.env.get("AWS_WEB_IDENTITY_TOKEN_FILE")
		switch {
		case role != "" && file != "":
			retriever := webIdentityFile{p: p, path: file}
			client := p.stsClient(orDefault(region), nil, true)
			return masked(p, stscreds.NewWebIdentityRoleProvider(client, role, retriever, func(o *stscreds.WebIdentityRoleOptions) {
				o.RoleSessionName = p.env.get("AWS_ROLE_SESSION_NAME")
			})), nil
		case role != "":
			return nil, invalid("AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not: set both for web identity, or %s", awsCredentialsHelp)
		case file != "":
			return nil, invalid("AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not: set both for web identity, or %s", awsCredentialsHelp)
		}
	}
	profile := a.profile
	if profile == "" {
		profile, _ = p.env.first("AWS_PROFILE", "AWS_DEFAULT_PROFILE")
	}
	files := sharedFiles(p)
	_, container := p.env.first("AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	if profile == "" && len(files) == 0 && container == "" {
		return nil, invalid("no AWS credentials in the environment: %s", awsCredentialsHelp)
	}
	return masked(p, &sharedConfigCredentials{p: p, profile: profile, region: region}), nil
}

// sharedFiles returns the AWS shared config and credentials files that exist.
func sharedFiles(p *provider) []string {
	home := p.env.get("HOME")
	var found []string
	for _, f := range []struct{ env, name string }{{"AWS_CONFIG_FILE", "config"}, {"AWS_SHARED_CREDENTIALS_FILE", "credentials"}} {
		path := p.env.get(f.env)
		if path == "" && home != "" {
			path = filepath.Join(home, ".aws", f.name)
		}
		if path == "" {
			continue
		}
		if _, err := p.opts.ReadFile(path); err == nil {
			found = append(found, path)
		}
	}
	return found
}

// sharedConfigCredentials loads a profile with the SDK's own loading on first use (it reads
// the shared files and its own variables, such as AWS_CA_BUNDLE, and may run a
// credential_process or an SSO refresh), without the EC2 instance metadata service.
type sharedConfigCredentials struct {
	p       *provider
	profile string
	region  string

	mu    sync.Mutex
	creds aws.CredentialsProvider
}

func (s *sharedConfigCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	s.mu.Lock()
	if s.creds == nil {
		opts := []func(*config.LoadOptions) error{
			config.WithEC2IMDSClientEnableState(imds.ClientDisabled),
			config.WithRegion(orDefault(s.region)),
			// A client of the SDK's own kind, to which it can add AWS_CA_BUNDLE; the
			// credentials it obtains are handed to OnSecret by masked.
			config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(requestTimeout)),
		}
		if s.profile != "" {
			opts = append(opts, config.WithSharedConfigProfile(s.profile))
		}
		if v := s.p.env.get("AWS_CONFIG_FILE"); v != "" {
			opts = append(opts, config.WithSharedConfigFiles([]string{v}))
		}
		if v := s.p.env.get("AWS_SHARED_CREDENTIALS_FILE"); v != "" {
			opts = append(opts, config.WithSharedCredentialsFiles([]string{v}))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			s.mu.Unlock()
			return aws.Credentials{}, &Error{Verdict: result.VerdictInvalidConfig, err: err,
				Message: fmt.Sprintf("cannot load the AWS profile %q: %s", s.profile, s.p.secrets.quote(err))}
		}
		if cfg.Credentials == nil {
			s.mu.Unlock()
			return aws.Credentials{}, invalid("the AWS profile %q has no credentials: %s", s.profile, awsCredentialsHelp)
		}
		s.creds = cfg.Credentials
	}
	creds := s.creds
	s.mu.Unlock()
	return creds.Retrieve(ctx)
}

// webIdentityFile reads the web identity token through Options.ReadFile, each time it is
// needed (the file is rotated), and hands it to OnSecret.
type webIdentityFile struct {
	p    *provider
	path string
}

func (w webIdentityFile) GetIdentityToken() ([]byte, error) {
	data, err := readRunnerFile(w.p.env, w.p.opts, w.path)
	if err != nil {
		why := "cannot be read"
		if errors.Is(err, fs.ErrNotExist) {
			why = "does not exist"
		}
		return nil, invalid("AWS_WEB_IDENTITY_TOKEN_FILE %s %s", w.path, why)
	}
	w.p.secrets.add(string(data))
	return []byte(strings.TrimSpace(string(data))), nil
}

// masked hands the secret key and session token of every credentials retrieved to OnSecret,
// and caches them until they expire.
func masked(p *provider, next aws.CredentialsProvider) aws.CredentialsProvider {
	return aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		c, err := next.Retrieve(ctx)
		if err == nil {
			p.secrets.add(c.SecretAccessKey)
			p.secrets.add(c.SessionToken)
		}
		return c, err
	}))
}

// stsClient returns an STS client. The endpoint of AWS_ENDPOINT_URL_STS (or AWS_ENDPOINT_URL)
// is used for the calls that reach STS (assuming a role), never for the presigned URL, which
// EKS accepts only for STS's own host names.
func (p *provider) stsClient(region string, creds aws.CredentialsProvider, callsSTS bool) *sts.Client {
	o := sts.Options{Region: region, Credentials: creds, HTTPClient: p.http, RetryMaxAttempts: 2}
	if callsSTS && !strings.EqualFold(p.env.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		if endpoint, _ := p.env.first("AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"); endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}
	return sts.New(o)
}

func orDefault(region string) string {
	if region == "" {
		return defaultRegion
	}
	return region
}

// eksTokens presigns EKS tokens.
type eksTokens struct {
	args   eksArgs
	p      *provider
	region string
	base   aws.CredentialsProvider

	mu        sync.Mutex
	creds     aws.CredentialsProvider // the role's when --role-arn is given, else base
	presigner *sts.PresignClient
}

// credentials are the credentials the tokens are signed with: the role's of --role-arn,
// assumed with the base credentials, or the base credentials.
func (e *eksTokens) credentials() aws.CredentialsProvider {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.creds == nil {
		e.creds = e.base
		if e.args.roleARN != "" {
			a := e.args
			e.creds = masked(e.p, stscreds.NewAssumeRoleProvider(e.p.stsClient(orDefault(e.region), e.base, true), a.roleARN, func(o *stscreds.AssumeRoleOptions) {
				o.RoleSessionName = a.sessionName
				if a.externalID != "" {
					o.ExternalID = aws.String(a.externalID)
				}
			}))
		}
	}
	return e.creds
}

func (e *eksTokens) presignClient() *sts.PresignClient {
	creds := e.credentials()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.presigner == nil {
		e.presigner = sts.NewPresignClient(e.p.stsClient(orDefault(e.region), creds, false))
	}
	return e.presigner
}

// eksClusterName is the shape of an EKS cluster's name.
var eksClusterName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)

// emptyPayloadHash is the SHA-256 of an empty body, as SigV4 signs it.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// locate asks EKS (DescribeCluster, signed with the credentials the tokens are signed with)
// where the cluster the tokens are for is: its endpoint and CA.
func (e *eksTokens) locate(ctx context.Context, _ Entry) (Endpoint, error) {
	region, name := orDefault(e.region), e.args.cluster
	call := apiCall{cloud: "EKS", what: fmt.Sprintf("DescribeCluster of the cluster %q in %s", name, region), permission: "eks:DescribeCluster",
		notFound: "check the cluster's name (--cluster-name, or -i) and region (--region, or AWS_REGION) in the kubeconfig"}
	if !eksClusterName.MatchString(name) {
		return Endpoint{}, invalid("the kubeconfig's EKS cluster name is not one (letters, digits, hyphens and underscores, at most 100)")
	}
	base := e.p.opts.EKSAPI
	if base == "" {
		base = "https://eks." + region + ".amazonaws.com"
		if strings.HasPrefix(region, "cn-") {
			base += ".cn"
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/clusters/"+url.PathEscape(name), nil)
	if err != nil {
		return Endpoint{}, fmt.Errorf("EKS DescribeCluster: %w", err)
	}
	creds, err := e.credentials().Retrieve(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	req.Header.Set("X-Amz-Content-Sha256", emptyPayloadHash)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, emptyPayloadHash, "eks", region, e.p.opts.Clock()); err != nil {
		return Endpoint{}, fmt.Errorf("EKS DescribeCluster: %w", err)
	}
	var out struct {
		Cluster struct {
			Endpoint             string `json:"endpoint"`
			CertificateAuthority struct {
				Data string `json:"data"`
			} `json:"certificateAuthority"`
		} `json:"cluster"`
	}
	if err := call.do(e.p.http, req, &out); err != nil {
		return Endpoint{}, err
	}
	ca, err := base64.StdEncoding.DecodeString(out.Cluster.CertificateAuthority.Data)
	if err != nil {
		return Endpoint{}, &Error{Verdict: result.VerdictUnreachable, Message: fmt.Sprintf("EKS's answer to %s has a CA that is not base64", call.what)}
	}
	ep := Endpoint{CAData: ca}
	if h := endpointHost(out.Cluster.Endpoint); h != "" {
		ep.Hosts = []string{h}
	}
	return ep, nil
}

// maskPresignedURL masks what an EKS token decodes to, which an API server or a proxy may
// quote: the presigned URL (replayable at STS for 15 minutes), its signature, and the session
// token it carries, as it is and URL-encoded as the URL holds it.
func maskPresignedURL(s *secrets, presigned string) {
	s.add(presigned)
	u, err := url.Parse(presigned)
	if err != nil {
		return
	}
	q := u.Query()
	for _, name := range []string{"X-Amz-Signature", "X-Amz-Security-Token"} {
		if v := q.Get(name); v != "" {
			s.add(v)
			s.add(url.QueryEscape(v))
		}
	}
}

func (e *eksTokens) token(ctx context.Context) (token, error) {
	signedAt := e.p.opts.Clock()
	req, err := e.presignClient().PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(po *sts.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(o *sts.Options) {
			o.APIOptions = append(o.APIOptions,
				smithyhttp.SetHeaderValue(eksClusterIDKey, e.args.cluster),
				smithyhttp.SetHeaderValue("X-Amz-Expires", eksPresignTTL))
		})
	})
	if err != nil {
		return token{}, err
	}
	maskPresignedURL(e.p.secrets, req.URL)
	return token{
		value:  eksTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)),
		expiry: signedAt.Add(e.p.opts.EKSTokenLifetime),
	}, nil
}
