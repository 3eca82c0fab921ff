package verify

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// fetcher runs the reads an assessment needs beyond the watches (discovery of a kind, a Helm
// storage Secret), so that an assessment decides from what is at hand and never waits on the
// network: each key is read once, by a goroutine of its own under the cluster's context, and
// the cluster re-assesses when the read ends. A snapshot, which assesses once, reads inline.
type fetcher struct {
	ctx    context.Context
	notify func()
	inline bool

	wg      sync.WaitGroup
	mu      sync.Mutex
	results map[string]fetched
	running map[string]bool
}

type fetched struct {
	value any
	err   error
}

func newFetcher(ctx context.Context, notify func(), inline bool) *fetcher {
	return &fetcher{ctx: ctx, notify: notify, inline: inline, results: map[string]fetched{}, running: map[string]bool{}}
}

// get returns what read returned for key, starting it on first use; done is false while it
// runs. A nil fetcher (unit tests) reads inline.
func (f *fetcher) get(key string, read func(ctx context.Context) (any, error)) (value any, done bool, err error) {
	if f == nil {
		v, err := read(context.Background())
		return v, true, err
	}
	f.mu.Lock()
	if r, ok := f.results[key]; ok {
		f.mu.Unlock()
		return r.value, true, r.err
	}
	if f.running[key] {
		f.mu.Unlock()
		return nil, false, nil
	}
	if f.inline {
		f.mu.Unlock()
		v, err := read(f.ctx)
		f.store(key, v, err)
		return v, true, err
	}
	f.running[key] = true
	f.wg.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.wg.Done()
		v, err := read(f.ctx)
		if f.ctx.Err() != nil {
			// The cluster's verification ended: what the read says now is only that.
			f.mu.Lock()
			delete(f.running, key)
			f.mu.Unlock()
			return
		}
		f.store(key, v, err)
		f.notify()
	}()
	return nil, false, nil
}

func (f *fetcher) store(key string, v any, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.running, key)
	f.results[key] = fetched{value: v, err: err}
}

// forget drops the result of key, so that the next get reads again (a read that failed).
func (f *fetcher) forget(key string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.results, key)
}

// wait waits until every read has returned; the cluster's context is cancelled first, which
// ends them (boundTransport).
func (f *fetcher) wait() {
	if f != nil {
		f.wg.Wait()
	}
}

// boundTransport ties every request to a context besides its own: a request of a client that
// takes no context (discovery) ends when the cluster's verification does.
type boundTransport struct {
	rt  http.RoundTripper
	ctx context.Context
}

func (b boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(b.ctx, cancel)
	resp, err := b.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	// client-go sleeps out a Retry-After with no context it can be woken from (discovery
	// takes none): the answer is an error here, asked again later (mappingRetry).
	resp.Header.Del("Retry-After")
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, done: func() { stop(); cancel() }}
	return resp, nil
}

// cancelOnClose releases a request's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.done)
	return err
}
