package main

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxSubject is the longest subject, in characters: git log --oneline, git blame and GitHub's
// commit list show about this much.
const maxSubject = 72

var (
	// area is the part of a subject before ": ".
	area = regexp.MustCompile(`^[a-z0-9][a-z0-9/._-]*$`)
	// revert is the subject git revert (and GitHub's Revert button) writes: Revert "SUBJECT",
	// longer than the reverted subject and without an area of its own.
	revert = regexp.MustCompile(`^Revert ".+"$`)
)

// check returns what is wrong with a commit message, as git log --format=%B prints it, one
// problem a string; none when it follows the convention.
func check(msg string) []string {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	subject := lines[0]
	if strings.TrimSpace(subject) == "" {
		return []string{"the subject (the first line) is empty"}
	}
	var problems []string
	if !revert.MatchString(subject) {
		problems = checkSubject(subject)
	}
	if len(lines) > 1 && lines[1] != "" {
		problems = append(problems, "the second line is not blank: a blank line separates the subject from the body")
	}
	return problems
}

// checkSubject returns what is wrong with a subject that is not git's revert's.
func checkSubject(subject string) []string {
	var problems []string
	if n := utf8.RuneCountInString(subject); n > maxSubject {
		problems = append(problems, fmt.Sprintf("the subject is %d characters long, more than %d: figures and details belong in the body", n, maxSubject))
	}
	if subject != strings.TrimSpace(subject) {
		problems = append(problems, "the subject starts or ends with white space")
	}
	name, summary, ok := strings.Cut(subject, ": ")
	switch {
	case !ok:
		problems = append(problems, `the subject does not start with an area and ": " (e.g. "verify: ", "docs: ")`)
	case !area.MatchString(name):
		problems = append(problems, fmt.Sprintf("the area %q is not lowercase letters, digits and /._- (starting with a letter or digit)", name))
	}
	if ok {
		switch summary = strings.TrimSpace(summary); {
		case summary == "":
			problems = append(problems, "the summary after the area is empty")
		case strings.HasSuffix(summary, "."):
			problems = append(problems, "the summary ends with a period")
		}
	}
	return problems
}
