package kubeconfig

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoadFleet loads a clusters file of n clusters, each a file: line naming a
// kubeconfig of its own, as a fleet's CI does: the cost of reading the fleet before the first
// request, per cluster (go test -run '^$' -bench LoadFleet ./internal/kubeconfig/).
func BenchmarkLoadFleet(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ws := b.TempDir()
			files := map[string][]byte{}
			var list strings.Builder
			for i := range n {
				name := fmt.Sprintf("member-%05d", i)
				cfg := newConfig(name)
				cfg.AuthInfos[name].Token = fmt.Sprintf("%x", sha256.Sum256([]byte(name)))
				files[filepath.Join(ws, "kc", name+".yaml")] = []byte(yamlOf(b, cfg))
				fmt.Fprintf(&list, "%s=file:kc/%s.yaml\n", name, name)
			}
			files[filepath.Join(ws, "clusters.txt")] = []byte(list.String())
			env := Env{
				Getenv: func(string) string { return "" },
				ReadFile: func(p string) ([]byte, error) {
					if data, ok := files[p]; ok {
						return data, nil
					}
					return nil, os.ErrNotExist
				},
				Workspace: ws, Home: filepath.Join(ws, "home"),
			}
			b.ResetTimer()
			for b.Loop() {
				clusters, _, err := Load(Input{CLI: true, ClustersFile: "clusters.txt"}, env)
				if err != nil || len(clusters) != n || clusters[0].Invalid != "" {
					b.Fatalf("Load() = %d clusters, %v; first: %+v", len(clusters), err, clusters[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/cluster")
		})
	}
}
