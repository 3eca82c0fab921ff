package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// fluxApp is an app the real kustomize-controller delivers: Deployments of two replicas, a
// Service each and one ConfigMap, in the namespace named after the app.
type fluxApp struct {
	Name        string // the Kustomization, GitRepository and target namespace
	Deployments int
	// Broken gives the pods of the first Deployment an image that cannot be pulled.
	Broken bool
	// ProgressDeadline is spec.progressDeadlineSeconds of every Deployment.
	ProgressDeadline int
}

func (a fluxApp) deployment(i int) string { return fmt.Sprintf("web-%d", i+1) }

func (a fluxApp) deploymentNames() []string {
	names := make([]string, a.Deployments)
	for i := range names {
		names[i] = a.deployment(i)
	}
	return names
}

// write renders revision run of the app into dir (replacing what was there): each run changes
// the pod templates, so every Deployment rolls out.
func (a fluxApp) write(dir string, run int) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-config\ndata:\n  run: %q\n", a.Name, fmt.Sprint(run))
	for i := range a.Deployments {
		name := a.deployment(i)
		annotations := fmt.Sprintf("        bench.app-status.dev/run: %q\n", fmt.Sprint(run))
		if a.Broken && i == 0 {
			annotations += fmt.Sprintf("        %s: %s\n", testbed.FailureAnnotation, testbed.FailImagePull)
		}
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels: {app: %[1]s}
spec:
  replicas: 2
  progressDeadlineSeconds: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
      annotations:
%[3]s    spec:
      containers:
      - name: web
        image: ghcr.io/example/web:1.0.%[4]d
        ports:
        - containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  selector: {app: %[1]s}
  ports:
  - port: 80
    targetPort: 8080
`, name, a.ProgressDeadline, annotations, run)
	}
	files := map[string]string{
		"app.yaml":           b.String(),
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- app.yaml\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// commitFor is the 40-hex commit the bench reports for a revision of an app.
func commitFor(app string, run int) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%s/%d", app, run)))
	return hex.EncodeToString(sum[:])
}

// gitRevision is the revision Flux writes for a commit on branch main.
func gitRevision(commit string) string { return "main@sha1:" + commit }
