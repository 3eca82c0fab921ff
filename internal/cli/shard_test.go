package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestShardReadsItsOwnKubeconfigs: a shard reads the kubeconfigs of its own clusters alone.
// Of a fleet of two, shard 1/2 verifies its cluster although the other's kubeconfig cannot be
// read (that is shard 2/2's bad input, not its own), lists the whole fleet in its report,
// holds none of the other's secrets, and the action's log counts its own share.
func TestShardReadsItsOwnKubeconfigs(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	healthy := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(healthy.Close)
	const otherToken = "tok-other-shard-0123456789"
	kubeconfig := func(server, token string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: %s}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", server, token)
	}
	// One cluster in each shard of two.
	names := map[int]string{}
	for i := 0; len(names) < 2; i++ {
		n := fmt.Sprintf("cluster-%d", i)
		if s := shard.Of(n, 2); names[s] == "" {
			names[s] = n
		}
	}
	mine, other := names[1], names[2]
	fleet := []string{mine, other}
	if other < mine {
		fleet = []string{other, mine}
	}

	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		list := filepath.Join(dir, "clusters")
		if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(kubeconfig(healthy.URL(), "tok-mine-0123456789")), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(list, []byte(mine+"=file:mine.yaml\n"+other+"=file:missing.yaml\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var reports []string
		for _, tt := range []struct {
			shard    string
			wantCode int
			want     []string // the clusters the report holds
		}{
			{shard: "1/2", wantCode: 0, want: []string{mine}},
			{shard: "2/2", wantCode: 2},
		} {
			f := newFakeEnv(t, nil)
			report := filepath.Join(dir, "report-"+strings.ReplaceAll(tt.shard, "/", "-")+".json")
			reports = append(reports, report)
			code := Run(context.Background(), []string{"verify", "--quiet", "--clusters-file", list, "--shard", tt.shard, "--resource", "ks/app",
				"--revision", "a1b2c3d4", "--timeout", "20s", "--json-file", report}, f.env())
			if code != tt.wantCode {
				t.Errorf("shard %s: Run() = %d, want %d\n%s", tt.shard, code, tt.wantCode, f.stderr.String())
			}
			if tt.wantCode == 2 {
				if !strings.Contains(f.stderr.String(), "missing.yaml") {
					t.Errorf("shard %s: stderr does not name the kubeconfig it cannot read:\n%s", tt.shard, f.stderr.String())
				}
				continue
			}
			got := readShardReport(t, report)
			if diff := cmp.Diff(tt.want, got.clusters); diff != "" {
				t.Errorf("shard %s: clusters verified (-want +got):\n%s", tt.shard, diff)
			}
			if diff := cmp.Diff(fleet, got.fleet); diff != "" {
				t.Errorf("shard %s: fleet in its report (-want +got):\n%s", tt.shard, diff)
			}
		}
		// The merge names the leg that stopped on bad input.
		f := newFakeEnv(t, nil)
		if code := Run(context.Background(), append([]string{"merge"}, reports...), f.env()); code != 2 || !strings.Contains(f.stderr.String(), reports[1]+" is the report of a leg that stopped on bad input") {
			t.Errorf("merge of a shard and a leg that stopped on bad input: exit %d, want 2 naming %s\n%s", code, reports[1], f.stderr.String())
		}
	})

	t.Run("action", func(t *testing.T) {
		t.Parallel()
		f := newFakeEnv(t, map[string]string{
			"INPUT_CLUSTERS": mine + "=env:MINE\n" + other + "=env:OTHER", "INPUT_SHARD": "1/2",
			"MINE": kubeconfig(healthy.URL(), "tok-mine-0123456789"), "OTHER": kubeconfig("https://127.0.0.1:1", otherToken),
			"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "a1b2c3d4", "INPUT_TIMEOUT": "20s",
		})
		if code := Run(context.Background(), []string{"action"}, f.env()); code != 0 {
			t.Errorf("Run() = %d, want 0\n%s", code, f.stdout.String())
		}
		log := f.stdout.String()
		if !strings.Contains(log, "on 1 of the fleet's 2 clusters (shard 1/2)") {
			t.Errorf("the log does not count the shard's own share:\n%s", log)
		}
		if strings.Contains(log, otherToken) {
			t.Errorf("the log holds the other shard's token, so its kubeconfig was read:\n%s", log)
		}
	})
}

type shardReport struct {
	clusters, fleet []string
}

// readShardReport reads the clusters a report holds and the fleet its shard names.
func readShardReport(t *testing.T, path string) shardReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Cluster string `json:"cluster"`
		} `json:"results"`
		Shard struct {
			Clusters []string `json:"clusters"`
		} `json:"shard"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var r shardReport
	for _, c := range doc.Results {
		r.clusters = append(r.clusters, c.Cluster)
	}
	r.fleet = doc.Shard.Clusters
	return r
}
