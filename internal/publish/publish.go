// Package publish shows a run's verdicts where people and branch protection look on GitHub: a
// deployment per cluster (or per group of clusters, for big fleets) with its live state, a
// commit status per cluster (or one for big fleets), and one sticky comment on the pull
// request that was merged. It only writes when asked, and what GitHub refuses (a missing
// permission, a rate limit, an outage) is a note, never the verdict.
package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// Defaults of the inputs.
const (
	DefaultEnvironment      = "{cluster}"
	DefaultGroupEnvironment = "production"
	DefaultGroupAbove       = 50
	// clusterPlaceholder is replaced by the cluster's name in the templates.
	clusterPlaceholder = "{cluster}"
)

// Config says what to publish, and where.
type Config struct {
	// Deployments creates a GitHub deployment per cluster; PRComment writes the sticky comment;
	// CommitStatus posts a commit status per cluster (app-status/<cluster>), or one
	// (app-status) above GroupAbove clusters.
	Deployments  bool
	PRComment    bool
	CommitStatus bool

	// Token authenticates to GitHub's REST API at APIURL (https://api.github.com when empty,
	// or GITHUB_API_URL on GitHub Enterprise Server), for the repository owner/name, and to
	// its GraphQL API at GraphQLURL (GITHUB_GRAPHQL_URL; beside APIURL when empty).
	Token      string
	APIURL     string
	GraphQLURL string
	Repository string
	// SHA is the commit the workflow runs for (GITHUB_SHA); a workflow_run event's head_sha
	// takes its place, and the expected revision's commit takes theirs when the revision
	// names one.
	SHA string
	// EventName and EventPath are GITHUB_EVENT_NAME and GITHUB_EVENT_PATH: a pull_request
	// event names its pull request, a workflow_run event its pull request and commit.
	EventName string
	EventPath string
	// PullRequest is the pull request to comment on (the event's, or the one merged as the
	// commit, when 0).
	PullRequest int
	// Workflow and CommentKey name the comment in its marker, with the resources: a run
	// edits the comment of the same three. RunURL links to the run.
	Workflow   string
	CommentKey string
	RunURL     string

	// Environment names a cluster's environment: a template where {cluster} is the cluster's
	// name. EnvironmentURL is the environment's link, a template likewise (none when empty).
	Environment    string
	EnvironmentURL string
	// Above GroupAbove clusters, one deployment per group (GroupEnvironment names a
	// cluster's group, a template likewise: "production" puts them all in one) and one
	// commit status for the fleet.
	GroupAbove       int
	GroupEnvironment string
	// ProductionEnvironment and TransientEnvironment are the deployments'
	// production_environment and transient_environment; GitHub's defaults when nil (true
	// for the environment named production only, and false).
	ProductionEnvironment, TransientEnvironment *bool

	// Resources and Revision are what the run verifies.
	Resources []string
	Revision  flux.Revision

	HTTPClient *http.Client
	Clock      func() time.Time
	// LiveEvery is the least time between two in_progress updates of one deployment (15 s
	// when zero).
	LiveEvery time.Duration
}

// Publisher posts one run's deployments and comment.
type Publisher struct {
	cfg   Config
	api   *api
	clock func() time.Time
	// event is what the event says, or eventErr why it could not be read; eventSHA is the
	// event's commit (GITHUB_SHA, or a workflow_run's head_sha) and ref the deployments'.
	event    event
	eventErr error
	eventSHA string
	ref      string
	targets  []*target
	byName   map[string]*target // cluster → its deployment

	mu       sync.Mutex
	notes    []string
	writes   int
	verdicts map[string]result.Verdict // cluster → its latest verdict
	messages map[string]string         // cluster → its latest progress message

	finishing atomic.Bool   // set by Finish: deployments created from then on skip in_progress
	started   chan struct{} // closed when every deployment was created (or given up)
	stopLive  context.CancelFunc
	liveDone  chan struct{}

	// The commit statuses: the contexts, the clusters that started waiting (under mu), the
	// wake-up of the goroutine that posts the pending ones, its stop and end, and whether
	// GitHub refused the token or failed a pending status.
	statusTargets []*statusTarget
	waits         map[string]bool
	wake          chan struct{}
	stopStatuses  context.CancelFunc
	statusesDone  chan struct{}
	refused       atomic.Bool
	pendingFailed atomic.Bool
}

// target is one GitHub deployment: one cluster's, or a group's.
type target struct {
	environment string
	url         string
	clusters    []string
	id          int64 // 0 until created or found
	posted      string
	postedAt    time.Time
}

// New checks the configuration against the run's clusters.
func New(cfg Config, clusters []string) (*Publisher, error) {
	if !cfg.Deployments && !cfg.PRComment && !cfg.CommitStatus {
		return nil, nil //nolint:nilnil // nothing to publish
	}
	if cfg.Token == "" {
		return nil, errors.New("deployments, pr-comment and commit-status need a GitHub token: set the github-token input (its default is ${{ github.token }})")
	}
	cfg.Environment = cmpOr(cfg.Environment, DefaultEnvironment)
	cfg.GroupEnvironment = cmpOr(cfg.GroupEnvironment, DefaultGroupEnvironment)
	if cfg.GroupAbove <= 0 {
		cfg.GroupAbove = DefaultGroupAbove
	}
	if cfg.LiveEvery <= 0 {
		cfg.LiveEvery = 15 * time.Second
	}
	a, err := newAPI(cfg)
	if err != nil {
		return nil, err
	}
	p := &Publisher{cfg: cfg, api: a, clock: a.clock, byName: map[string]*target{},
		verdicts: map[string]result.Verdict{}, messages: map[string]string{}, started: make(chan struct{}), liveDone: make(chan struct{}),
		waits: map[string]bool{}, wake: make(chan struct{}, 1), statusesDone: make(chan struct{})}
	if cfg.PullRequest < 0 {
		return nil, fmt.Errorf("pull request %d is not a pull request's number", cfg.PullRequest)
	}
	p.event, p.eventErr = readEvent(cfg.EventName, cfg.EventPath, cfg.Repository)
	p.eventSHA = cfg.SHA
	if cfg.EventName == "workflow_run" {
		// GITHUB_SHA is the default branch's head: the run verified the commit of the run
		// that triggered it, and an unreadable event names no commit.
		p.eventSHA = p.event.headSHA
	}
	p.ref = commitOf(cfg.Revision, p.eventSHA)
	if cfg.CommitStatus {
		p.statusTargets = newStatusTargets(clusters, cfg.GroupAbove)
	}
	if !cfg.Deployments {
		return p, nil
	}
	grouped := len(clusters) > cfg.GroupAbove
	envs := map[string]*target{}
	for _, c := range slices.Sorted(slices.Values(clusters)) {
		tmpl := cfg.Environment
		if grouped {
			tmpl = cfg.GroupEnvironment
		}
		env := fill(tmpl, c)
		if err := checkEnvironment(env); err != nil {
			return nil, fmt.Errorf("environment of cluster %s: %w", c, err)
		}
		t := envs[env]
		if t == nil {
			t = &target{environment: env, url: fill(cfg.EnvironmentURL, c)}
			if grouped {
				t.url = ""
			}
			envs[env] = t
			p.targets = append(p.targets, t)
		}
		t.clusters = append(t.clusters, c)
		p.byName[c] = t
	}
	if grouped && len(p.targets) > cfg.GroupAbove {
		return nil, fmt.Errorf("environment-group %q makes %d groups of %d clusters, more than the %d deployments a run may create: name fewer groups", cfg.GroupEnvironment, len(p.targets), len(clusters), cfg.GroupAbove)
	}
	return p, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func fill(tmpl, cluster string) string { return strings.ReplaceAll(tmpl, clusterPlaceholder, cluster) }

// GitHub takes environment names of at most 255 characters, without control characters.
var badEnvironment = regexp.MustCompile(`[\x00-\x1f\x7f]`)

func checkEnvironment(env string) error {
	switch {
	case strings.TrimSpace(env) == "":
		return errors.New("the environment name is empty: set the environment input, e.g. {cluster} or prod-{cluster}")
	case len([]rune(env)) > 255:
		return fmt.Errorf("the environment name %.40q… is longer than GitHub's 255 characters", env)
	case badEnvironment.MatchString(env):
		return fmt.Errorf("the environment name %q holds a control character", env)
	}
	return nil
}

// commitOf is the commit a deployment names: the expected revision's when it is a full
// commit SHA (main@sha1:<sha>, or the bare SHA), the workflow's commit otherwise.
func commitOf(want flux.Revision, workflowSHA string) string {
	s := want.String()
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = strings.TrimPrefix(s[i+1:], "sha1:")
	}
	if fullSHA.MatchString(s) {
		return strings.ToLower(s)
	}
	return workflowSHA
}

var fullSHA = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

func (p *Publisher) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(p.notes, n) {
		p.notes = append(p.notes, n)
	}
}
