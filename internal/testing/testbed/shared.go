package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Shared starts a bed the first time a test asks for it and keeps it for the whole test
// package, so a package pays for its clusters once. Declare one in a test file and Close it in
// TestMain after m.Run:
//
//	var bed = testbed.NewShared(testbed.Options{Clusters: 3, Flux: true})
//	func TestMain(m *testing.M) { code := m.Run(); bed.Close(); os.Exit(code) }
type Shared struct {
	opts Options
	once sync.Once
	bed  *Bed
	err  error
}

// NewShared returns a Shared that starts a bed with opts on first use.
func NewShared(opts Options) *Shared { return &Shared{opts: opts} }

// Get returns the package's bed, starting it on first use. In -short mode the test is skipped;
// otherwise a bed that cannot start fails the test, never skips it.
func (s *Shared) Get(t testing.TB) *Bed {
	t.Helper()
	if testing.Short() {
		t.Skip("needs real clusters: run without -short")
	}
	s.once.Do(func() {
		opts := s.opts
		if opts.Log == nil {
			opts.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		s.bed, s.err = Start(ctx, opts)
	})
	if s.err != nil {
		t.Fatalf("start test bed: %v", s.err)
	}
	return s.bed
}

// Close tears the bed down if it was started.
func (s *Shared) Close() {
	if s.bed != nil {
		s.bed.Close()
	}
}

var namespaceSeq atomic.Int64

// Namespace creates a fresh namespace in the cluster for one test and deletes it when the test
// ends. The name starts with the test's name, so leftovers are easy to trace.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.ToLower(t.Name())
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, base)
	if len(base) > 40 {
		base = base[:40]
	}
	name := fmt.Sprintf("%s-%d", strings.Trim(base, "-"), namespaceSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.EnsureNamespace(ctx, name); err != nil {
		t.Fatal(err)
	}
	c.deleteNamespaceOnCleanup(t, name)
	return name
}

// deleteNamespaceOnCleanup deletes the namespace when the test ends.
func (c *Cluster) deleteNamespaceOnCleanup(t testing.TB, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// Namespace creates the same fresh namespace on every cluster of the bed, for a test that
// deploys one app everywhere, and deletes it when the test ends.
func (b *Bed) Namespace(t testing.TB) string {
	t.Helper()
	name := b.Clusters[0].Namespace(t)
	for _, c := range b.Clusters[1:] {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := c.EnsureNamespace(ctx, name)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		c.deleteNamespaceOnCleanup(t, name)
	}
	return name
}

// Testdata returns the absolute path of a file or folder under the repository's testdata/,
// e.g. Testdata(t, "apps", "web").
func Testdata(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{root, "testdata"}, elem...)...)
}
