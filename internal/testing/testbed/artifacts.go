package testbed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The source kinds the test bed plays source-controller for.
var (
	GitRepositoryGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
	OCIRepositoryGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}
	HelmChartGVR     = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}
	// ExternalArtifactGVR is written by source-watcher's ArtifactGenerator, which the bed plays too.
	ExternalArtifactGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "externalartifacts"}
)

// ArtifactServer serves tarballs over HTTP on 127.0.0.1, the way source-controller serves
// artifacts to the other Flux controllers.
type ArtifactServer struct {
	srv  *http.Server
	addr string
	mu   sync.RWMutex
	data map[string][]byte
}

func startArtifactServer() (*ArtifactServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testbed: artifact server: %w", err)
	}
	a := &ArtifactServer{addr: l.Addr().String(), data: map[string][]byte{}}
	a.srv = &http.Server{Handler: http.HandlerFunc(a.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(l) }()
	return a, nil
}

func (a *ArtifactServer) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.RLock()
	data, ok := a.data[r.URL.Path]
	a.mu.RUnlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	_, _ = w.Write(data)
}

// store makes data available at path and returns its URL.
func (a *ArtifactServer) store(path string, data []byte) string {
	a.mu.Lock()
	a.data["/"+path] = data
	a.mu.Unlock()
	return "http://" + a.addr + "/" + path
}

// Close stops the server.
func (a *ArtifactServer) Close() { _ = a.srv.Close() }

// Artifact is a published revision.
type Artifact struct {
	Revision string // as Flux writes it: main@sha1:<hex> or <version>@sha256:<hex>
	Digest   string // sha256:<hex> of the tarball
	URL      string
	Size     int64
}

// PublishGit publishes the files under dir as a GitRepository revision on branch main: it makes
// sure the GitRepository ns/name exists and writes its status as source-controller would, so
// Kustomizations that use it reconcile the new revision. commit is the 40-hex commit SHA to
// report; when empty, one is derived from the content.
func (c *Cluster) PublishGit(ctx context.Context, ns, name, dir, commit string) (Artifact, error) {
	tarball, err := TarGz(dir, "")
	if err != nil {
		return Artifact{}, err
	}
	if commit == "" {
		sum := sha1.Sum(tarball)
		commit = hex.EncodeToString(sum[:])
	}
	revision := "main@sha1:" + commit
	spec := map[string]any{"url": "https://git.test/" + name, "interval": "60m", "ref": map[string]any{"branch": "main"}}
	return c.publish(ctx, GitRepositoryGVR, "GitRepository", ns, name, spec, revision, tarball, nil)
}

// PublishOCI publishes the files under dir as the OCIRepository ns/name's artifact, as
// `flux push artifact --revision ORIGIN` and then source-controller would: revision
// latest@sha256:<digest>, with the origin revision in the artifact's metadata
// (org.opencontainers.image.revision). origin may be empty.
func (c *Cluster) PublishOCI(ctx context.Context, ns, name, dir, origin string) (Artifact, error) {
	tarball, err := TarGz(dir, "")
	if err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(tarball)
	revision := "latest@sha256:" + hex.EncodeToString(sum[:])
	spec := map[string]any{"url": "oci://registry.test/manifests/" + name, "interval": "60m", "ref": map[string]any{"tag": "latest"}}
	var extra map[string]any
	if origin != "" {
		extra = map[string]any{"metadata": map[string]any{"org.opencontainers.image.revision": origin}}
	}
	return c.publish(ctx, OCIRepositoryGVR, "OCIRepository", ns, name, spec, revision, tarball, extra)
}

// PublishHelmChart publishes the chart in chartDir as the artifact of the HelmChart ns/name,
// as source-controller builds a chart from a GitRepository with reconcileStrategy Revision:
// version VERSION+<first 12 hex of the commit>, status.observedSourceArtifactRevision the
// GitRepository's revision main@sha1:<commit>. The HelmChart's spec names the GitRepository
// source (of namespace ns).
func (c *Cluster) PublishHelmChart(ctx context.Context, ns, name, chartDir, version, source, commit string) (Artifact, error) {
	built := version + "+" + commit[:12]
	tmp, err := os.MkdirTemp("", "testbed-chart-")
	if err != nil {
		return Artifact{}, fmt.Errorf("testbed: copy chart: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, filepath.Base(chartDir))
	if err := copyChart(chartDir, dir, built); err != nil {
		return Artifact{}, err
	}
	tarball, err := TarGz(dir, filepath.Base(chartDir))
	if err != nil {
		return Artifact{}, err
	}
	spec := map[string]any{"chart": "./", "interval": "60m", "reconcileStrategy": "Revision",
		"sourceRef": map[string]any{"kind": "GitRepository", "name": source}}
	return c.publish(ctx, HelmChartGVR, "HelmChart", ns, name, spec, built, tarball,
		map[string]any{"observedSourceArtifactRevision": "main@sha1:" + commit})
}

// PublishChart publishes the Helm chart in chartDir as an OCIRepository revision
// <version>@sha256:<digest>, for HelmReleases whose chartRef names ns/name.
func (c *Cluster) PublishChart(ctx context.Context, ns, name, chartDir, version string) (Artifact, error) {
	tarball, err := TarGz(chartDir, filepath.Base(chartDir))
	if err != nil {
		return Artifact{}, err
	}
	sum := sha256.Sum256(tarball)
	revision := version + "@sha256:" + hex.EncodeToString(sum[:])
	spec := map[string]any{"url": "oci://registry.test/charts/" + name, "interval": "60m", "ref": map[string]any{"tag": version}}
	return c.publish(ctx, OCIRepositoryGVR, "OCIRepository", ns, name, spec, revision, tarball, nil)
}

// publish makes the tarball the artifact of the source ns/name, creating the source with spec
// when it does not exist. extra adds fields to the status: "metadata" goes into the artifact.
func (c *Cluster) publish(ctx context.Context, gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any, revision string, tarball []byte, extra map[string]any) (Artifact, error) {
	sum := sha256.Sum256(tarball)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	path := fmt.Sprintf("%s/%s/%s/%s/%s.tar.gz", c.Name, strings.ToLower(kind), ns, name, hex.EncodeToString(sum[:8]))
	art := Artifact{Revision: revision, Digest: digest, URL: c.bed.Artifacts.store(path, tarball), Size: int64(len(tarball))}

	ri := c.Dynamic.Resource(gvr).Namespace(ns)
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.GroupVersion().String(), "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     spec,
		}}
		obj, err = ri.Create(ctx, obj, metav1.CreateOptions{})
	}
	if err != nil {
		return Artifact{}, fmt.Errorf("testbed: %s %s/%s in %s: %w", kind, ns, name, c.Name, err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	artifact := map[string]any{
		"path": path, "url": art.URL, "revision": revision, "digest": digest,
		"size": art.Size, "lastUpdateTime": now,
	}
	status := map[string]any{
		"observedGeneration": obj.GetGeneration(),
		"artifact":           artifact,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Succeeded",
			"message":            "stored artifact for revision '" + revision + "'",
			"lastTransitionTime": now, "observedGeneration": obj.GetGeneration(),
		}},
	}
	for k, v := range extra {
		if k == "metadata" {
			artifact[k] = v
			continue
		}
		status[k] = v
	}
	obj.Object["status"] = status
	if _, err := ri.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
		return Artifact{}, fmt.Errorf("testbed: publish %s to %s %s/%s in %s: %w", revision, kind, ns, name, c.Name, err)
	}
	return art, nil
}

// PublishExternalArtifact writes the files of dir as the artifact of ExternalArtifact ns/name
// at revision, as source-watcher's ArtifactGenerator of the same name would (its spec names
// the generator; the status holds the artifact and Ready).
func (c *Cluster) PublishExternalArtifact(ctx context.Context, ns, name, dir, revision string) (Artifact, error) {
	tarball, err := TarGz(dir, "")
	if err != nil {
		return Artifact{}, err
	}
	spec := map[string]any{"sourceRef": map[string]any{"apiVersion": "source.extensions.fluxcd.io/v1beta1", "kind": "ArtifactGenerator", "name": name, "namespace": ns}}
	return c.publish(ctx, ExternalArtifactGVR, "ExternalArtifact", ns, name, spec, revision, tarball, nil)
}

// TarGz packs the regular files under dir into a deterministic gzipped tarball, their paths
// prefixed with prefix (a chart's folder name) when it is not empty.
func TarGz(dir, prefix string) ([]byte, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("testbed: pack %s: %w", dir, err)
	}
	sort.Strings(files)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("testbed: pack %s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = prefix + "/" + name
		}
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("testbed: pack %s: %w", f, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("testbed: pack %s: %w", f, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("testbed: pack %s: %w", dir, err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("testbed: pack %s: %w", dir, err)
	}
	return buf.Bytes(), nil
}
