// Package fakegithub is a fake of the part of GitHub's API that app-status posts to
// (deployments, deployment statuses, commit statuses and the combined status of a commit,
// the pull requests of a commit, issue comments, and the GraphQL viewer), served on 127.0.0.1
// for tests. It checks what GitHub checks (the token, the API version, required
// fields and their limits, the permissions, rate limits), answers as GitHub answers, and
// records every call so that tests can assert the exact sequence. Issuer is GitHub's OIDC
// issuer for Actions and a job's ID-token endpoint, or a GitLab instance's issuer
// (NewGitLabIssuer), for API servers that trust it.
package fakegithub

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// APIVersion is the REST API version every request must name (X-GitHub-Api-Version).
const APIVersion = "2022-11-28"

// Limits GitHub enforces on what is written.
const (
	maxStatusDescription = 140
	maxCommentBody       = 65536
)

// resolvedRef is the commit a ref that is not a 40-hex SHA resolves to.
const resolvedRef = "fa1ce5ac0ffee0000000000000000000000000f0"

// Options configures a Server.
type Options struct {
	// Token is the only token accepted ("Authorization: Bearer T" or "token T").
	Token string
	// Owner and Repo name the one repository served.
	Owner, Repo string
	// Login is the identity of a personal token: GET /user and the GraphQL viewer name it, and
	// it writes the comments. Empty, the token is an installation token: GET /user answers
	// 403 "Resource not accessible by integration", and the viewer and the comments' author
	// are the App's bot, "<App>[bot]".
	Login string
	// App is the slug of the GitHub App whose installation token is used (when Login is
	// empty); "github-actions" (the job's GITHUB_TOKEN) when empty.
	App string
	// DenyDeployments and DenyPullRequests refuse writes to deployments and to comments
	// with 403, as GitHub does when the token lacks the permission.
	DenyDeployments  bool
	DenyPullRequests bool
	// DenyStatuses refuses commit statuses with 403, as GitHub does without `statuses: write`.
	DenyStatuses bool
	// RateLimit is the primary rate limit (1000 when zero): past it, 403 with
	// x-ratelimit-remaining: 0.
	RateLimit int
	// Pulls are the pull requests merged as each commit (GET /commits/{sha}/pulls).
	Pulls map[string][]int
	// PullHeads are the open pull requests' head commits (GET /pulls/{number}); any other
	// number is 404.
	PullHeads map[int]string
}

// Fault is an answer given instead of serving a request.
type Fault struct {
	Status     int
	RetryAfter string
	Message    string
}

// Call is one request received, with the status it was answered with.
type Call struct {
	Method, Path string
	Query        url.Values
	Body         map[string]any
	Status       int
}

// Deployment is a deployment as created, with its statuses oldest first.
type Deployment struct {
	ID                                       int64
	Ref, SHA, Environment, Task, Description string
	// Creator is the login of who created it.
	Creator                                     string
	AutoMerge                                   bool
	ProductionEnvironment, TransientEnvironment bool
	RequiredContexts                            []string
	Payload                                     any
	Statuses                                    []Status
}

// Status is one deployment status.
type Status struct {
	State, Description, LogURL, EnvironmentURL string
}

// Comment is an issue or pull-request comment.
type Comment struct {
	ID     int64
	Issue  int
	Author string
	// App is the slug of the GitHub App whose installation token wrote it
	// (performed_via_github_app), empty for a person's.
	App     string
	Body    string
	Updated int // how many times it was edited
}

// Server is a running fake.
type Server struct {
	// URL is the API's base URL, with a trailing slash.
	URL string

	opts   Options
	mu     sync.Mutex
	calls  []Call
	faults []pendingFault
	deps   []*Deployment
	coms   []*Comment
	// commitStatuses are the commit statuses in the order they were posted.
	commitStatuses []CommitStatus
	nextID         int64
	used           int
}

type pendingFault struct {
	method, prefix string
	left           int
	fault          Fault
}

// Start serves a fake API until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.RateLimit <= 0 {
		opts.RateLimit = 1000
	}
	s := &Server{opts: opts, nextID: 100}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// Fail answers the next n requests of method whose path starts with pathPrefix with f.
func (s *Server) Fail(method, pathPrefix string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, pendingFault{method: method, prefix: pathPrefix, left: n, fault: f})
}

// Calls returns every request so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Deployments returns the deployments in creation order.
func (s *Server) Deployments() []Deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Deployment, len(s.deps))
	for i, d := range s.deps {
		out[i] = *d
		out[i].Statuses = slices.Clone(d.Statuses)
	}
	return out
}

// Comments returns the comments of an issue or pull request, oldest first.
func (s *Server) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.coms {
		if c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// SeedComment adds a comment by author, as if written before, and returns its ID.
func (s *Server) SeedComment(issue int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.coms = append(s.coms, &Comment{ID: s.nextID, Issue: issue, Author: author, Body: body})
	return s.nextID
}

// SeedDeployment adds a deployment as another tool (or GitHub itself, for a job with an
// environment:) created it, and returns its ID. Its Ref is its SHA when empty.
func (s *Server) SeedDeployment(d Deployment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	d.ID = s.nextID
	d.Ref = cmp.Or(d.Ref, d.SHA)
	d.Statuses = slices.Clone(d.Statuses)
	s.deps = append(s.deps, &d)
	return d.ID
}

// answer is a response: a status and a JSON body, plus headers.
type answer struct {
	status  int
	body    any
	headers map[string]string
}

func msg(status int, message string) answer {
	return answer{status: status, body: map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest"}}
}

func validation(resource, field, message string) answer {
	return answer{status: http.StatusUnprocessableEntity, body: map[string]any{
		"message": "Validation Failed",
		"errors":  []any{map[string]any{"resource": resource, "code": "custom", "field": field, "message": message}},
	}}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Body != nil && r.ContentLength != 0 {
		_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body)
	}
	s.mu.Lock()
	a := s.route(r, body)
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body, Status: a.status})
	reset := time.Now().Add(time.Minute).Unix()
	remaining := max(s.opts.RateLimit-s.used, 0)
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Ratelimit-Limit", strconv.Itoa(s.opts.RateLimit))
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(reset, 10))
	h.Set("X-Ratelimit-Used", strconv.Itoa(s.used))
	h.Set("X-Ratelimit-Resource", "core")
	s.mu.Unlock()
	for k, v := range a.headers {
		h.Set(k, v)
	}
	w.WriteHeader(a.status)
	if a.body != nil {
		_ = json.NewEncoder(w).Encode(a.body)
	}
}

var (
	deploymentsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/deployments$`)
	statusesPath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/deployments/([0-9]+)/statuses$`)
	commitPullsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/pulls$`)
	pullPath        = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)$`)
	issueComments   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	commentPath     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
	commitStatus    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/statuses/([^/]+)$`)
	combinedPath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/status$`)
	fullSHA         = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// route answers a request; s.mu is held.
func (s *Server) route(r *http.Request, body map[string]any) answer {
	if r.Header.Get("X-GitHub-Api-Version") != APIVersion {
		return msg(http.StatusBadRequest, "Invalid API version")
	}
	auth := r.Header.Get("Authorization")
	if auth != "Bearer "+s.opts.Token && auth != "token "+s.opts.Token {
		return msg(http.StatusUnauthorized, "Bad credentials")
	}
	for i := range s.faults {
		f := &s.faults[i]
		if f.left > 0 && f.method == r.Method && strings.HasPrefix(r.URL.Path, f.prefix) {
			f.left--
			a := msg(f.fault.Status, f.fault.Message)
			if f.fault.RetryAfter != "" {
				a.headers = map[string]string{"Retry-After": f.fault.RetryAfter}
			}
			if f.fault.Status == http.StatusForbidden && f.fault.RetryAfter != "" {
				a.body = map[string]any{"message": f.fault.Message,
					"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}
			}
			return a
		}
	}
	s.used++
	if s.used > s.opts.RateLimit {
		return msg(http.StatusForbidden, "API rate limit exceeded for installation ID 1.")
	}
	p := r.URL.Path
	if r.Method == http.MethodGet && p == "/user" {
		if s.opts.Login == "" {
			return msg(http.StatusForbidden, "Resource not accessible by integration")
		}
		return answer{status: http.StatusOK, body: map[string]any{"login": s.opts.Login, "id": 1, "type": "User"}}
	}
	if p == "/graphql" && r.Method == http.MethodPost {
		return s.graphQL(body)
	}
	for _, re := range []*regexp.Regexp{deploymentsPath, statusesPath, commitPullsPath, pullPath, issueComments, commentPath, commitStatus, combinedPath} {
		if m := re.FindStringSubmatch(p); m != nil && (m[1] != s.opts.Owner || m[2] != s.opts.Repo) {
			return msg(http.StatusNotFound, "Not Found")
		}
	}
	switch {
	case deploymentsPath.MatchString(p) && r.Method == http.MethodGet:
		return s.listDeployments(r)
	case deploymentsPath.MatchString(p) && r.Method == http.MethodPost:
		return s.createDeployment(body)
	case statusesPath.MatchString(p):
		id, _ := strconv.ParseInt(statusesPath.FindStringSubmatch(p)[3], 10, 64)
		return s.statuses(r, id, body)
	case commitPullsPath.MatchString(p) && r.Method == http.MethodGet:
		return s.commitPulls(commitPullsPath.FindStringSubmatch(p)[3])
	case pullPath.MatchString(p) && r.Method == http.MethodGet:
		n, _ := strconv.Atoi(pullPath.FindStringSubmatch(p)[3])
		return s.pull(n)
	case issueComments.MatchString(p):
		n, _ := strconv.Atoi(issueComments.FindStringSubmatch(p)[3])
		return s.issueComments(r, n, body)
	case commitStatus.MatchString(p) && r.Method == http.MethodPost:
		return s.createCommitStatus(commitStatus.FindStringSubmatch(p)[3], body)
	case combinedPath.MatchString(p) && r.Method == http.MethodGet:
		return s.combinedStatus(r, combinedPath.FindStringSubmatch(p)[3])
	case commentPath.MatchString(p) && r.Method == http.MethodPatch:
		id, _ := strconv.ParseInt(commentPath.FindStringSubmatch(p)[3], 10, 64)
		return s.editComment(id, body)
	default:
		return msg(http.StatusNotFound, "Not Found: "+r.Method+" "+p)
	}
}

func (s *Server) listDeployments(r *http.Request) answer {
	q := r.URL.Query()
	var out []any
	for _, d := range slices.Backward(s.deps) { // newest first
		if (q.Get("sha") == "" || q.Get("sha") == d.SHA) && (q.Get("ref") == "" || q.Get("ref") == d.Ref) &&
			(q.Get("environment") == "" || q.Get("environment") == d.Environment) && (q.Get("task") == "" || q.Get("task") == d.Task) {
			out = append(out, s.deploymentJSON(d))
		}
	}
	return s.page(r, out)
}

// page answers one page of items with GitHub's Link header.
func (s *Server) page(r *http.Request, items []any) answer {
	q := r.URL.Query()
	perPage, _ := strconv.Atoi(q.Get("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	start := min((page-1)*perPage, len(items))
	end := min(start+perPage, len(items))
	a := answer{status: http.StatusOK, body: append([]any{}, items[start:end]...)}
	if end < len(items) {
		next := *r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		nq.Set("per_page", strconv.Itoa(perPage))
		next.RawQuery = nq.Encode()
		a.headers = map[string]string{"Link": fmt.Sprintf(`<%s%s>; rel="next"`, strings.TrimSuffix(s.URL, "/"), next.RequestURI())}
	}
	return a
}

func (s *Server) deploymentJSON(d *Deployment) map[string]any {
	u := fmt.Sprintf("%srepos/%s/%s/deployments/%d", s.URL, s.opts.Owner, s.opts.Repo, d.ID)
	payload := d.Payload
	if payload == nil {
		payload = map[string]any{} // GitHub answers {} for a deployment created without one
	}
	return map[string]any{"id": d.ID, "node_id": fmt.Sprintf("DE_%d", d.ID), "url": u, "statuses_url": u + "/statuses",
		"sha": d.SHA, "ref": d.Ref, "task": d.Task, "environment": d.Environment, "description": d.Description, "payload": payload,
		"creator":                map[string]any{"login": d.Creator, "type": userType(d.Creator)},
		"production_environment": d.ProductionEnvironment, "transient_environment": d.TransientEnvironment}
}

func (s *Server) createDeployment(body map[string]any) answer {
	if s.opts.DenyDeployments {
		return msg(http.StatusForbidden, "Resource not accessible by integration")
	}
	ref, _ := body["ref"].(string)
	if ref == "" {
		return validation("Deployment", "ref", `"ref" wasn't supplied.`)
	}
	if auto, ok := body["auto_merge"].(bool); !ok || auto {
		return msg(http.StatusConflict, "Conflict merging main into "+ref+".")
	}
	contexts, ok := body["required_contexts"].([]any)
	if !ok {
		return msg(http.StatusConflict, "Conflict: Commit status checks failed for "+ref+".")
	}
	d := &Deployment{Ref: ref, SHA: resolvedRef, Task: "deploy", Environment: "production", Payload: body["payload"]}
	if fullSHA.MatchString(ref) {
		d.SHA = ref
	}
	if v, _ := body["task"].(string); v != "" {
		d.Task = v
	}
	if v, _ := body["environment"].(string); v != "" {
		d.Environment = v
	}
	d.Description, _ = body["description"].(string)
	d.RequiredContexts = []string{}
	for _, c := range contexts {
		if cs, ok := c.(string); ok {
			d.RequiredContexts = append(d.RequiredContexts, cs)
		}
	}
	// GitHub's defaults: production for the environment named production, never transient.
	d.ProductionEnvironment = d.Environment == "production"
	for field, to := range map[string]*bool{"production_environment": &d.ProductionEnvironment, "transient_environment": &d.TransientEnvironment} {
		switch v := body[field].(type) {
		case nil:
		case bool:
			*to = v
		default:
			return validation("Deployment", field, fmt.Sprintf("%s is not a boolean", field))
		}
	}
	d.Creator = s.author()
	// A deployment of the same commit, environment and task is not refused: GitHub creates one
	// each time a job with that environment: runs, re-runs included.
	s.nextID++
	d.ID = s.nextID
	s.deps = append(s.deps, d)
	return answer{status: http.StatusCreated, body: s.deploymentJSON(d)}
}

var states = []string{"error", "failure", "inactive", "in_progress", "queued", "pending", "success"}

func (s *Server) statuses(r *http.Request, id int64, body map[string]any) answer {
	i := slices.IndexFunc(s.deps, func(d *Deployment) bool { return d.ID == id })
	if i < 0 {
		return msg(http.StatusNotFound, "Not Found")
	}
	d := s.deps[i]
	switch r.Method {
	case http.MethodGet:
		var out []any
		for _, st := range slices.Backward(d.Statuses) {
			out = append(out, map[string]any{"state": st.State, "description": st.Description, "log_url": st.LogURL, "environment_url": st.EnvironmentURL})
		}
		return s.page(r, out)
	case http.MethodPost:
	default:
		return msg(http.StatusNotFound, "Not Found")
	}
	if s.opts.DenyDeployments {
		return msg(http.StatusForbidden, "Resource not accessible by integration")
	}
	state, _ := body["state"].(string)
	if !slices.Contains(states, state) {
		return validation("DeploymentStatus", "state", fmt.Sprintf("state %q is not included in the list", state))
	}
	st := Status{State: state}
	st.Description, _ = body["description"].(string)
	st.LogURL, _ = body["log_url"].(string)
	st.EnvironmentURL, _ = body["environment_url"].(string)
	if utf8.RuneCountInString(st.Description) > maxStatusDescription {
		return validation("DeploymentStatus", "description", "description is too long (maximum is 140 characters)")
	}
	d.Statuses = append(d.Statuses, st)
	s.nextID++
	return answer{status: http.StatusCreated, body: map[string]any{"id": s.nextID, "state": st.State, "description": st.Description,
		"log_url": st.LogURL, "environment_url": st.EnvironmentURL, "environment": d.Environment}}
}

func (s *Server) commitPulls(sha string) answer {
	var out []any
	for _, n := range s.opts.Pulls[sha] {
		out = append(out, map[string]any{"number": n, "state": "closed", "merged_at": "2026-11-24T08:00:00Z", "merge_commit_sha": sha,
			"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.opts.Owner, s.opts.Repo, n)})
	}
	return answer{status: http.StatusOK, body: append([]any{}, out...)}
}

func (s *Server) pull(n int) answer {
	head, ok := s.opts.PullHeads[n]
	if !ok {
		return msg(http.StatusNotFound, "Not Found")
	}
	return answer{status: http.StatusOK, body: map[string]any{"number": n, "state": "open",
		"head": map[string]any{"sha": head}, "base": map[string]any{"ref": "main"},
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.opts.Owner, s.opts.Repo, n)}}
}

// app is the GitHub App whose installation token is used, empty for a personal token.
func (s *Server) app() string {
	if s.opts.Login != "" {
		return ""
	}
	return cmp.Or(s.opts.App, "github-actions")
}

// author is who the token writes as: the person, or the App's bot.
func (s *Server) author() string {
	if s.opts.Login != "" {
		return s.opts.Login
	}
	return s.app() + "[bot]"
}

func userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	return "User"
}

// graphQL answers the one query app-status makes, the token's own login; GitHub answers any
// other it cannot run with 200 and errors.
func (s *Server) graphQL(body map[string]any) answer {
	q, _ := body["query"].(string)
	q = strings.Join(strings.Fields(q), "")
	if q != "query{viewer{login}}" && q != "{viewer{login}}" {
		return answer{status: http.StatusOK, body: map[string]any{"errors": []any{map[string]any{"message": "this fake answers only query { viewer { login } }"}}}}
	}
	return answer{status: http.StatusOK, body: map[string]any{"data": map[string]any{"viewer": map[string]any{"login": s.author()}}}}
}

func (s *Server) commentJSON(c *Comment) map[string]any {
	out := map[string]any{"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body,
		"html_url":                 fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", s.opts.Owner, s.opts.Repo, c.Issue, c.ID),
		"user":                     map[string]any{"login": c.Author, "type": userType(c.Author)},
		"performed_via_github_app": nil}
	if c.App != "" {
		out["performed_via_github_app"] = map[string]any{"slug": c.App}
	}
	return out
}

func (s *Server) issueComments(r *http.Request, issue int, body map[string]any) answer {
	switch r.Method {
	case http.MethodGet:
		var out []any
		for _, c := range s.coms {
			if c.Issue == issue {
				out = append(out, s.commentJSON(c))
			}
		}
		return s.page(r, out)
	case http.MethodPost:
		if s.opts.DenyPullRequests {
			return msg(http.StatusForbidden, "Resource not accessible by integration")
		}
		text, _ := body["body"].(string)
		if a, ok := checkBody(text); !ok {
			return a
		}
		s.nextID++
		c := &Comment{ID: s.nextID, Issue: issue, Author: s.author(), App: s.app(), Body: text}
		s.coms = append(s.coms, c)
		return answer{status: http.StatusCreated, body: s.commentJSON(c)}
	}
	return msg(http.StatusNotFound, "Not Found")
}

func checkBody(text string) (answer, bool) {
	switch {
	case text == "":
		return validation("IssueComment", "body", "body wasn't supplied"), false
	case utf8.RuneCountInString(text) > maxCommentBody:
		return validation("IssueComment", "body", "Body is too long (maximum is 65536 characters)"), false
	}
	return answer{}, true
}

func (s *Server) editComment(id int64, body map[string]any) answer {
	i := slices.IndexFunc(s.coms, func(c *Comment) bool { return c.ID == id })
	if i < 0 {
		return msg(http.StatusNotFound, "Not Found")
	}
	c := s.coms[i]
	if s.opts.DenyPullRequests || c.Author != s.author() {
		return msg(http.StatusForbidden, "Resource not accessible by integration")
	}
	text, _ := body["body"].(string)
	if a, ok := checkBody(text); !ok {
		return a
	}
	c.Body = text
	c.Updated++
	return answer{status: http.StatusOK, body: s.commentJSON(c)}
}
