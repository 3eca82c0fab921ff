package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestToolTableWithAPeer: an earlier build run beside app-status (--peer) gets its row after
// app-status's, with its ratio to it, before the other tools; without one the table is the
// three tools'.
func TestToolTableWithAPeer(t *testing.T) {
	t.Parallel()
	times := func(d ...time.Duration) []time.Duration { return d }
	tests := []struct {
		name  string
		tools []toolTimes
		want  []string
	}{
		{
			name: "no peer",
			tools: []toolTimes{
				{Name: toolAppStatus, PerCluster: times(2 * time.Millisecond), Run: times(10 * time.Millisecond)},
				{Name: toolKubectl, PerCluster: times(time.Second), Run: times(2 * time.Second)},
				{Name: toolPoller, PerCluster: times(time.Second), Run: times(time.Second)},
			},
			want: []string{
				"| app-status | 2.0 ms | 2.0 ms | 10 ms | 10 ms | 1× | 1 of 1 Current |",
				"| kstatus poller | 1000 ms | 1000 ms | 1000 ms | 1000 ms | 100× | 1 of 1 Current |",
				"| kubectl loop | 1000 ms | 1000 ms | 2000 ms | 2000 ms | 200× | 1 of 1 Current |",
			},
		},
		{
			name: "a peer, measured in the same runs",
			tools: []toolTimes{
				{Name: toolAppStatus, PerCluster: times(2 * time.Millisecond), Run: times(10 * time.Millisecond)},
				{Name: "main (abc1234)", PerCluster: times(65 * time.Millisecond), Run: times(120 * time.Millisecond)},
				{Name: toolKubectl, PerCluster: times(time.Second), Run: times(2 * time.Second)},
				{Name: toolPoller, PerCluster: times(time.Second), Run: times(time.Second)},
			},
			want: []string{
				"| app-status | 2.0 ms | 2.0 ms | 10 ms | 10 ms | 1× | 1 of 1 Current |",
				"| main (abc1234) | 65 ms | 65 ms | 120 ms | 120 ms | 12× | 1 of 1 Current |",
				"| kstatus poller | 1000 ms | 1000 ms | 1000 ms | 1000 ms | 100× | 1 of 1 Current |",
				"| kubectl loop | 1000 ms | 1000 ms | 2000 ms | 2000 ms | 200× | 1 of 1 Current |",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			writeToolTable(&b, &latencyResult{Tools: tt.tools}, "Current")
			var rows []string
			for _, line := range strings.Split(b.String(), "\n") {
				if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Tool ") {
					rows = append(rows, line)
				}
			}
			if diff := cmp.Diff(tt.want, rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPeerNameOfItsOwn: --peer-name may not be the name of a tool the bench runs anyway, whose
// rows the peer's would merge with.
func TestPeerNameOfItsOwn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, peerName, wantErr string
	}{
		{name: "a name of its own", peerName: "main (abc1234)"},
		{name: "app-status's", peerName: toolAppStatus, wantErr: `--peer-name "app-status" is the name of a tool the bench runs anyway`},
		{name: "the poller's", peerName: toolPoller, wantErr: `--peer-name "kstatus poller" is the name of a tool the bench runs anyway`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := parseConfig([]string{"--peer", "old/app-status", "--peer-name", tt.peerName})
			switch {
			case tt.wantErr == "" && (err != nil || cfg.peer != "old/app-status" || cfg.peerName != tt.peerName):
				t.Errorf("parseConfig: peer %q named %q, error %v; want old/app-status named %q", cfg.peer, cfg.peerName, err, tt.peerName)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("parseConfig: error %v, want one with %q", err, tt.wantErr)
			}
		})
	}
}
