package hack

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	debian12 = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n"
	ubuntu   = "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n"
)

// TestInstallPackages runs hack/install-packages.sh with a PATH of fakes (the tools that are
// there, id, and an apt-get that records its arguments) and an os-release of its own, and checks
// the apt-get commands it runs: only the missing tools, pinned on Debian 12 alone, a runner's
// own runc left alone.
func TestInstallPackages(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("install-packages.sh")
	if err != nil {
		t.Fatal(err)
	}
	allPinned := "install -y -qq podman=4.3.1+ds1-8+deb12u1+b3 runc=1.1.5+ds1-1+deb12u1 shellcheck=0.9.0-1 gcc=4:12.2.0-3 libc6-dev git=1:2.39.5-0+deb12u3 cmark-gfm=0.29.0.gfm.6-6 libxml2-utils=2.9.14+dfsg-1.3~deb12u6 rsync=3.5.0+ds1-0+deb12u1 busybox-static=1:1.35.0-4+deb12u1+b1"
	for _, tc := range []struct {
		name        string
		args        []string
		osRelease   string
		present     []string // commands on PATH
		busybox     bool     // /bin/busybox is there
		uid         string
		pinnedFails bool // apt-get cannot install the pinned builds
		wantApt     []string
		wantCode    int
	}{
		{
			name:      "fresh Debian 12: every tool, pinned",
			osRelease: debian12,
			uid:       "0",
			wantApt:   []string{"update -qq", allPinned},
		},
		{
			name:        "Debian 12 without the pinned builds: the distribution's",
			osRelease:   debian12,
			uid:         "0",
			pinnedFails: true,
			wantApt: []string{"update -qq", allPinned,
				"install -y -qq podman runc shellcheck gcc libc6-dev git cmark-gfm libxml2-utils rsync busybox-static"},
		},
		{
			name:      "Debian 12 with everything: nothing",
			osRelease: debian12,
			present:   []string{"podman", "runc", "shellcheck", "gcc", "git", "cmark-gfm", "xmllint", "rsync"},
			busybox:   true,
			uid:       "1000",
		},
		{
			name:      "Debian 12, git and gcc there: the rest, pinned",
			osRelease: debian12,
			present:   []string{"git", "gcc"},
			uid:       "0",
			wantApt: []string{"update -qq",
				"install -y -qq podman=4.3.1+ds1-8+deb12u1+b3 runc=1.1.5+ds1-1+deb12u1 shellcheck=0.9.0-1 cmark-gfm=0.29.0.gfm.6-6 libxml2-utils=2.9.14+dfsg-1.3~deb12u6 rsync=3.5.0+ds1-0+deb12u1 busybox-static=1:1.35.0-4+deb12u1+b1"},
		},
		{
			name:      "Ubuntu runner: its runc left alone, no pins",
			osRelease: ubuntu,
			present:   []string{"podman", "runc", "shellcheck", "gcc", "git"},
			uid:       "0",
			wantApt:   []string{"update -qq", "install -y -qq cmark-gfm libxml2-utils rsync busybox-static"},
		},
		{
			name:      "the unit job: only the report's tools",
			args:      []string{"cmark-gfm", "xmllint"},
			osRelease: ubuntu,
			uid:       "0",
			wantApt:   []string{"update -qq", "install -y -qq cmark-gfm libxml2-utils"},
		},
		{
			name:      "no os-release: no pins",
			args:      []string{"runc"},
			osRelease: "",
			uid:       "0",
			wantApt:   []string{"update -qq", "install -y -qq runc"},
		},
		{
			name:      "not root: refused, nothing run",
			osRelease: debian12,
			uid:       "1000",
			wantCode:  1,
		},
		{
			name:      "an unknown tool",
			args:      []string{"kubectl"},
			osRelease: debian12,
			uid:       "0",
			wantCode:  2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			root := filepath.Join(dir, "root")
			for _, d := range []string{bin, filepath.Join(root, "bin"), filepath.Join(root, "etc")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fake := func(dir, name, body string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range tc.present {
				fake(bin, name, "exit 0")
			}
			if tc.busybox {
				fake(filepath.Join(root, "bin"), "busybox", "exit 0")
			}
			fake(bin, "id", "echo "+tc.uid)
			log := filepath.Join(dir, "apt-get.log")
			fail := ""
			if tc.pinnedFails {
				fail = `case "$*" in *=*) exit 100 ;; esac`
			}
			fake(bin, "apt-get", `echo "$*" >> "`+log+`"`+"\n"+fail)
			if tc.osRelease != "" {
				if err := os.WriteFile(filepath.Join(root, "etc", "os-release"), []byte(tc.osRelease), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			cmd := exec.CommandContext(t.Context(), bash, append([]string{script}, tc.args...)...)
			cmd.Env = []string{"PATH=" + bin, "INSTALL_PACKAGES_ROOT=" + root}
			out, err := cmd.CombinedOutput()
			code := 0
			if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d; output:\n%s", code, tc.wantCode, out)
			}
			var apt []string
			if data, err := os.ReadFile(log); err == nil {
				apt = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			} else if !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantApt, apt); diff != "" {
				t.Errorf("apt-get calls (-want +got):\n%s\noutput:\n%s", diff, out)
			}
		})
	}
}
