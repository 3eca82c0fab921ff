package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// TestMarkdownBadInput: one error follows the summary's "Bad input" heading on its line;
// several (the bad lines of a clusters input) are a list item each, escaped, the first
// maxBadInputItems of them.
func TestMarkdownBadInput(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range maxBadInputItems + 3 {
		many = append(many, fmt.Sprintf("input clusters line %d: bad", i+1))
	}
	tests := []struct {
		name, badInput string
		want           []string
	}{
		{
			name:     "one error",
			badInput: `input timeout: "ten" is not a duration`,
			want:     []string{`**Bad input:** input timeout: "ten" is not a duration`},
		},
		{
			name:     "two bad lines",
			badInput: "input clusters line 2: \"staging\": expected name=source\ninput clusters line 3: \"*x*\": unknown source\n",
			want: []string{
				"**Bad input:**",
				"",
				`- input clusters line 2: "staging": expected name=source`,
				`- input clusters line 3: "\*x\*": unknown source`,
			},
		},
		{
			name:     "more than the list holds",
			badInput: strings.Join(many, "\n"),
			want: append(append([]string{"**Bad input:**", ""}, func() []string {
				var items []string
				for _, l := range many[:maxBadInputItems] {
					items = append(items, "- "+l)
				}
				return items
			}()...), "- and 3 more"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := Markdown(result.NewRun(nil, "", nil, 0), MarkdownOptions{BadInput: tt.badInput})
			want := strings.Join(tt.want, "\n") + "\n\n"
			got := md[:min(len(md), len(want))]
			if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("the summary's opening, then a blank line (-want +got):\n%s\n%s", diff, md)
			}
		})
	}
}
