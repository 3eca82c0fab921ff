package cloudauthtest

import (
	"sync"
	"time"
)

// issuedTokens is what a fake token endpoint issued, each token with its expiry.
type issuedTokens struct {
	mu     sync.Mutex
	expiry map[string]time.Time
}

func (t *issuedTokens) add(token string, expiry time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.expiry == nil {
		t.expiry = map[string]time.Time{}
	}
	t.expiry[token] = expiry
}

// valid reports whether token was issued and has not expired.
func (t *issuedTokens) valid(token string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	expiry, ok := t.expiry[token]
	return ok && !time.Now().After(expiry)
}
