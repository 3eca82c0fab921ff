package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v89/github"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
)

// maxCommentPages bounds the search for the sticky comment (100 comments a page).
const maxCommentPages = 30

// Finish posts the final commit statuses (first: they are what a merge waits for), the final
// deployment statuses and the pull-request comment, within ctx, and returns what could not be
// posted, one note each. The verdict is the run's whatever these notes say.
func (p *Publisher) Finish(ctx context.Context, run result.Run) []string {
	if p == nil {
		return nil
	}
	p.finishing.Store(true)
	if p.stopLive != nil {
		p.stopLive()
	}
	if p.stopStatuses != nil {
		p.stopStatuses()
		select {
		case <-p.statusesDone:
			p.finishStatuses(ctx, run)
		case <-ctx.Done():
			p.note("commit statuses not posted: GitHub did not answer in time")
		}
	}
	if p.stopLive != nil {
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
// of the same workflow, key and resources left (found by its marker and written by the
// token's own identity: anyone may paste a marker), or creating it.
func (p *Publisher) comment(ctx context.Context, run result.Run) error {
	number, err := p.pullRequest(ctx)
	if err != nil || number == 0 {
		return err
	}
	marker := report.CommentMarker(p.cfg.Workflow, p.cfg.CommentKey, p.cfg.Resources)
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

// pullRequest is the pull request to comment on: the pull-request input's (on a workflow_run,
// only when its head is the run's commit), the event's own
// (a pull_request event's, or the first of this repository a workflow_run lists), or the
// pull request merged as the event's commit (0 with a note when there is none).
func (p *Publisher) pullRequest(ctx context.Context) (int, error) {
	switch {
	case p.cfg.PullRequest > 0 && p.cfg.EventName == "workflow_run":
		return p.givenPullRequest(ctx, p.cfg.PullRequest)
	case p.cfg.PullRequest > 0:
		return p.cfg.PullRequest, nil
	case p.event.pullRequest > 0:
		return p.event.pullRequest, nil
	case p.eventErr != nil:
		return 0, p.eventErr
	case p.event.fork:
		p.note("pull-request comment not posted: the workflow_run is of a pull request from a fork, which GitHub does not list in its event: give its number in the pull-request input")
		return 0, nil
	case p.eventSHA == "":
		p.note("pull-request comment not posted: GITHUB_SHA is not set, so there is no commit to find the pull request by")
		return 0, nil
	}
	var pulls []*github.PullRequest
	err := p.api.call(ctx, false, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		pulls, resp, err = p.api.gh.PullRequests.ListPullRequestsWithCommit(ctx, p.api.owner, p.api.repo, p.eventSHA, &github.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return 0, err
	}
	for _, pr := range pulls {
		if pr.MergedAt != nil && strings.EqualFold(pr.GetMergeCommitSHA(), p.eventSHA) {
			return pr.GetNumber(), nil
		}
	}
	p.note("pull-request comment not posted: commit %s is not the merge commit of a pull request (a direct push, or a merge GitHub has not indexed yet): give the number in the pull-request input", shortSHA(p.eventSHA))
	return 0, nil
}

// givenPullRequest checks the pull-request input of a workflow_run workflow, where it often
// comes from an artifact the pull request's own workflow uploaded, which the pull request's
// author controls: the pull request is commented on only when its head is the commit of the
// run the event follows, the commit verified.
func (p *Publisher) givenPullRequest(ctx context.Context, number int) (int, error) {
	if p.eventErr != nil {
		return 0, p.eventErr
	}
	var pr *github.PullRequest
	err := p.api.call(ctx, false, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		pr, resp, err = p.api.gh.PullRequests.Get(ctx, p.api.owner, p.api.repo, number)
		return resp, err
	})
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound:
		p.note("pull-request comment not posted: pull request #%d (the pull-request input) was not found in this repository", number)
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read pull request #%d (the pull-request input): %w", number, err)
	}
	if !strings.EqualFold(pr.GetHead().GetSHA(), p.event.headSHA) {
		p.note("pull-request comment not posted: the head of pull request #%d (the pull-request input) is not %s, the commit of the run the workflow_run follows", number, shortSHA(p.event.headSHA))
		return 0, nil
	}
	return number, nil
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
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
		req, err := p.api.gh.NewRequest(ctx, http.MethodPost, p.api.graphQL, map[string]string{"query": viewerQuery})
		if err != nil {
			return nil, err
		}
		return p.api.gh.Do(req, &out)
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
