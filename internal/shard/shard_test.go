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

// TestEveryClusterInOneShardStable: each cluster is in exactly one shard, the shards are
// balanced, and adding clusters moves none of the others.
func TestEveryClusterInOneShardStable(t *testing.T) {
	t.Parallel()
	const n = 5
	counts := make([]int, n+1)
	before := map[string]int{}
	for i := range 10000 {
		name := fmt.Sprintf("prod-%05d", i)
		in := 0
		for s := 1; s <= n; s++ {
			if (Shard{s, n}).Has(name) {
				in++
				counts[s]++
				before[name] = s
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
	for name, s := range before {
		if Of(name, n) != s {
			t.Errorf("%s moved from shard %d", name, s)
		}
	}
	if ListHash([]string{"b", "a"}) != ListHash([]string{"a", "b"}) || ListHash([]string{"a"}) == ListHash([]string{"a", "b"}) {
		t.Error("ListHash depends on the order, or not on the names")
	}
}
