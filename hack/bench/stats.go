package main

import (
	"slices"
	"time"
)

// median returns the middle value (the mean of the two middle values for an even count), or
// zero for no values.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// p95 returns the nearest-rank 95th percentile, or zero for no values.
func p95(ds []time.Duration) time.Duration {
	const p = 95.0
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// medianInt is median for counts (bytes, requests).
func medianInt(xs []int64) int64 {
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x)
	}
	return int64(median(ds))
}

// ratio is a/b, or zero when b is zero.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}
