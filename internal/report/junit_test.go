package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// TestJUnitValidAndReadable: every fixture's JUnit report is valid against the JUnit schema
// Jenkins and GitLab read (xmllint, installed by hack/install-packages.sh), its testcase names
// are unique (GitLab keeps one of duplicates) and name the cluster (Azure hides classname),
// and each verdict has its element.
func TestJUnitValidAndReadable(t *testing.T) {
	t.Parallel()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("xmllint is not installed: run hack/install-packages.sh (or install Debian's libxml2-utils): %v", err)
	}
	schema, err := filepath.Abs(filepath.Join("testdata", "schema", "junit.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(fixtures(), fleetFixtures()...) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := JUnit(&b, f.run); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "junit.xml")
			if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(xmllint, "--noout", "--schema", schema, file).CombinedOutput(); err != nil {
				t.Fatalf("not valid JUnit: %v\n%s", err, out)
			}
			var doc junitSuites
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			suite := doc.Suites[0]
			seen := map[string]bool{}
			got := map[string]string{}
			for _, c := range suite.Cases {
				if seen[c.Name] || !strings.HasPrefix(c.Name, c.Classname+": ") {
					t.Errorf("testcase %q (classname %q): duplicate, or not named after its cluster", c.Name, c.Classname)
				}
				seen[c.Name] = true
				switch {
				case c.Failure != nil:
					got[c.Classname] = "failure " + c.Failure.Type
				case c.Error != nil:
					got[c.Classname] = "error " + c.Error.Type
				case c.Skipped != nil:
					got[c.Classname] = "skipped"
				default:
					got[c.Classname] = "pass"
				}
			}
			want := map[string]string{}
			for _, c := range f.run.Results {
				switch junitKind(c.Verdict) {
				case "failure", "error":
					typ := string(c.Code)
					if typ == "" {
						typ = string(c.Verdict)
					}
					want[sanitizeName(c.Name)] = junitKind(c.Verdict) + " " + typ
				default:
					want[sanitizeName(c.Name)] = junitKind(c.Verdict)
				}
			}
			wantTests := len(f.run.Results)
			if wantTests == 0 {
				// No cluster verified: one error says so, never an empty report a CI reads as a
				// pass; a shard holding none of the fleet passed, and one skipped case says so.
				want["app-status"] = "error not-verified"
				if f.run.Status == result.RunSuccess {
					want["app-status"] = "skipped"
				}
				wantTests = 1
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("testcases (-want +got):\n%s", diff)
			}
			if suite.Tests != wantTests || doc.Failures != suite.Failures || doc.Errors != suite.Errors {
				t.Errorf("counts: %d tests, want %d, %d failures in the suite and %d in all", suite.Tests, wantTests, suite.Failures, doc.Failures)
			}
		})
	}
}

func sanitizeName(s string) string { return xmlText(sanitize.Line(s), maxNameRunes) }

// TestJUnitFleetBounded: a fleet's report stays under its size limit.
func TestJUnitFleetBounded(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JUnit(&b, fleetRun(2000, 50)); err != nil {
		t.Fatal(err)
	}
	// The evidence stops at junitMaxBytes; past it each case is its name and a short message.
	if b.Len() > junitMaxBytes+2000*700 {
		t.Errorf("JUnit report of 2000 failing clusters is %d bytes", b.Len())
	}
}
