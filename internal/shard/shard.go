// Package shard splits a fleet's clusters among the legs of a CI matrix: a cluster belongs to
// one shard by a stable hash of its name, so that adding a cluster never moves the others.
package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// MaxCount bounds the number of shards (a GitHub matrix has at most 256 legs).
const MaxCount = 1024

// Shard is one leg I of N (1 ≤ I ≤ N).
type Shard struct {
	Index, Count int
}

// Parse reads "I/N". The empty string is no sharding (the zero Shard).
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	count, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || count < 1 || count > MaxCount || index < 1 || index > count {
		return Shard{}, fmt.Errorf("%q is not a shard: give I/N with 1 ≤ I ≤ N ≤ %d, e.g. 2/5 (in a matrix: ${{ matrix.shard }}/5)", s, MaxCount)
	}
	return Shard{Index: index, Count: count}, nil
}

// IsZero reports whether this is no sharding.
func (s Shard) IsZero() bool { return s.Count == 0 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Of is the shard index (1..count) the cluster belongs to: FNV-1a of its name, modulo count
// (count is between 1 and MaxCount).
func Of(cluster string, count int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(cluster))
	n := uint64(min(max(count, 1), MaxCount)) //nolint:gosec // bounded to 1..MaxCount just above
	return int(h.Sum64()%n) + 1               //nolint:gosec // less than MaxCount
}

// Has reports whether the cluster belongs to this shard (every cluster, with no sharding).
func (s Shard) Has(cluster string) bool { return s.IsZero() || Of(cluster, s.Count) == s.Index }

// ListHash identifies a fleet: the SHA-256 of its sorted cluster names, one per line.
func ListHash(clusters []string) string {
	sorted := slices.Sorted(slices.Values(clusters))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}
