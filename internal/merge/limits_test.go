package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

// realCluster is a cluster as a leg reports it: its Kustomization and an inventory of n
// Current objects (make bench-shards verifies 200), or with workloads off none.
func realCluster(name string, n int) result.Cluster {
	c := result.Cluster{Name: name, Verdict: result.VerdictCurrent, ExpectedRevision: rev, DurationMs: 1834,
		Flux: []result.FluxObject{{ID: "Kustomization/flux-system/app", Kind: "Kustomization", Namespace: "flux-system", Name: "app",
			Verdict: result.VerdictCurrent, Ready: "True", Reason: "ReconciliationSucceeded", Message: "Applied revision: " + rev,
			LastAppliedRevision: rev, LastAttemptedRevision: rev, Generation: 3, ObservedGeneration: 3}},
		Objects: []result.Object{}}
	for i := range n {
		since := int64(12)
		c.Objects = append(c.Objects, result.Object{ID: fmt.Sprintf("ConfigMap/apps/app-config-%03d", i), Version: "v1", Kind: "ConfigMap",
			Namespace: "apps", Name: fmt.Sprintf("app-config-%03d", i), Owner: "Kustomization/flux-system/app", Status: result.ObjectCurrent,
			Message: "Resource is always ready", SinceMs: &since})
	}
	return c
}

// TestLimitsFitReports: the reports app-status writes are far within the bounds a merge
// reads them with: a cluster of 200 objects, a cluster without workloads, a shard of a
// large fleet of short names (whose fleet list is most of it).
func TestLimitsFitReports(t *testing.T) {
	t.Parallel()
	var fleetNames []string
	for i := range 10000 {
		fleetNames = append(fleetNames, fmt.Sprintf("c%d", i))
	}
	for _, tt := range []struct {
		name     string
		clusters []result.Cluster
		shard    bool
	}{
		{"20 clusters of 200 objects", func() (cs []result.Cluster) {
			for i := range 20 {
				cs = append(cs, realCluster(fmt.Sprintf("prod-eu-%02d", i), 200))
			}
			return cs
		}(), false},
		{"2000 clusters without workloads", func() (cs []result.Cluster) {
			for i := range 2000 {
				cs = append(cs, realCluster(fmt.Sprintf("c%d", i), 0))
			}
			return cs
		}(), false},
		{"one shard of 256, of 10,000 clusters named c0 to c9999", func() (cs []result.Cluster) {
			for _, n := range fleetNames {
				if shard.Of(n, 256) == 1 {
					cs = append(cs, realCluster(n, 0))
				}
			}
			return cs
		}(), true},
	} {
		run := result.NewRun(resources, rev, tt.clusters, time.Second)
		if tt.shard {
			run.Shard = &result.Shard{Index: 1, Count: 256, Clusters: fleetNames, ClustersHash: shard.ListHash(fleetNames)}
		}
		data, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scan(data)
		if err != nil {
			t.Fatal(err)
		}
		perObject, perValue := int64(len(data))/max(s.objects, 1), int64(len(data))/max(s.values, 1)
		t.Logf("%s: %d bytes, %d objects (one per %d bytes), %d values (one per %d bytes; %d per cluster)", tt.name, len(data), s.objects, perObject, s.values, perValue, s.values/int64(len(tt.clusters)))
		if perObject < 2*bytesPerObject {
			t.Errorf("%s: one object per %d bytes: too near the bound of one per %d", tt.name, perObject, bytesPerObject)
		}
		if _, err := Parse("r.json", data); err != nil {
			t.Errorf("%s: Parse() = %v", tt.name, err)
		}
	}
}

// weighty is a document of 9 MB of the shape of a report whose results are copies of element.
func weighty(element string) []byte {
	const size = 9 << 20
	var b bytes.Buffer
	b.WriteString(`{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"readyClusters":[],"failedClusters":[],"results":[`)
	for b.Len() < size {
		b.WriteString(element)
		b.WriteByte(',')
	}
	b.WriteString(element + "]}")
	return b.Bytes()
}

// TestParseRefusesWeight: a document built to weigh once decoded (9 MB of {} in a report's
// results took 1.5 GiB of heap, 3 GiB allocated) is refused before it is decoded, saying
// which bound, with next to nothing allocated; so are numbers where clusters belong and a
// document nested deeper than a report.
func TestParseRefusesWeight(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"9 MB of {}", weighty("{}"), "is not a report of app-status: it holds 3145692 JSON objects (and non-string array elements) in 9437189 bytes, more than one per 48 bytes, where a report has one per 200 or more: check what wrote it"},
		{"9 MB of 1", weighty("1"), "JSON objects (and non-string array elements) in"},
		{"9 MB of []", weighty("[]"), "JSON objects (and non-string array elements) in"},
		{"objects padded to the bound", weighty(`{"cluster":"` + strings.Repeat("x", 30) + `"}`), "more than one per 48 bytes"},
		{"nested deeper than a report", []byte(strings.Repeat("[", 40) + strings.Repeat("]", 40)), "its JSON nests deeper than 32 levels"},
		{"brackets in strings are text", []byte(`{"schemaVersion": 1, "resources": ["` + strings.Repeat("[{", 4000) + `\"` + `"]}`), "it has no resources, results, readyClusters or failedClusters"},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("weighty.json", tt.data)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse() error %v, want %q", tt.name, err, tt.want)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes, %d KiB allocated to refuse it", tt.name, len(tt.data), allocated>>10)
		if allocated > 1<<20 {
			t.Errorf("%s: %d KiB allocated to refuse %d bytes, want less than 1 MiB", tt.name, allocated>>10, len(tt.data))
		}
	}
}

// TestLimitsTotal: the reports of one merge share its bounds: a report that takes them past
// the total bytes or JSON values is refused, naming the bound and what to do; a report
// refused takes nothing.
func TestLimitsTotal(t *testing.T) {
	t.Parallel()
	doc := func(n int) []byte {
		var clusters []result.Cluster
		for i := range n {
			clusters = append(clusters, realCluster(fmt.Sprintf("c%03d", i), 20))
		}
		data, err := json.Marshal(result.NewRun(resources, rev, clusters, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	small, large := doc(2), doc(10)
	s, err := scan(small)
	if err != nil {
		t.Fatal(err)
	}
	l := &Limits{bytes: MaxTotalBytes, values: 2*s.values + 1}
	for i, data := range [][]byte{small, large, small, small} {
		_, err := l.Parse(fmt.Sprintf("r%d.json", i), data)
		if wantErr := i == 1 || i == 3; (err != nil) != wantErr {
			t.Fatalf("report %d: Parse() error %v, want an error: %v", i, err, wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("the reports hold more than the %d JSON values (objects and array elements) a merge decodes in all", MaxValues)) {
			t.Errorf("report %d: %v, want the bound named", i, err)
		}
		if err != nil && !strings.Contains(err.Error(), TotalHint) {
			t.Errorf("report %d: %v, want what to do", i, err)
		}
	}
	l = &Limits{bytes: int64(len(small)) + 10, values: MaxValues}
	if _, err := l.Parse("a.json", small); err != nil {
		t.Fatal(err)
	}
	if got := l.ReadLimit(); got != 10 {
		t.Errorf("ReadLimit() = %d, want the 10 bytes left", got)
	}
	if _, err := l.Parse("b.json", small); err == nil || !strings.Contains(err.Error(), "b.json: the reports hold more than the 2048 MiB a merge reads in all: "+TotalHint) {
		t.Errorf("Parse() past the total bytes: %v", err)
	}
}
