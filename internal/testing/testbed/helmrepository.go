package testbed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

// HelmRepositoryGVR is the HTTP Helm repository source the bed plays source-controller for.
var HelmRepositoryGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}

// PublishHelmIndex publishes an index.yaml listing chart at versions as the artifact of the
// HTTP HelmRepository ns/name (spec.interval interval), as source-controller v1.9.3 stores an
// index it fetched that changed (internal/controller/helmrepository_controller.go,
// reconcileArtifact): revision sha256:<digest of the index>, lastUpdateTime now, and
// ArtifactInStorage's "stored artifact: revision '%s'" summarized into Ready.
func (c *Cluster) PublishHelmIndex(ctx context.Context, ns, name, interval, chart string, versions ...string) (Artifact, error) {
	var index strings.Builder
	fmt.Fprintf(&index, "apiVersion: v1\nentries:\n  %s:\n", chart)
	for _, v := range versions {
		fmt.Fprintf(&index, "  - {name: %s, version: %s, urls: [%s-%s.tgz]}\n", chart, v, chart, v)
	}
	data := []byte(index.String())
	sum := sha256.Sum256(data)
	revision := "sha256:" + hex.EncodeToString(sum[:])
	path := fmt.Sprintf("%s/helmrepository/%s/%s/index-%s.yaml", c.Name, ns, name, hex.EncodeToString(sum[:8]))
	art := Artifact{Revision: revision, Digest: revision, URL: c.bed.Artifacts.store(path, data), Size: int64(len(data))}
	spec := map[string]any{"url": "https://charts.test/" + name, "interval": interval}
	err := c.writeSourceStatus(ctx, HelmRepositoryGVR, "HelmRepository", ns, name, spec, func(obj *unstructured.Unstructured, now string) map[string]any {
		gen := obj.GetGeneration()
		return map[string]any{
			"observedGeneration": gen,
			"url":                art.URL,
			"artifact": map[string]any{"path": path, "url": art.URL, "revision": revision, "digest": revision,
				"size": art.Size, "lastUpdateTime": now},
			"conditions": []any{
				statusCondition("Ready", "True", "Succeeded", "stored artifact: revision '"+revision+"'", now, gen),
				statusCondition("ArtifactInStorage", "True", "Succeeded", "stored artifact: revision '"+revision+"'", now, gen),
			},
		}
	})
	return art, err
}

// PublishRepositoryChart publishes the chart in chartDir at version as the artifact of the
// HelmChart ns/name of the HelmRepository repo (spec.version version), built from the
// repository's index index (an Artifact of PublishHelmIndex), as source-controller v1.9.3
// writes a chart it pulled (internal/helm/chart/builder.go Build.Summary "pulled '%s' chart
// with version '%s'"; status.observedSourceArtifactRevision the index's revision).
func (c *Cluster) PublishRepositoryChart(ctx context.Context, ns, name, repo, chartDir, version string, index Artifact) (Artifact, error) {
	tmp, err := os.MkdirTemp("", "testbed-chart-")
	if err != nil {
		return Artifact{}, fmt.Errorf("testbed: copy chart: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, filepath.Base(chartDir))
	if err := copyChart(chartDir, dir, version); err != nil {
		return Artifact{}, err
	}
	tarball, err := TarGz(dir, filepath.Base(chartDir))
	if err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(tarball)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	path := fmt.Sprintf("%s/helmchart/%s/%s/%s-%s.tgz", c.Name, ns, name, filepath.Base(chartDir), version)
	art := Artifact{Revision: version, Digest: digest, URL: c.bed.Artifacts.store(path, tarball), Size: int64(len(tarball))}
	message := fmt.Sprintf("pulled '%s' chart with version '%s'", filepath.Base(chartDir), version)
	err = c.writeSourceStatus(ctx, HelmChartGVR, "HelmChart", ns, name, repositoryChartSpec(repo, filepath.Base(chartDir), version), func(obj *unstructured.Unstructured, now string) map[string]any {
		gen := obj.GetGeneration()
		return map[string]any{
			"observedGeneration":             gen,
			"observedChartName":              filepath.Base(chartDir),
			"observedSourceArtifactRevision": index.Revision,
			"artifact": map[string]any{"path": path, "url": art.URL, "revision": version, "digest": digest,
				"size": art.Size, "lastUpdateTime": now},
			"conditions": []any{
				statusCondition("Ready", "True", "ChartPullSucceeded", message, now, gen),
				statusCondition("ArtifactInStorage", "True", "ChartPullSucceeded", message, now, gen),
			},
		}
	})
	return art, err
}

// StallRepositoryChart sets the HelmChart ns/name of the HelmRepository repo to version (a new
// generation) and writes what source-controller v1.9.3 writes when the repository's index
// (index, the revision it built from) lists no such version: a persistent build error
// (internal/helm/chart/errors.go ErrChartReference, "invalid chart reference", wrapping
// builder_remote.go's "failed to get chart version for remote reference: %w" of
// internal/helm/repository/chart_repository.go's "no '%s' chart with version matching '%s'
// found"), so Stalled=True, Ready=False and BuildFailed=True with reason
// InvalidChartReference, at its generation; the chart it served stays. Stalled's
// lastTransitionTime is kept when it was already stalled so (its message unchanged), as
// conditions.Set keeps it.
func (c *Cluster) StallRepositoryChart(ctx context.Context, ns, name, repo, chart, version string, index Artifact) error {
	message := fmt.Sprintf("invalid chart reference: failed to get chart version for remote reference: no '%s' chart with version matching '%s' found", chart, version)
	return c.writeSourceStatus(ctx, HelmChartGVR, "HelmChart", ns, name, repositoryChartSpec(repo, chart, version), func(obj *unstructured.Unstructured, now string) map[string]any {
		gen := obj.GetGeneration()
		since := now
		status, _ := obj.Object["status"].(map[string]any)
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cnd := range conds {
			if m, ok := cnd.(map[string]any); ok && m["type"] == "Stalled" && m["message"] == message {
				since, _ = m["lastTransitionTime"].(string)
			}
		}
		out := map[string]any{}
		for k, v := range status {
			out[k] = v
		}
		out["observedGeneration"] = gen
		out["observedSourceArtifactRevision"] = index.Revision
		out["conditions"] = []any{
			statusCondition("Stalled", "True", "InvalidChartReference", message, since, gen),
			statusCondition("Ready", "False", "InvalidChartReference", message, since, gen),
			statusCondition("BuildFailed", "True", "InvalidChartReference", message, since, gen),
		}
		return out
	})
}

func repositoryChartSpec(repo, chart, version string) map[string]any {
	return map[string]any{"chart": chart, "version": version, "interval": "60m",
		"sourceRef": map[string]any{"kind": "HelmRepository", "name": repo}}
}

// writeSourceStatus creates the source ns/name with spec when it does not exist, sets its spec
// to spec (a new generation when it changed), and replaces its status with what status makes
// of it (now is the moment, RFC 3339).
func (c *Cluster) writeSourceStatus(ctx context.Context, gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any, status func(obj *unstructured.Unstructured, now string) map[string]any) error {
	ri := c.Dynamic.Resource(gvr).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			obj = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": gvr.GroupVersion().String(), "kind": kind,
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec":     spec,
			}}
			if obj, err = ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			obj.Object["spec"] = spec
			if obj, err = ri.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
		obj.Object["status"] = status(obj, time.Now().UTC().Format(time.RFC3339))
		_, err = ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("testbed: write %s %s/%s in %s: %w", kind, ns, name, c.Name, err)
	}
	return nil
}
