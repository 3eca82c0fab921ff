package flux

import "testing"

// TestVersionForms: which versions name a release (isReleaseVersion) and which a chart version
// may extend with build metadata (extendable). Unlike the regular expressions they replace,
// a pre-release with an empty identifier (1.2.3-rc..1) or a numeric one with a leading zero
// (1.2.3-rc.01), and a version of four numbers, are neither: SemVer and Helm refuse them.
func TestVersionForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in                string
		release, extended bool
	}{
		{"1.2.3", true, true},
		{"v1.2.3", true, true},
		{"6.5.01", true, true}, // leading zeros, as Helm's lenient parse takes them
		{"1.2.3-rc.1", true, true},
		{"1.2.3-rc.1+abc", true, false},
		{"6.5.0+501967ad514d", true, false},
		{"6.5.0+501967ad514d.2", true, false},
		{"1.2", false, true},
		{"v1", false, true},
		{"1.2-rc.1", false, true},
		{"1.2.3.4", false, false},
		{"1.2.3-rc..1", false, false},
		{"1.2.3-rc.01", false, false},
		{"1.2.3+", false, false},
		{"main", false, false},
		{"mylib@1.2.3", false, false},
		{"refs/tags/v1.2.3", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := isReleaseVersion(tt.in); got != tt.release {
				t.Errorf("isReleaseVersion(%q) = %t, want %t", tt.in, got, tt.release)
			}
			if got := extendable(tt.in); got != tt.extended {
				t.Errorf("extendable(%q) = %t, want %t", tt.in, got, tt.extended)
			}
		})
	}
}
