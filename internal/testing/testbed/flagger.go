package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FlaggerCRDDir returns the folder holding Flagger's CRD manifests (hack/build-bins.sh).
func (b Bins) FlaggerCRDDir() string { return filepath.Join(b.Dir, "flagger-crds") }

// StartFlagger installs Flagger's CRDs in the cluster and starts a real Flagger process against
// its API server, as the Flux controllers run: provider kubernetes (blue/green with plain
// Services, no mesh), no metrics server (analyses with webhooks only), every namespace
// watched, and a control loop of interval (Flagger's default is 10s). It waits until Flagger
// answers its health check.
func (c *Cluster) StartFlagger(ctx context.Context, interval string) error {
	data, err := os.ReadFile(filepath.Join(c.bed.Bins.FlaggerCRDDir(), "crd.yaml"))
	if err != nil {
		return fmt.Errorf("testbed: read Flagger's CRDs (run hack/build-bins.sh flagger): %w", err)
	}
	if err := c.applyCRDManifests(ctx, data); err != nil {
		return err
	}
	return onFreshPorts(func() error {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		port := addr[strings.LastIndex(addr, ":")+1:]
		args := []string{
			"-kubeconfig=" + c.KubeconfigPath,
			"-mesh-provider=kubernetes",
			// Nothing listens there: an analysis without metrics never asks it.
			"-metrics-server=http://127.0.0.1:1",
			"-control-loop-interval=" + interval,
			"-port=" + port,
			"-log-level=info",
			"-zap-encoding=console",
		}
		return c.launch(ctx, "flagger", c.bed.Bins.Path("flagger"), args, "http://"+addr+"/healthz")
	})
}
