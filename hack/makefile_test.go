package hack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTest matches a recipe's go test command: `go test ...` or `go -C DIR test ...`.
var goTest = regexp.MustCompile(`\bgo (-C \S+ )?test\b`)

// TestMakefileTestTimeouts: every go test command of the Makefile states its -timeout, so that
// none runs into Go's default of 10 minutes on a machine whose build cache is cold (the
// timeouts are sized from a cold run: CONTRIBUTING.md), and each timeout it names is set.
func TestMakefileTestTimeouts(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	commands := 0
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || !goTest.MatchString(line) {
			continue
		}
		commands++
		m := regexp.MustCompile(`-timeout (\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Errorf("Makefile:%d runs go test without -timeout: %s", i+1, strings.TrimSpace(line))
			continue
		}
		if v, ok := strings.CutPrefix(m[1], "$("); ok {
			name := strings.TrimSuffix(v, ")")
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` \?= \d+m$`).MatchString(text) {
				t.Errorf("Makefile:%d's -timeout %s is not set to minutes (want a line %s ?= Nm)", i+1, m[1], name)
			}
		}
	}
	if commands < 7 {
		t.Errorf("found %d go test commands in the Makefile, want the 7 of test, test-short and fuzz: the test reads it wrong", commands)
	}
}
