package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeRelease is a release's files as the setup action downloads them: archives holding a
// stand-in app-status, and checksums.txt.
func fakeRelease(t *testing.T, version string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	var sums strings.Builder
	for _, p := range platforms {
		goos, arch, _ := strings.Cut(p, "/")
		name := fmt.Sprintf("app-status_%s_%s_%s", strings.TrimPrefix(version, "v"), goos, arch)
		binary := []byte("#!/bin/sh\necho app-status " + version + " " + p + "\n")
		var data []byte
		if goos == "windows" {
			name += ".zip"
			var b bytes.Buffer
			zw := zip.NewWriter(&b)
			for _, f := range []string{"app-status.exe", "LICENSE"} {
				w, err := zw.Create(f)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = w.Write(binary)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			data = b.Bytes()
		} else {
			name += ".tar.gz"
			var b bytes.Buffer
			gz := gzip.NewWriter(&b)
			tw := tar.NewWriter(gz)
			for _, f := range []string{"app-status", "LICENSE"} {
				if err := tw.WriteHeader(&tar.Header{Name: f, Mode: 0o755, Size: int64(len(binary))}); err != nil {
					t.Fatal(err)
				}
				_, _ = tw.Write(binary)
			}
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := gz.Close(); err != nil {
				t.Fatal(err)
			}
			data = b.Bytes()
		}
		files[name] = data
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	files["checksums.txt"] = []byte(sums.String())
	files["checksums.txt.sigstore.json"] = []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)
	return files
}

// serveRelease serves files under /VERSION/ on 127.0.0.1, as GitHub serves a release's assets
// under releases/download/VERSION/.
func serveRelease(t *testing.T, version string, files map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/"+version+"/")
		data, found := files[name]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// setupRun is one run of setup/install.sh as the runner runs the setup action's step.
type setupRun struct {
	env    []string
	cosign string // a cosign script on the PATH, when set
	gh     string // a gh script on the PATH, when set
}

// runSetup runs setup/install.sh with env over a PATH of the tools it needs (and cosign when
// given), and returns its output, the folder it added to GITHUB_PATH and its step outputs.
func runSetup(t *testing.T, run setupRun) (out, path, outputs string, err error) {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "curl", "awk", "sha256sum", "tar", "gzip", "unzip", "mktemp", "mkdir", "rm", "chmod", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	for name, script := range map[string]string{"cosign": run.cosign, "gh": run.gh} {
		if script == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil { //nolint:gosec // a test's stand-in
			t.Fatal(err)
		}
	}
	runnerTemp := filepath.Join(tmp, "runner-temp")
	if err := os.Mkdir(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	ghPath, ghOutput := filepath.Join(tmp, "github-path"), filepath.Join(tmp, "github-output")
	script, err := filepath.Abs(filepath.Join("..", "..", "setup", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "bash"), script)
	cmd.Env = append([]string{"PATH=" + bin, "RUNNER_TEMP=" + runnerTemp, "GITHUB_PATH=" + ghPath,
		"GITHUB_OUTPUT=" + ghOutput, "APP_STATUS_REPOSITORY=org/app-status-action", "GITHUB_SERVER_URL=https://github.com"}, run.env...)
	b, err := cmd.CombinedOutput()
	p, _ := os.ReadFile(ghPath)
	o, _ := os.ReadFile(ghOutput)
	return string(b), strings.TrimSpace(string(p)), string(o), err
}

// TestSetupAction: the setup action's script installs the archive of the runner's platform from
// the release its version names, checked against checksums.txt (and its signature with cosign,
// for the release workflow at that tag), and puts the binary's folder on the PATH; everything
// else (a tampered archive, a ref that is not a release, a required signature without cosign,
// a platform without an archive) fails with an error annotation naming what to do.
func TestSetupAction(t *testing.T) {
	t.Parallel()
	const version = "v1.4.2"
	files := fakeRelease(t, version)
	url := serveRelease(t, version, files)
	tampered := map[string][]byte{}
	for k, v := range files {
		tampered[k] = v
	}
	tampered["app-status_1.4.2_linux_amd64.tar.gz"] = append([]byte{}, files["app-status_1.4.2_darwin_amd64.tar.gz"]...)
	tamperedURL := serveRelease(t, version, tampered)
	cosignOK := "#!/bin/sh\necho \"$@\" > \"$COSIGN_LOG\"\n"
	cosignNo := "#!/bin/sh\necho 'Error: none of the expected identities matched' >&2\nexit 1\n"
	ghOK := "#!/bin/sh\necho \"$@\" > \"$GH_LOG\"\n"
	// gh's output may hold a runner command, on its own line or after a carriage return.
	ghNo := "#!/bin/sh\necho \"$@\" > \"$GH_LOG\"\necho 'no attestations found' >&2\nprintf '::set-env name=GH::1\\n  ::set-output name=a::1\\r::stop-commands::x\\n  ok ##[stop-commands]x\\n' >&2\nexit 1\n"
	const token = "GH_TOKEN=ghs_jobtokenfortests"

	tests := []struct {
		name       string
		env        []string
		cosign     string
		gh         string
		wantErr    string // in the output, with a failure
		wantBin    string // the binary installed, its content's platform
		wantSay    string // in the output, with a success
		wantSign   bool   // cosign checked the signature of the release workflow at the tag
		wantAttest bool   // gh checked the archive's attestation by the release workflow at the tag
		wantWarn   string // in a warning annotation, with a success; gh's output follows as plain lines
	}{
		{name: "linux amd64, no cosign", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version},
			wantBin: "app-status:linux/amd64", wantSay: "the signature of checksums.txt was not checked"},
		{name: "macOS arm64, the version from the action's tag", env: []string{"RUNNER_OS=macOS", "RUNNER_ARCH=ARM64", "APP_STATUS_ACTION_REF=" + version},
			wantBin: "app-status:darwin/arm64"},
		{name: "windows amd64, a zip", env: []string{"RUNNER_OS=Windows", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=1.4.2"},
			wantBin: "app-status.exe:windows/amd64"},
		{name: "with cosign, the signature checked", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=ARM64", "APP_STATUS_VERSION=" + version},
			cosign: cosignOK, wantBin: "app-status:linux/arm64", wantSign: true},
		{name: "a signature of another identity", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version},
			cosign: cosignNo, wantErr: "::error title=app-status setup::checksums.txt of v1.4.2 is not signed by org/app-status-action's release workflow at v1.4.2"},
		{name: "no cosign, gh with a token: the attestation checked", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token},
			gh: ghOK, wantBin: "app-status:linux/amd64", wantSay: "is attested by org/app-status-action's release workflow at v1.4.2", wantAttest: true},
		{name: "no cosign, an attestation gh refuses: a warning, the checksums only", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token},
			gh: ghNo, wantBin: "app-status:linux/amd64", wantAttest: true,
			wantWarn: "gh attestation verify did not accept app-status_1.4.2_linux_amd64.tar.gz as attested by org/app-status-action's release workflow at v1.4.2 (exit 1, its output below); it is installed checked against checksums.txt only. To require a signature, install cosign before this step and set verify-signature: true"},
		{name: "no cosign, gh with a token on GitHub Enterprise Server: the checksums only, saying why", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token,
			"GITHUB_SERVER_URL=https://ghes.example.com"},
			gh: ghOK, wantBin: "app-status:linux/amd64",
			wantSay: "::notice title=app-status setup::the signature of checksums.txt was not checked (no cosign on the PATH); the attestation was not checked with gh either, " +
				"as this job runs on https://ghes.example.com, not https://github.com, and gh would send that server's token to github.com; the archive is checked against the release's checksums.txt\n"},
		{name: "no cosign, gh without a token: the checksums only", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version},
			gh: ghNo, wantBin: "app-status:linux/amd64", wantSay: "the signature of checksums.txt was not checked"},
		{name: "cosign and gh: the signature, not the attestation", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token},
			cosign: cosignOK, gh: ghNo, wantBin: "app-status:linux/amd64", wantSign: true},
		{name: "the checksums only, with gh and a token", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token, "APP_STATUS_VERIFY_SIGNATURE=false"},
			gh: ghNo, wantBin: "app-status:linux/amd64", wantSay: "the signature of checksums.txt was not checked"},
		{name: "a signature required without cosign", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, "APP_STATUS_VERIFY_SIGNATURE=true"},
			wantErr: "cosign is not on the PATH"},
		{name: "a signature required, gh with a token but no cosign", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, token, "APP_STATUS_VERIFY_SIGNATURE=true"},
			gh: ghOK, wantErr: "verify-signature is true and cosign is not on the PATH"},
		{name: "a tampered archive", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, "APP_STATUS_DOWNLOAD_URL=" + tamperedURL},
			wantErr: "app-status_1.4.2_linux_amd64.tar.gz does not match checksums.txt of v1.4.2"},
		{name: "a branch, not a release", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_ACTION_REF=main"},
			wantErr: "the action was used at 'main', which is not a release tag"},
		{name: "a version that is no release", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=v9.9.9"},
			wantErr: "is v9.9.9 a release of org/app-status-action with an archive for linux/amd64?"},
		{name: "a version with a runner command", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=\n::add-mask::x"},
			wantErr: "version '???add-mask??x' is not vMAJOR.MINOR.PATCH"},
		{name: "a download redirected elsewhere", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "APP_STATUS_VERSION=" + version, "APP_STATUS_DOWNLOAD_URL=https://example.invalid/releases"},
			wantErr: "APP_STATUS_DOWNLOAD_URL may only name a test server on http://127.0.0.1:PORT"},
		{name: "a platform without an archive", env: []string{"RUNNER_OS=Linux", "RUNNER_ARCH=ARM", "APP_STATUS_VERSION=" + version},
			wantErr: "runner architecture 'ARM' has no release archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cosignLog, ghLog := filepath.Join(t.TempDir(), "cosign.log"), filepath.Join(t.TempDir(), "gh.log")
			env := append([]string{"APP_STATUS_DOWNLOAD_URL=" + url, "COSIGN_LOG=" + cosignLog, "GH_LOG=" + ghLog}, tt.env...)
			out, path, outputs, err := runSetup(t, setupRun{env: env, cosign: tt.cosign, gh: tt.gh})
			if strings.Contains(out, "::add-mask::") {
				t.Errorf("install.sh printed a runner command from its input:\n%s", out)
			}
			// The runner starts a line at a newline or a carriage return, and skips leading blanks.
			for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
				line = strings.TrimLeft(line, " \t")
				if strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "::error title=app-status setup::") &&
					!strings.HasPrefix(line, "::warning title=app-status setup::") && !strings.HasPrefix(line, "::notice title=app-status setup::") {
					t.Errorf("install.sh printed a runner command it did not write: %q", line)
				}
				if strings.Contains(line, "##[") { // the runner reads ##[ anywhere in a line
					t.Errorf("install.sh printed a runner command anywhere in a line: %q", line)
				}
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(out, tt.wantErr) || !strings.Contains(out, "::error title=app-status setup::") {
					t.Errorf("install.sh = %v\n%s\nwant an error annotation saying %q", err, out, tt.wantErr)
				}
				if path != "" {
					t.Errorf("a failed install added %q to the PATH", path)
				}
				return
			}
			if err != nil {
				t.Fatalf("install.sh: %v\n%s", err, out)
			}
			if tt.wantSay != "" && !strings.Contains(out, tt.wantSay) {
				t.Errorf("install.sh said\n%s\nwant %q", out, tt.wantSay)
			}
			if warned := strings.Contains(out, "::warning title=app-status setup::"+tt.wantWarn+"\n"); warned != (tt.wantWarn != "") ||
				(tt.wantWarn == "" && strings.Contains(out, "::warning")) {
				t.Errorf("install.sh said\n%s\nwant the warning %q", out, tt.wantWarn)
			}
			if said := strings.Contains(out, "\ngh: no attestations found\n"); said != (tt.wantWarn != "") {
				t.Errorf("install.sh said\n%s\nwant gh's output as plain lines: %t", out, tt.wantWarn != "")
			}
			binary, platform, _ := strings.Cut(tt.wantBin, ":")
			data, err := os.ReadFile(filepath.Join(path, binary))
			if err != nil {
				t.Fatalf("the folder on the PATH, %q, has no %s: %v", path, binary, err)
			}
			if want := "app-status " + version + " " + platform; !strings.Contains(string(data), want) {
				t.Errorf("%s is %q, want the %s archive's (%q)", binary, data, platform, want)
			}
			if diff := cmp.Diff("version="+version+"\npath="+path+"\n", outputs); diff != "" {
				t.Errorf("step outputs (-want +got):\n%s", diff)
			}
			log, _ := os.ReadFile(cosignLog)
			signed := strings.Contains(string(log), "verify-blob checksums.txt --bundle checksums.txt.sigstore.json --certificate-identity https://github.com/org/app-status-action/.github/workflows/release.yml@refs/tags/v1.4.2 --certificate-oidc-issuer https://token.actions.githubusercontent.com")
			if signed != tt.wantSign {
				t.Errorf("cosign ran %q, want the signature checked: %t", log, tt.wantSign)
			}
			ghRan, _ := os.ReadFile(ghLog)
			attested := strings.Contains(string(ghRan), "attestation verify app-status_1.4.2_linux_amd64.tar.gz --repo org/app-status-action --cert-identity https://github.com/org/app-status-action/.github/workflows/release.yml@refs/tags/v1.4.2 --cert-oidc-issuer https://token.actions.githubusercontent.com")
			if attested != tt.wantAttest || (!tt.wantAttest && len(ghRan) > 0) {
				t.Errorf("gh ran %q, want the attestation checked: %t", ghRan, tt.wantAttest)
			}
		})
	}
}
