package publish

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxEventBytes bounds the event file read (GITHUB_EVENT_PATH).
const maxEventBytes = 25 << 20

// event is what the workflow's event says about the pull request and the commit.
type event struct {
	// pullRequest is a pull_request event's own pull request, or, for a workflow_run of a
	// pull request's run, the first pull request of this repository it lists whose head is
	// the run's commit (0: none).
	pullRequest int
	// headSHA is the commit of the run a workflow_run event follows (empty for other events).
	headSHA string
	// fork is a workflow_run of a pull request from another repository, whose pull request
	// GitHub does not list in the event.
	fork bool
}

// readEvent reads the event of the workflow (GITHUB_EVENT_NAME and GITHUB_EVENT_PATH) for
// repository owner/name: only pull_request events and workflow_run events name a pull request
// or a commit other than GITHUB_SHA.
func readEvent(name, path, repository string) (event, error) {
	if path == "" || (name != "workflow_run" && !strings.HasPrefix(name, "pull_request")) {
		return event{}, nil
	}
	f, err := os.Open(path) //nolint:gosec // the runner's event file
	if err != nil {
		return event{}, fmt.Errorf("read the event (GITHUB_EVENT_PATH): %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEventBytes+1))
	if err != nil {
		return event{}, fmt.Errorf("read the event (GITHUB_EVENT_PATH): %w", err)
	}
	if len(data) > maxEventBytes {
		return event{}, fmt.Errorf("read the event (GITHUB_EVENT_PATH): larger than %d bytes", maxEventBytes)
	}
	ev, err := parseEvent(name, data, repository)
	if err != nil {
		return event{}, fmt.Errorf("read the %s event (GITHUB_EVENT_PATH): %w", name, err)
	}
	return ev, nil
}

// parseEvent reads a pull_request or workflow_run event's payload.
func parseEvent(name string, data []byte, repository string) (event, error) {
	var payload struct {
		Number      int `json:"number"`
		PullRequest struct {
			Number int `json:"number"`
		} `json:"pull_request"`
		WorkflowRun struct {
			HeadSHA      string `json:"head_sha"`
			PullRequests []struct {
				Number int `json:"number"`
				Head   struct {
					SHA string `json:"sha"`
				} `json:"head"`
				Base struct {
					Repo struct {
						URL string `json:"url"`
					} `json:"repo"`
				} `json:"base"`
			} `json:"pull_requests"`
			Event          string   `json:"event"`
			HeadRepository repoName `json:"head_repository"`
			Repository     repoName `json:"repository"`
		} `json:"workflow_run"`
	}
	if err := json.Unmarshal(data, &payload); err != nil {
		return event{}, err
	}
	if name != "workflow_run" {
		return event{pullRequest: max(payload.PullRequest.Number, payload.Number, 0)}, nil
	}
	run := payload.WorkflowRun
	if !fullSHA.MatchString(run.HeadSHA) {
		return event{}, fmt.Errorf("workflow_run.head_sha %.50q is not a commit SHA", run.HeadSHA)
	}
	ev := event{headSHA: strings.ToLower(run.HeadSHA)}
	// The list names the pull request of a run only for a pull request's run, and only an
	// entry whose head is the run's commit and whose base is this repository: for a push,
	// GitHub lists the open pull requests whose head branch was pushed (a release branch's
	// pull request from main, say), none of which was verified; the pull request merged as
	// head_sha is looked up instead.
	if strings.HasPrefix(run.Event, "pull_request") {
		for _, pr := range run.PullRequests {
			if pr.Number > 0 && strings.EqualFold(pr.Head.SHA, run.HeadSHA) &&
				strings.HasSuffix(strings.ToLower(pr.Base.Repo.URL), "/repos/"+strings.ToLower(repository)) {
				ev.pullRequest = pr.Number
				break
			}
		}
	}
	ev.fork = ev.pullRequest == 0 && strings.HasPrefix(run.Event, "pull_request") &&
		run.HeadRepository.FullName != "" && !strings.EqualFold(run.HeadRepository.FullName, run.Repository.FullName)
	return ev, nil
}

type repoName struct {
	FullName string `json:"full_name"`
}
