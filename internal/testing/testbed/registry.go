package testbed

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The media types `flux push artifact` gives an artifact (fluxcd/pkg/oci).
const (
	fluxConfigMediaType  types.MediaType = "application/vnd.cncf.flux.config.v1+json"
	fluxContentMediaType types.MediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

// Registry is an OCI registry served in-process on 127.0.0.1 (go-containerregistry's), that
// the bed's real source-controllers pull from over plain HTTP (OCIRepository spec.insecure).
type Registry struct {
	// Host is host:port.
	Host   string
	server *http.Server
}

func startRegistry() (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testbed: registry: %w", err)
	}
	quiet := registry.Logger(log.New(io.Discard, "", 0))
	r := &Registry{Host: l.Addr().String(), server: &http.Server{Handler: registry.New(quiet), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() { _ = r.server.Close() }

// URL is the oci:// URL of a repository of the registry.
func (r *Registry) URL(repo string) string { return "oci://" + r.Host + "/" + repo }

// PushArtifact pushes the manifests in dir to repo:tag as `flux push artifact --revision` does:
// one tar+gzip layer of Flux's content media type, Flux's config media type, and the revision
// in the org.opencontainers.image.revision annotation. It returns the manifest digest.
func (r *Registry) PushArtifact(ctx context.Context, repo, tag, dir, revision string) (string, error) {
	tarball, err := TarGz(dir, "")
	if err != nil {
		return "", err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, fluxConfigMediaType)
	if img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(tarball, fluxContentMediaType)}); err != nil {
		return "", fmt.Errorf("testbed: artifact of %s: %w", dir, err)
	}
	annotated, ok := mutate.Annotations(img, map[string]string{
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.source":   "https://example.invalid/app.git",
		"org.opencontainers.image.created":  time.Now().UTC().Format(time.RFC3339),
	}).(v1.Image)
	if !ok {
		return "", fmt.Errorf("testbed: annotate the artifact of %s", dir)
	}
	img = annotated
	ref, err := name.ParseReference(r.Host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("testbed: artifact reference: %w", err)
	}
	// A transport of its own, closed after the push: idle connections of the default one
	// would outlive the push (and show in the engine's goroutine-leak test).
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(tr)); err != nil {
		return "", fmt.Errorf("testbed: push %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return digest.String(), nil
}

// OCIRepository renders an OCIRepository the real source-controller fetches from the bed's
// registry: repo:tag, plain HTTP, every interval.
func (r *Registry) OCIRepository(name, repo, tag, interval string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1",
		"kind":       "OCIRepository",
		"metadata":   map[string]any{"name": name, "namespace": "flux-system"},
		"spec": map[string]any{
			"interval": interval,
			"url":      r.URL(repo),
			"ref":      map[string]any{"tag": tag},
			"insecure": true,
		},
	}}
}
