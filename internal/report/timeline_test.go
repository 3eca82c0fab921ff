package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

func TestTimeline(t *testing.T) {
	t.Parallel()
	ms := func(v int64) *int64 { return &v }
	slow := currentCluster("slow", revNew, 95_000)
	slow.AppliedMs = ms(90_000)
	slow.Objects[0].SinceMs = ms(94_000)
	quick := currentCluster("quick", revNew, 9_000)
	quick.AppliedMs = ms(1_000)
	hostile := notProgressing("hostile")
	hostile.Objects[1].ID = "Deployment/app/w|eb`<b>x</b>\n| injected |"
	many := make([]result.Cluster, 0, 8)
	for i := range 8 {
		c := notProgressing(fmt.Sprintf("f%d", i))
		for j := range 10 {
			c.Objects = append(c.Objects, result.Object{ID: fmt.Sprintf("Pod/app/p%d", j), Status: result.ObjectInProgress, SinceMs: ms(10)})
		}
		many = append(many, c)
	}
	tests := []struct {
		name            string
		clusters        []result.Cluster
		want, wantNot   []string
		maxRowsPerTable int
	}{
		{name: "no moments, no timeline", clusters: []result.Cluster{currentCluster("a", revNew, 1_000), unreachable("b", 1)}, wantNot: []string{"**Timeline**"}},
		{name: "a slow Current cluster", clusters: []result.Cluster{slow, quick}, want: []string{"| ✅ slow | 📦 Flux applied the revision | `███████████████████░` | 1m30s |"}, wantNot: []string{"✅ quick |"}},
		{name: "hostile object ID stays in its cell", clusters: []result.Cluster{hostile}, wantNot: []string{"<b>x", "\n| injected"}},
		{name: "bounded", clusters: many, maxRowsPerTable: timelineClusters * timelineRows},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := Markdown(result.NewRun([]string{app}, revNew, tt.clusters, time.Minute), MarkdownOptions{})
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("no %q in:\n%s", w, md)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(md, w) {
					t.Errorf("%q in:\n%s", w, md)
				}
			}
			if _, timeline, ok := strings.Cut(md, "**Timeline**"); ok {
				timeline, _, _ = strings.Cut(timeline, "\n\n<")
				rows := 0
				for _, line := range strings.Split(timeline, "\n") {
					if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Cluster") && !strings.HasPrefix(line, "| :--") {
						rows++
						if strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 5 {
							t.Errorf("row %q does not have 4 cells", line)
						}
					}
				}
				if tt.maxRowsPerTable > 0 && rows > tt.maxRowsPerTable {
					t.Errorf("%d timeline rows, over %d", rows, tt.maxRowsPerTable)
				}
			}
		})
	}
}
