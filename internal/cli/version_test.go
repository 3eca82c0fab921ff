package cli

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: the version stamped at link time wins; else the main module's version in
// the build info (what `go install …/cmd/app-status@v1.4.2` records); else dev.
func TestVersionOf(t *testing.T) {
	t.Parallel()
	info := func(version string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "github.com/org/app-status-action", Version: version}}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name      string
		stamped   string
		buildInfo func() (*debug.BuildInfo, bool)
		want      string
	}{
		{name: "stamped at link time", stamped: "v1.4.2", buildInfo: info("v1.3.0"), want: "v1.4.2"},
		{name: "go install at a version", stamped: "dev", buildInfo: info("v1.4.2"), want: "v1.4.2"},
		{name: "go install at a commit", stamped: "dev", buildInfo: info("v1.4.3-0.20261206044757-24be71f6c6d2"), want: "v1.4.3-0.20261206044757-24be71f6c6d2"},
		{name: "stamped empty", stamped: "", buildInfo: info("v1.4.2"), want: "v1.4.2"},
		{name: "a build of the working tree", stamped: "dev", buildInfo: info("(devel)"), want: "dev"},
		{name: "no version in the build info", stamped: "dev", buildInfo: info(""), want: "dev"},
		{name: "no build info", stamped: "dev", buildInfo: none, want: "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := versionOf(tt.stamped, tt.buildInfo); got != tt.want {
				t.Errorf("versionOf(%q, …) = %q, want %q", tt.stamped, got, tt.want)
			}
		})
	}
}
