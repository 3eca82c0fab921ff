// Package runnertest reads a CI log as the runners do, for tests: it finds every line that
// GitHub's runner (actions/runner, ActionCommand.TryParseV2 and TryParse) or the Azure
// Pipelines agent would take for a command. It is written from their documented and published
// parsing rules, including the culture-sensitive comparison that skips zero-width and other
// ignorable characters, and it is stricter than they are: any command name counts, registered
// or not.
package runnertest

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// Command is a line a runner would process as a command.
type Command struct {
	Form string // "::" (workflow command), "##[" (legacy form) or "##vso[" (Azure Pipelines)
	Name string
	Line string
}

// Commands returns every command in log, line by line, as a runner reads it: a line ends at
// "\n", "\r\n" or a lone "\r" (.NET's StreamReader.ReadLine, which the runner reads with).
func Commands(log string) []Command {
	var out []Command
	log = strings.ReplaceAll(strings.ReplaceAll(log, "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(log, "\n") {
		if c, ok := parse(line); ok {
			out = append(out, c)
		}
	}
	return out
}

func parse(line string) (Command, bool) {
	// What a culture-sensitive comparison sees: the ignorable characters are not there.
	seen := strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me,
			unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return -1
		}
		return r
	}, line)
	// TryParseV2: "::" after the line's leading white space, then a name up to a space or
	// the next "::".
	if v2 := strings.TrimLeftFunc(seen, unicode.IsSpace); strings.HasPrefix(v2, "::") {
		if end := strings.Index(v2[2:], "::"); end >= 0 {
			name, _, _ := strings.Cut(v2[2:2+end], " ")
			if name != "" {
				return Command{Form: "::", Name: name, Line: line}, true
			}
		}
	}
	// TryParse: "##[" anywhere, a name up to a space or "]".
	if i := strings.Index(seen, "##["); i >= 0 {
		if end := strings.IndexByte(seen[i:], ']'); end >= 0 {
			name, _, _ := strings.Cut(seen[i+3:i+end], " ")
			if name != "" {
				return Command{Form: "##[", Name: name, Line: line}, true
			}
		}
	}
	// Azure Pipelines: "##vso[" anywhere, in any case.
	if i := strings.Index(strings.ToLower(seen), "##vso["); i >= 0 {
		return Command{Form: "##vso[", Name: strings.SplitN(seen[i+6:], "]", 2)[0], Line: line}, true
	}
	return Command{}, false
}

// Hostile are texts a cluster, an error body or a repository file may hold, each a
// runner command in one of the forms the runners read, disguised as they may be.
var Hostile = []string{
	"::add-mask::failure",
	"  \t::stop-commands::tok",
	"\u00a0\u2003::warning file=.github/workflows/deploy.yml,line=1::forged",
	"\u200d::error::joined",
	":\u200b:set-output name=status::success",
	"\ufeff::debug::bom",
	"denied ##[stop-commands]tok",
	"x ##[add-mask]failure",
	"##[warning file=.github/workflows/deploy.yml;line=1]forged",
	"a #\u200d#[set-output name=status;]success",
	"#\u00ad#\u200b[group]soft",
	"###[endgroup]",
	"##[##[debug]twice",
	"build ##vso[task.setvariable variable=x]y",
	"##VSO[task.complete result=Succeeded;]done",
	"#\u200c#v\u200bso[task.logissue]z",
	"::error::one ##[warning]two",
	"\xff::add-mask::invalid",
	"ok\r::add-mask::carriage",
	"progress\r  ::error::after a carriage return",
}

// Masked reports whether the runner's masks (the values registered with ::add-mask::) hide
// secret: it is one of them, or it is padded base64 whose unpadded text is one, which the runner
// masks wherever it stands, the padded text included, all but its '='.
func Masked(masks map[string]bool, secret string) bool {
	if masks[secret] {
		return true
	}
	unpadded := strings.TrimRight(secret, "=")
	if unpadded == secret || !masks[unpadded] {
		return false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		if _, err := enc.DecodeString(secret); err == nil {
			return true
		}
	}
	return false
}

// Masks returns the values log registers with the runner's ::add-mask:: command, as the runner
// reads them: the command's data, unescaped (%25, %0D, %0A), none that is only white space.
func Masks(log string) map[string]bool {
	masks := map[string]bool{}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%")
	for _, c := range Commands(log) {
		if c.Form != "::" || c.Name != "add-mask" {
			continue
		}
		_, data, ok := strings.Cut(strings.TrimLeftFunc(c.Line, unicode.IsSpace)[2:], "::")
		if v := unescape.Replace(data); ok && strings.TrimSpace(v) != "" {
			masks[v] = true
		}
	}
	return masks
}

// Hidden returns a mask the runner would hide in text, and so a reason to drop text when it
// is a job output ("Skip output ... since it may contain secret"): a value of masks, as it is
// or in one of the runner's encodings of it (JSON string escaping, URI data escaping, base64),
// anywhere in text. Empty means text reaches the job's outputs intact.
func Hidden(masks map[string]bool, text string) string {
	for _, m := range slices.Sorted(maps.Keys(masks)) {
		for _, form := range maskForms(m) {
			if form != "" && strings.Contains(text, form) {
				return m
			}
		}
	}
	return ""
}

// maskForms are the texts the runner hides for a mask: itself, and its encodings (the runner's
// JsonStringEscape, UriDataEscape and Base64StringEscape value encoders).
func maskForms(m string) []string {
	quoted, _ := json.Marshal(m)
	return []string{
		m,
		strings.Trim(string(quoted), `"`),
		url.PathEscape(m),
		strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(m)), "="),
	}
}
