package fakegithub

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"
)

// maxStatusesPerContext is how many statuses GitHub keeps for one commit and context: the
// next one is refused.
const maxStatusesPerContext = 1000

// CommitStatus is one commit status, as posted.
type CommitStatus struct {
	ID                                          int64
	SHA, Context, State, Description, TargetURL string
	// Creator is the login of who posted it.
	Creator string
}

var commitStates = []string{"error", "failure", "pending", "success"}

// CommitStatuses returns every status posted on a commit, oldest first, each context's
// replaced ones included.
func (s *Server) CommitStatuses(sha string) []CommitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CommitStatus
	for _, st := range s.commitStatuses {
		if st.SHA == sha {
			out = append(out, st)
		}
	}
	return out
}

// CombinedStatus is what GitHub shows for a commit (GET /commits/{ref}/status): the latest
// status of each context, sorted by context, and their combined state.
func (s *Server) CombinedStatus(sha string) (state string, statuses []CommitStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.combined(sha)
}

// combined is CombinedStatus; s.mu is held. A later status of a context replaces the earlier
// one. The state is failure when any is error or failure, pending when there is none or any
// is pending, success when all are.
func (s *Server) combined(sha string) (string, []CommitStatus) {
	latest := map[string]CommitStatus{}
	for _, st := range s.commitStatuses {
		if st.SHA == sha {
			latest[st.Context] = st
		}
	}
	var out []CommitStatus
	for _, st := range latest {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b CommitStatus) int { return cmp.Compare(a.Context, b.Context) })
	state := "success"
	if len(out) == 0 {
		state = "pending"
	}
	for _, st := range out {
		switch st.State {
		case "error", "failure":
			return "failure", out
		case "pending":
			state = "pending"
		}
	}
	return state, out
}

func (s *Server) commitStatusJSON(st CommitStatus) map[string]any {
	return map[string]any{"id": st.ID, "node_id": fmt.Sprintf("SC_%d", st.ID), "state": st.State, "description": st.Description,
		"target_url": st.TargetURL, "context": st.Context,
		"url":     fmt.Sprintf("%srepos/%s/%s/statuses/%s", s.URL, s.opts.Owner, s.opts.Repo, st.SHA),
		"creator": map[string]any{"login": st.Creator, "type": userType(st.Creator)}}
}

// createCommitStatus answers POST /repos/{owner}/{repo}/statuses/{sha}; s.mu is held.
func (s *Server) createCommitStatus(sha string, body map[string]any) answer {
	if s.opts.DenyStatuses {
		return msg(http.StatusForbidden, "Resource not accessible by integration")
	}
	if !fullSHA.MatchString(sha) {
		return validation("Status", "sha", "No commit found for SHA: "+sha)
	}
	st := CommitStatus{SHA: sha, Context: "default", Creator: s.author()}
	st.State, _ = body["state"].(string)
	if !slices.Contains(commitStates, st.State) {
		return validation("Status", "state", fmt.Sprintf("state %q is not included in the list", st.State))
	}
	if v, _ := body["context"].(string); v != "" {
		st.Context = v
	}
	st.Description, _ = body["description"].(string)
	st.TargetURL, _ = body["target_url"].(string)
	if utf8.RuneCountInString(st.Description) > maxStatusDescription {
		return validation("Status", "description", "description is too long (maximum is 140 characters)")
	}
	n := 0
	for _, old := range s.commitStatuses {
		if old.SHA == sha && old.Context == st.Context {
			n++
		}
	}
	if n >= maxStatusesPerContext {
		return validation("Status", "context", "This SHA and context has reached the maximum number of statuses.")
	}
	s.nextID++
	st.ID = s.nextID
	s.commitStatuses = append(s.commitStatuses, st)
	return answer{status: http.StatusCreated, body: s.commitStatusJSON(st)}
}

// combinedStatus answers GET /repos/{owner}/{repo}/commits/{ref}/status; s.mu is held.
func (s *Server) combinedStatus(r *http.Request, sha string) answer {
	state, latest := s.combined(sha)
	items := make([]any, len(latest))
	for i, st := range latest {
		items[i] = s.commitStatusJSON(st)
	}
	page := s.page(r, items)
	page.body = map[string]any{"state": state, "sha": sha, "total_count": len(latest), "statuses": page.body}
	return page
}
