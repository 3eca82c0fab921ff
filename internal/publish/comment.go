package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-github/v75/github"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
)

const (
	// maxCommentPages bounds the search for the sticky comment (100 comments a page).
	maxCommentPages = 30
	// maxEventBytes bounds the event file read for the pull request's number.
	maxEventBytes = 25 << 20
)

// Finish posts the final deployment statuses and the pull-request comment, within ctx, and
// returns what could not be posted, one note each. The verdict is the run's whatever these
// notes say.
func (p *Publisher) Finish(ctx context.Context, run result.Run) []string {
	if p == nil {
		return nil
	}
	p.finishing.Store(true)
	if p.stopLive != nil {
		p.stopLive()
		select {
		case <-p.liveDone:
			if p.cfg.Deployments {
				p.finishDeployments(ctx, run)
			}
		case <-ctx.Done():
			p.note("deployment statuses not posted: GitHub did not answer in time")
		}
	}
	if p.cfg.PRComment {
		if err := p.comment(ctx, run); err != nil {
			if denied(err) {
				p.note("pull-request comment not posted: GitHub refused the token (%s): grant the job `pull-requests: write`", brief(err))
			} else {
				p.note("pull-request comment not posted: %s", brief(err))
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

// comment writes the fleet's verdict on the pull request, editing the comment an earlier run
// for the same workflow and resources left (found by its marker and written by the
// token's own identity: anyone may paste a marker), or creating it.
func (p *Publisher) comment(ctx context.Context, run result.Run) error {
	number, err := p.pullRequest(ctx)
	if err != nil || number == 0 {
		return err
	}
	marker := report.CommentMarker(p.cfg.Workflow, p.cfg.Resources)
	body := report.Comment(run, report.CommentOptions{Marker: marker, RunURL: p.cfg.RunURL, Now: p.clock()})
	var existing int64
	if identity, err := p.identity(ctx); err != nil {
		// Never edit a comment that may be another author's: write a new one.
		p.note("the earlier pull-request comment was not looked for, a new one is written: the token's identity is unknown (GraphQL viewer: %s)", brief(err))
	} else if existing, err = p.findComment(ctx, number, marker, identity); err != nil {
		return err
	}
	if existing != 0 {
		return p.write(ctx, func() (*github.Response, error) {
			_, resp, err := p.api.gh.Issues.EditComment(ctx, p.api.owner, p.api.repo, existing, &github.IssueComment{Body: github.Ptr(body)})
			return resp, err
		})
	}
	return p.write(ctx, func() (*github.Response, error) {
		_, resp, err := p.api.gh.Issues.CreateComment(ctx, p.api.owner, p.api.repo, number, &github.IssueComment{Body: github.Ptr(body)})
		return resp, err
	})
}

// pullRequest is the pull request to comment on: a pull_request event's own, or the pull
// request merged as the workflow's commit (0 with a note when there is none).
func (p *Publisher) pullRequest(ctx context.Context) (int, error) {
	if strings.HasPrefix(p.cfg.EventName, "pull_request") {
		n, err := eventPullRequest(p.cfg.EventPath)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			return n, nil
		}
	}
	if p.cfg.SHA == "" {
		p.note("pull-request comment not posted: GITHUB_SHA is not set, so there is no commit to find the pull request by")
		return 0, nil
	}
	var pulls []*github.PullRequest
	err := p.api.call(ctx, false, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		pulls, resp, err = p.api.gh.PullRequests.ListPullRequestsWithCommit(ctx, p.api.owner, p.api.repo, p.cfg.SHA, &github.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return 0, err
	}
	for _, pr := range pulls {
		if pr.MergedAt != nil && strings.EqualFold(pr.GetMergeCommitSHA(), p.cfg.SHA) {
			return pr.GetNumber(), nil
		}
	}
	p.note("pull-request comment not posted: commit %s is not the merge commit of a pull request (a direct push, or a merge GitHub has not indexed yet)", shortSHA(p.cfg.SHA))
	return 0, nil
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// eventPullRequest reads the pull request's number from a pull_request event's payload.
func eventPullRequest(path string) (int, error) {
	if path == "" {
		return 0, nil
	}
	f, err := os.Open(path) //nolint:gosec // the runner's event file
	if err != nil {
		return 0, fmt.Errorf("read the event (GITHUB_EVENT_PATH): %w", err)
	}
	defer f.Close()
	var event struct {
		Number      int `json:"number"`
		PullRequest struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.NewDecoder(&limitedReader{f, maxEventBytes}).Decode(&event); err != nil {
		return 0, fmt.Errorf("read the event (GITHUB_EVENT_PATH): %w", err)
	}
	if event.PullRequest.Number > 0 {
		return event.PullRequest.Number, nil
	}
	return event.Number, nil
}

type limitedReader struct {
	f interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("larger than %d bytes", maxEventBytes)
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	n, err := l.f.Read(b)
	l.n -= int64(n)
	return n, err
}

// viewerQuery asks GitHub's GraphQL API who the token is: it answers every kind of token,
// the job's (github-actions[bot]), an App installation's (<slug>[bot]) and a person's.
const viewerQuery = "query { viewer { login } }"

// identity is the login the token writes comments as: GraphQL's viewer, else GET /user (a
// personal token, where the GraphQL API is out of reach).
func (p *Publisher) identity(ctx context.Context) (string, error) {
	login, err := p.viewer(ctx)
	if err == nil {
		return login, nil
	}
	var user *github.User
	if uerr := p.api.call(ctx, false, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		user, resp, err = p.api.gh.Users.Get(ctx, "")
		return resp, err
	}); uerr == nil && user.GetLogin() != "" {
		return user.GetLogin(), nil
	}
	return "", err
}

func (p *Publisher) viewer(ctx context.Context) (string, error) {
	var out struct {
		Data struct {
			Viewer struct {
				Login string `json:"login"`
			} `json:"viewer"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	err := p.api.call(ctx, false, func() (*github.Response, error) {
		// A new request each time: a retry sends the body again.
		req, err := p.api.gh.NewRequest(http.MethodPost, p.api.graphQL, map[string]string{"query": viewerQuery})
		if err != nil {
			return nil, err
		}
		return p.api.gh.Do(ctx, req, &out)
	})
	switch {
	case err != nil:
		return "", err
	case len(out.Errors) > 0:
		return "", fmt.Errorf("%s", out.Errors[0].Message)
	case out.Data.Viewer.Login == "":
		return "", errors.New("no login in the answer")
	}
	return out.Data.Viewer.Login, nil
}

func (p *Publisher) findComment(ctx context.Context, number int, marker, identity string) (int64, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for range maxCommentPages {
		var comments []*github.IssueComment
		var resp *github.Response
		err := p.api.call(ctx, false, func() (*github.Response, error) {
			var err error
			comments, resp, err = p.api.gh.Issues.ListComments(ctx, p.api.owner, p.api.repo, number, opts)
			return resp, err
		})
		if err != nil {
			return 0, err
		}
		for _, c := range comments {
			if strings.HasPrefix(c.GetBody(), marker+"\n") && strings.EqualFold(c.GetUser().GetLogin(), identity) {
				return c.GetID(), nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
	return 0, nil
}

// listSome names at most five items, then "and N more".
func listSome(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}
