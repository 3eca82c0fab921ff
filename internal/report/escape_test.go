package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMDText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "Back-off pulling image \"nope:1\"", want: "Back-off pulling image \"nope:1\""},
		{name: "pipe", in: "a | b", want: `a \| b`},
		{name: "newlines", in: "one\ntwo\r\nthree\rfour", want: "one two three four"},
		{name: "tab", in: "a\tb", want: "a b"},
		{name: "html", in: "<script>alert(1)</script>", want: "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{name: "entity stays literal", in: "&lt;", want: "&amp;lt;"},
		{name: "backticks", in: "run `rm -rf /`", want: "run \\`rm -rf /\\`"},
		{name: "markdown", in: "**b** _i_ ~s~ [l](u) \\", want: `\*\*b\*\* \_i\_ \~s\~ \[l\](u) \\`},
		{name: "escaped pipe stays escaped", in: `\|`, want: `\\\|`},
		{name: "terminal escapes", in: "\x1b[31mred\x1b[0m \x1b]0;title\x07done", want: "red done"},
		{name: "unicode", in: "ünïcödé ✅", want: "ünïcödé ✅"},
		{name: "invalid utf-8", in: "a\xffb", want: "a\uFFFDb"},
		{name: "cut to limit", in: strings.Repeat("x", 250), want: strings.Repeat("x", 199) + "…"},
		{name: "mention", in: "ping @octocat and @org/team", want: "ping @\u2060octocat and @\u2060org/team"},
		{name: "issue link", in: "fixes #123 and GH-1 gh-22 #x", want: "fixes #\u2060123 and GH\u2060-1 gh\u2060-22 #\u2060x"},
		{name: "cross-repository reference", in: "see owner/repo#123 and a#1", want: "see owner/repo#\u2060123 and a#\u20601"},
		{name: "not a mention inside a word", in: "main@sha1:abc user@example.com chart@1.2.3 GH-x", want: "main@sha1:abc user@example.com chart@1.2.3 GH-x"},
		{name: "lone signs", in: "@ # @- #!", want: "@ # @- #!"},
	}
	for _, tt := range tests {
		if got := mdText(tt.in, 200); got != tt.want {
			t.Errorf("%s: mdText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestHTMLText(t *testing.T) {
	t.Parallel()
	in := "</summary></details>\n<b>x</b> & `y` | **z** @octocat owner/repo#12 GH-3"
	want := "&lt;/summary&gt;&lt;/details&gt; &lt;b&gt;x&lt;/b&gt; &amp; `y` | **z** @\u2060octocat owner/repo#\u206012 GH\u2060-3"
	if got := htmlText(in, 300); got != want {
		t.Errorf("htmlText(%q) = %q, want %q", in, got, want)
	}
}

func TestMDCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{in: "", want: ""},
		{in: "web-1", want: "`web-1`"},
		{in: "a`b", want: "``a`b``"},
		{in: "a``b`", want: "``` a``b` ```"},
		{in: "`x", want: "`` `x ``"},
		{in: "<b>\nx", want: "`<b> x`"},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in, 100); got != tt.want {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{in: "", want: "```"},
		{in: "no ticks", want: "```"},
		{in: "``", want: "```"},
		{in: "```", want: "````"},
		{in: "a\n````\n```", want: "`````"},
	}
	for _, tt := range tests {
		if got := fence(tt.in); got != tt.want {
			t.Errorf("fence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLogTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		logs      string
		n, width  int
		wantLines []string
		wantTotal int
	}{
		{name: "empty", logs: "", n: 3, width: 10},
		{name: "only newlines", logs: "\n\n", n: 3, width: 10},
		{name: "short", logs: "a\nb\n", n: 3, width: 10, wantLines: []string{"a", "b"}, wantTotal: 2},
		{name: "last lines", logs: "1\n2\n3\n4\n5\n", n: 3, width: 10, wantLines: []string{"3", "4", "5"}, wantTotal: 5},
		{name: "crlf and escapes", logs: "\x1b[1ma\x1b[0m\r\n\tb\x00\r\n", n: 3, width: 10, wantLines: []string{"a", "\tb "}, wantTotal: 2},
		{name: "blank lines kept", logs: "a\n\nb", n: 3, width: 10, wantLines: []string{"a", "", "b"}, wantTotal: 3},
		{name: "long line cut", logs: "0123456789abc", n: 3, width: 10, wantLines: []string{"012345678…"}, wantTotal: 1},
	}
	for _, tt := range tests {
		lines, total := logTail(tt.logs, tt.n, tt.width)
		if diff := cmp.Diff(tt.wantLines, lines); diff != "" || total != tt.wantTotal {
			t.Errorf("%s: logTail() total = %d, want %d; lines (-want +got):\n%s", tt.name, total, tt.wantTotal, diff)
		}
	}
}
