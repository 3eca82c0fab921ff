package shard

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"", Shard{}, false},
		{"1/1", Shard{1, 1}, false},
		{" 2 / 5 ", Shard{2, 5}, false},
		{"0/3", Shard{}, true},
		{"4/3", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1/2000", Shard{}, true},
		{"a/3", Shard{}, true},
		{"3", Shard{}, true},
		{"-1/3", Shard{}, true},
	} {
		got, err := Parse(tt.in)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("Parse(%q) = %v, %v; want %v, error %t", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && !strings.Contains(err.Error(), "I/N") {
			t.Errorf("Parse(%q): %v, want the form named", tt.in, err)
		}
	}
}

// TestEveryClusterInOneShardStable: each cluster is in exactly one shard and the shards are
// balanced. A cluster's shard is a function of its name and the count alone (Of), so adding
// clusters moves none of the others; TestShardOfIsPinned holds it across versions.
func TestEveryClusterInOneShardStable(t *testing.T) {
	t.Parallel()
	const n = 5
	counts := make([]int, n+1)
	for i := range 10000 {
		name := fmt.Sprintf("prod-%05d", i)
		in := 0
		for s := 1; s <= n; s++ {
			if (Shard{s, n}).Has(name) {
				in++
				counts[s]++
			}
		}
		if in != 1 {
			t.Fatalf("%s is in %d shards", name, in)
		}
	}
	for s := 1; s <= n; s++ {
		if counts[s] < 1800 || counts[s] > 2200 {
			t.Errorf("shard %d/%d has %d of 10000 clusters, want about 2000", s, n, counts[s])
		}
	}
	if ListHash([]string{"b", "a"}) != ListHash([]string{"a", "b"}) || ListHash([]string{"a"}) == ListHash([]string{"a", "b"}) {
		t.Error("ListHash depends on the order, or not on the names")
	}
}

// TestShardOfIsPinned: the assignment is part of the report format. A leg of another version
// of app-status that hashed differently would verify other clusters than the merge expects of
// its shard (they would be ClusterMissing, never a silent pass, but a needless failure).
func TestShardOfIsPinned(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		of5, of3 int
	}{
		{"prod-eu", 4, 1},
		{"prod-us", 4, 1},
		{"staging", 3, 3},
		{"prod-00042", 2, 1},
		{"a", 2, 2},
	} {
		if got5, got3 := Of(tt.name, 5), Of(tt.name, 3); got5 != tt.of5 || got3 != tt.of3 {
			t.Errorf("Of(%q): shard %d of 5 and %d of 3, want %d and %d (a changed hash moves every fleet's clusters between versions)", tt.name, got5, got3, tt.of5, tt.of3)
		}
	}
}
