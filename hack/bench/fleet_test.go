package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFleetTable: a fleet's table gives each build's CPU per cluster, passes per cluster, peak
// RSS, last healthy verdict and exit, and the peer's rows the ratio of each to this build's,
// where both are known: a build that writes no counts gets no passes, a run stopped at the cap
// no figures.
func TestFleetTable(t *testing.T) {
	t.Parallel()
	sample := func(last, exit, cpu time.Duration, rss int64, passes float64) fleetSample {
		return fleetSample{lastHealthy: last, healthyOK: 8, lastVerdict: exit - 100*time.Millisecond, exit: exit, rss: rss << 20, cpu: cpu,
			passes: passes, hasPasses: passes > 0}
	}
	own := &fleetRow{tool: "app-status", command: "verify", clusters: 10, healthy: 8, samples: []fleetSample{
		sample(2*time.Second, 20*time.Second, 30*time.Millisecond, 200, 3),
		sample(3*time.Second, 21*time.Second, 40*time.Millisecond, 220, 4),
		sample(4*time.Second, 22*time.Second, 50*time.Millisecond, 210, 5),
	}}
	tests := []struct {
		name string
		rows []*fleetRow
		want []string
	}{
		{name: "this build alone", rows: []*fleetRow{own}, want: []string{
			"| `verify` | app-status | 8 of 8 | 3000 ms | 21.0 s | 100 ms | 210 MiB | 4.0 ms | 4.0 |",
		}},
		{name: "a peer that counts passes", rows: []*fleetRow{own, {tool: "before", command: "verify", clusters: 10, healthy: 8, samples: []fleetSample{
			sample(6*time.Second, 42*time.Second, 60*time.Millisecond, 315, 12),
		}}}, want: []string{
			"| `verify` | app-status | 8 of 8 | 3000 ms | 21.0 s | 100 ms | 210 MiB | 4.0 ms | 4.0 |",
			"| `verify` | before | 8 of 8 | 6000 ms (2.00×) | 42.0 s (2.00×) | 100 ms | 315 MiB (1.50×) | 6.0 ms (1.50×) | 12.0 (3.00×) |",
		}},
		{name: "a peer that does not count them", rows: []*fleetRow{own, {tool: "before", command: "verify", clusters: 10, healthy: 8, samples: []fleetSample{
			sample(3*time.Second, 21*time.Second, 20*time.Millisecond, 105, 0),
		}}}, want: []string{
			"| `verify` | app-status | 8 of 8 | 3000 ms | 21.0 s | 100 ms | 210 MiB | 4.0 ms | 4.0 |",
			"| `verify` | before | 8 of 8 | 3000 ms (1.00×) | 21.0 s (1.00×) | 100 ms | 105 MiB (0.50×) | 2.0 ms (0.50×) |  |",
		}},
		{name: "a peer stopped at the cap", rows: []*fleetRow{own, {tool: "before", command: "verify", clusters: 10, healthy: 8, samples: []fleetSample{
			{killed: true, exit: 3 * time.Minute},
		}}}, want: []string{
			"| `verify` | app-status | 8 of 8 | 3000 ms | 21.0 s | 100 ms | 210 MiB | 4.0 ms | 4.0 |",
			"| `verify` | before | 0 of 8 | never, for 8 | not within 3m0s: stopped in 1 of 1 runs | | | | |",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := fleetConfig{counts: []int{10}, runs: 3, objects: 200, timeout: 20 * time.Second, runCap: 3 * time.Minute, credentials: credsCert}
			doc := fleetReport(cfg, tt.rows, map[int]string{10: "8 healthy"}, time.Unix(0, 0), time.Minute)
			var got []string
			for line := range strings.Lines(doc) {
				if strings.HasPrefix(line, "| `verify` |") {
					got = append(got, strings.TrimSuffix(line, "\n"))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			header := "| Command | Tool | Healthy clusters Current | Last healthy verdict | Exit | Last verdict to exit | Peak RSS | CPU per cluster | Passes per cluster |"
			if !strings.Contains(doc, header) {
				t.Errorf("the page has no table headed %q:\n%s", header, doc)
			}
		})
	}
}

// TestReadStats: a run's passes per cluster are its passes over the clusters it judged; a
// build that writes no file leaves them unknown, and a file that is not the engine's counts
// is an error.
func TestReadStats(t *testing.T) {
	t.Parallel()
	type passes struct {
		Known bool
		Per   float64
	}
	tests := []struct {
		name    string
		file    string // "" for none
		want    passes
		wantErr bool
	}{
		{name: "counts", file: `{"clusters":10,"judged":8,"passes":20,"maxPasses":4}`, want: passes{Known: true, Per: 2.5}},
		{name: "none judged", file: `{"clusters":10,"judged":0,"passes":0,"maxPasses":0}`},
		{name: "no file", file: ""},
		{name: "not JSON", file: "passes: 3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "stats.json")
			if tt.file != "" {
				if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var s fleetSample
			err := s.readStats(path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readStats() = %v, want an error: %t", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, passes{Known: s.hasPasses, Per: s.passes}); diff != "" {
				t.Errorf("passes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunFiles: a run's files are in its folder, the report only for a build that has
// --json-file, and with --profile its pprof files' prefix in that folder, named by the build,
// the command, the fleet and the run.
func TestRunFiles(t *testing.T) {
	t.Parallel()
	peer := fleetTool{name: "before", slug: "peer", binary: "old/app-status"}
	tests := []struct {
		name    string
		profile string
		tool    fleetTool
		want    fleetRun
	}{
		{name: "this build", tool: fleetTool{name: "app-status", slug: "app-status", jsonFile: true},
			want: fleetRun{reportFile: "D/report.json", statsFile: "D/stats.json"}},
		{name: "a peer without --json-file", tool: peer, want: fleetRun{statsFile: "D/stats.json"}},
		{name: "profiled", profile: "P", tool: fleetTool{name: "app-status", slug: "app-status", jsonFile: true},
			want: fleetRun{reportFile: "D/report.json", statsFile: "D/stats.json", profile: "P/app-status-verify-1000-run2"}},
		{name: "the peer profiled", profile: "P", tool: peer, want: fleetRun{statsFile: "D/stats.json", profile: "P/peer-verify-1000-run2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := fleetConfig{profile: tt.profile}.runFiles("D", tt.tool, "verify-1000-run2")
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(fleetRun{})); diff != "" {
				t.Errorf("runFiles() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSayProfiles: the benchmark fails when no run wrote a profile (a build that does not
// honour APP_STATUS_CPUPROFILE), and lists them when they are there.
func TestSayProfiles(t *testing.T) {
	t.Parallel()
	empty, full := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "app-status-verify-5-run1.cpu.pprof"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{"empty": sayProfiles(empty) != nil, "with a profile": sayProfiles(full) != nil}
	if diff := cmp.Diff(map[string]bool{"empty": true, "with a profile": false}, got); diff != "" {
		t.Errorf("sayProfiles() failed (-want +got):\n%s", diff)
	}
}

// TestFleetLargeSection: the fleet verified in one process (--large) has a section of its own,
// with the same columns and the peer's ratios.
func TestFleetLargeSection(t *testing.T) {
	t.Parallel()
	row := func(tool string, cpu time.Duration, passes float64) *fleetRow {
		return &fleetRow{tool: tool, command: "verify", clusters: 10000, healthy: 8000, samples: []fleetSample{{
			lastHealthy: 20 * time.Second, healthyOK: 8000, lastVerdict: 179 * time.Second, exit: 180 * time.Second, rss: 1 << 30, cpu: cpu, passes: passes, hasPasses: true,
		}}}
	}
	cfg := fleetConfig{counts: []int{10}, runs: 1, objects: 200, timeout: 20 * time.Second, runCap: 3 * time.Minute, credentials: credsCert,
		peer: "peer", peerName: "before", large: 10000, perHost: 2000, largeTimeout: 3 * time.Minute}
	doc := fleetReport(cfg, []*fleetRow{row("app-status", 30*time.Second, 3), row("before", 60*time.Second, 6)},
		map[int]string{10: "8 healthy", 10000: "8000 healthy"}, time.Unix(0, 0), time.Minute)
	_, section, found := strings.Cut(doc, "## 10000 clusters in one process: 8000 healthy\n")
	var got []string
	for line := range strings.Lines(section) {
		if strings.HasPrefix(line, "| `verify` |") {
			got = append(got, strings.TrimSuffix(line, "\n"))
		}
	}
	want := []string{
		"| `verify` | app-status | 8000 of 8000 | 20.0 s | 180.0 s | 1000 ms | 1024 MiB | 3.0 ms | 3.0 |",
		"| `verify` | before | 8000 of 8000 | 20.0 s (1.00×) | 180.0 s (1.00×) | 1000 ms | 1024 MiB (1.00×) | 6.0 ms (2.00×) | 6.0 (2.00×) |",
	}
	if !found {
		t.Fatalf("the page has no section of the fleet in one process:\n%s", doc)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestParseLarge: --large is a fleet of its own, at least 20 clusters and none of --clusters,
// and --peer-clusters may name it.
func TestParseLarge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		want    int
		wantErr string
	}{
		{args: []string{"--clusters", "1,1000"}, want: 0},
		{args: []string{"--clusters", "1,1000", "--large", "10000"}, want: 10000},
		{args: []string{"--clusters", "1,1000", "--large", "10000", "--peer-clusters", "1000,10000"}, want: 10000},
		{args: []string{"--clusters", "1,1000", "--peer-clusters", "10000"}, wantErr: "--peer-clusters: \"10000\" is not one of --clusters nor --large"},
		{args: []string{"--clusters", "1,1000", "--large", "10"}, wantErr: "--large must be at least 20"},
		{args: []string{"--clusters", "1,1000", "--large", "1000"}, wantErr: "not one of --clusters"},
	}
	for _, tt := range tests {
		cfg, err := parseFleetConfig(tt.args)
		got, gotErr := cfg.large, ""
		if err != nil {
			got, gotErr = 0, err.Error()
		}
		if got != tt.want || !strings.Contains(gotErr, tt.wantErr) || (tt.wantErr == "") != (gotErr == "") {
			t.Errorf("parseFleetConfig(%q) = %d, %q, want %d, an error saying %q", tt.args, got, gotErr, tt.want, tt.wantErr)
		}
	}
}
