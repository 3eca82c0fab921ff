package report

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// Bounds of the JUnit report: every CI shows the message attribute on one line and the body
// in a panel, and some (GitLab) refuse reports of more than a few MiB.
const (
	junitMessageRunes = 500
	junitBodyBytes    = 32 << 10
	junitMaxBytes     = 4 << 20
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junitKind is how a verdict shows in JUnit: a failure of the rollout, an error of the
// verification (it could not tell), a skipped case (suspended), or a pass.
func junitKind(v result.Verdict) string {
	switch v {
	case result.VerdictCurrent:
		return "pass"
	case result.VerdictFailed, result.VerdictNotFound:
		return "failure"
	case result.VerdictSuspended:
		return "skipped"
	}
	return "error"
}

// JUnit writes the run as a JUnit XML report, the test report every CI reads (GitLab's
// merge-request widget, Azure's PublishTestResults, Jenkins, CircleCI, Buildkite): one
// testsuite named after the resources, one testcase per cluster whose name is
// "CLUSTER: Kind/namespace/name" (GitLab keeps one of duplicate names, Azure hides the
// classname, which is the cluster). A failed rollout is a <failure> with the code as its
// type, a cluster that could not be verified an <error>, a suspended one <skipped>; the body
// holds the cluster's evidence as plain text. Text from clusters is cleaned of what XML cannot
// hold and cut; the evidence stops once the report reaches 4 MiB, and each case then keeps a
// short message.
func JUnit(w io.Writer, run result.Run) error {
	name := strings.Join(run.Resources, ", ")
	if name == "" {
		name = "app-status"
	}
	name = sanitize.Line(name)
	suite := junitSuite{Name: "app-status: " + name, Time: seconds(run.DurationMs), Timestamp: run.StartedAt}
	budget := junitMaxBytes - 4096
	for _, c := range run.Results {
		tc := junitCase{Name: xmlText(sanitize.Line(c.Name+": "+name), maxConditionRunes), Classname: xmlText(sanitize.Line(c.Name), maxNameRunes), Time: seconds(c.DurationMs)}
		messageRunes := junitMessageRunes
		if budget <= 0 {
			messageRunes = junitMessageRunes / 4
		}
		message := xmlText(sanitize.Line(joinNonEmpty(": ", verdictCode(c.Verdict, c.Code), explanation(c))), messageRunes)
		budget -= len(message) + len(tc.Name) + 128
		switch junitKind(c.Verdict) {
		case "failure", "error":
			text := "(the evidence is left out to keep the report under its size; the JSON report has it)"
			if budget > 0 {
				var body bytes.Buffer
				writeTextCluster(&body, c)
				text = xmlText(sanitize.CutUTF8(body.String(), min(junitBodyBytes, max(budget/2, 256))), -1)
				budget -= len(text)
			}
			p := &junitProblem{Type: string(c.Verdict), Message: message, Body: text}
			if c.Code != "" {
				p.Type = string(c.Code)
			}
			if junitKind(c.Verdict) == "failure" {
				tc.Failure = p
				suite.Failures++
			} else {
				tc.Error = p
				suite.Errors++
			}
		case "skipped":
			tc.Skipped = &junitSkipped{Message: message}
			suite.Skipped++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, tc)
	}
	if len(run.Results) == 0 {
		// No cluster was verified. A bad input or an empty fleet is one error, so that no CI
		// reads an empty report as a pass; a shard that holds none of the fleet's clusters
		// passed (the merge judges the fleet), and one skipped case says why it has none.
		message := xmlText(sanitize.Line(cmp.Or(run.Condition.Message, "no clusters were verified")), junitMessageRunes)
		tc := junitCase{Name: "app-status: " + xmlText(name, maxConditionRunes), Classname: "app-status", Time: suite.Time}
		if run.Status == result.RunSuccess {
			tc.Skipped = &junitSkipped{Message: message}
			suite.Skipped = 1
		} else {
			tc.Error = &junitProblem{Type: "not-verified", Message: message, Body: message}
			suite.Errors = 1
		}
		suite.Tests, suite.Cases = 1, append(suite.Cases, tc)
	}
	doc := junitSuites{Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped,
		Time: suite.Time, Suites: []junitSuite{suite}}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write the JUnit report: %w", err)
	}
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write the JUnit report: %w", err)
	}
	return nil
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(max(ms, 0))/1000) }

// xmlText keeps the characters XML 1.0 may hold (no control characters but tab and newline,
// no surrogates or non-characters), cut to limit runes (none when negative).
func xmlText(s string, limit int) string {
	if limit >= 0 {
		s = sanitize.Truncate(s, limit)
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return r
		case r < 0x20 || r == 0x7f, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE || r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}
