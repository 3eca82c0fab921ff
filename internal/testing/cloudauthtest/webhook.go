package cloudauthtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// Authenticator says whose a bearer token is, or ok=false when it does not know it.
type Authenticator func(token string) (user string, ok bool)

// Review is one token the API server asked the webhook about.
type Review struct {
	At            time.Time
	Token         string
	User          string
	Authenticated bool
}

// Webhook is a TokenReview (authentication.k8s.io/v1) webhook on 127.0.0.1 for
// kube-apiserver's --authentication-token-webhook-config-file. A token is authenticated when
// one of its authenticators knows it; the user then belongs to Group.
type Webhook struct {
	// Group is the group every authenticated user belongs to, for a RoleBinding.
	Group string

	server *httptest.Server

	mu             sync.Mutex
	authenticators []Authenticator
	reviews        []Review
}

// NewWebhook starts the webhook.
func NewWebhook() *Webhook {
	w := &Webhook{Group: "app-status:cloud-users"}
	w.server = httptest.NewServer(http.HandlerFunc(w.serve))
	return w
}

// Close stops the webhook.
func (w *Webhook) Close() { w.server.Close() }

// Accept adds an authenticator.
func (w *Webhook) Accept(a Authenticator) {
	w.mu.Lock()
	w.authenticators = append(w.authenticators, a)
	w.mu.Unlock()
}

// Reviews returns the tokens reviewed so far, in order.
func (w *Webhook) Reviews() []Review {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Review(nil), w.reviews...)
}

// APIServerArgs writes the webhook's kubeconfig into dir and returns the kube-apiserver
// flags (for testbed.Options.APIServerArgs) that make the API server ask the webhook about
// every bearer token it does not know, with no cache, so an expired token is refused at once.
func (w *Webhook) APIServerArgs(dir string) ([]string, error) {
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: webhook
  cluster:
    server: %s/authenticate
users:
- name: kube-apiserver
contexts:
- name: webhook
  context: {cluster: webhook, user: kube-apiserver}
current-context: webhook
`, w.server.URL)
	path := filepath.Join(dir, "token-webhook.kubeconfig")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"authentication-token-webhook-config-file=" + path,
		"authentication-token-webhook-version=v1",
		"authentication-token-webhook-cache-ttl=0s",
	}, nil
}

func (w *Webhook) serve(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var review authenticationv1.TokenReview
	if err != nil || json.Unmarshal(body, &review) != nil {
		http.Error(rw, "not a TokenReview", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	authenticators := append([]Authenticator(nil), w.authenticators...)
	w.mu.Unlock()
	rec := Review{At: time.Now(), Token: review.Spec.Token}
	for _, a := range authenticators {
		if user, ok := a(review.Spec.Token); ok {
			rec.User, rec.Authenticated = user, true
			break
		}
	}
	w.mu.Lock()
	w.reviews = append(w.reviews, rec)
	w.mu.Unlock()
	review.Status = authenticationv1.TokenReviewStatus{Authenticated: rec.Authenticated}
	if rec.Authenticated {
		review.Status.User = authenticationv1.UserInfo{Username: rec.User, Groups: []string{w.Group, "system:authenticated"}}
	} else {
		review.Status.Error = "token not recognised"
	}
	review.APIVersion, review.Kind = "authentication.k8s.io/v1", "TokenReview"
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(review)
}
