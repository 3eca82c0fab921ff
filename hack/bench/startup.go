package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// startupResult is the start-up time and the sizes.
type startupResult struct {
	// AppStatus and Kubectl are, per run, from exec to the first request the fake API server
	// received.
	AppStatus, Kubectl []time.Duration
	BinarySize         int64
	// ImageTar and ImageGzip are the size of the Dockerfile's final image's only layer
	// (the binary, the CA bundle and /tmp), as a tar and gzip-compressed; computed here, not
	// pulled: no container engine runs on this machine.
	ImageTar, ImageGzip int64
	CABundle            string
}

// caBundle is the CA certificates the Dockerfile copies from its golang (Debian) build stage;
// the Debian file of this machine stands in for it.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

func measureStartup(ctx context.Context, e *env, runs int) (*startupResult, error) {
	res := &startupResult{CABundle: caBundle}
	st, err := os.Stat(e.appStatus)
	if err != nil {
		return nil, err
	}
	res.BinarySize = st.Size()
	if res.ImageTar, res.ImageGzip, err = imageLayer(e.appStatus, caBundle); err != nil {
		return nil, err
	}

	// A local listener poses as the API server: it notes when the first request arrives and
	// answers 404 to everything.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	first := make(chan time.Time, 64)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case first <- time.Now():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	kubeconfig := filepath.Join(e.workdir, "fake-apiserver.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: "http://%s"}
users:
- name: fake
  user: {token: bench}
contexts:
- name: fake
  context: {cluster: fake, user: fake}
current-context: fake
`, l.Addr())), 0o600); err != nil {
		return nil, err
	}
	time1 := func(name string, args ...string) (time.Duration, error) {
		for len(first) > 0 {
			<-first
		}
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(e.workdir, "kubectl-cache-startup"))
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}()
		select {
		case t := <-first:
			return t.Sub(start), nil
		case <-time.After(10 * time.Second):
			return 0, fmt.Errorf("%s sent no request within 10s", filepath.Base(name))
		}
	}
	for range runs {
		d, err := time1(e.appStatus, "get", "--kubeconfig", kubeconfig, "--resource", "kustomization/app", "--timeout", "10s", "-o", "json", "--quiet")
		if err != nil {
			return nil, err
		}
		res.AppStatus = append(res.AppStatus, d)
		if d, err = time1(e.bins.Path("kubectl"), "--kubeconfig", kubeconfig, "-n", "flux-system", "get", "kustomization", "app"); err != nil {
			return nil, err
		}
		res.Kubectl = append(res.Kubectl, d)
	}
	logf("start-up to first request: app-status %s, kubectl %s (medians of %d); binary %s, image layer %s gzip-compressed (computed)",
		median(res.AppStatus).Round(10*time.Microsecond), median(res.Kubectl).Round(10*time.Microsecond), runs, mb(res.BinarySize), mb(res.ImageGzip))
	return res, nil
}

// imageLayer builds the root file system of the Dockerfile's final stage (FROM scratch, COPY
// --from=build /rootfs/ /) as a tar and returns its size plain and gzip-compressed, the way a
// registry stores the layer.
func imageLayer(binary, ca string) (tarSize, gzSize int64, err error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return 0, 0, err
	}
	certs, err := os.ReadFile(ca)
	if err != nil {
		return 0, 0, fmt.Errorf("CA bundle: %w", err)
	}
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	mtime := time.Unix(0, 0)
	for _, d := range []struct {
		name string
		mode int64
	}{{"etc/", 0o755}, {"etc/ssl/", 0o755}, {"etc/ssl/certs/", 0o755}, {"tmp/", 0o1777}} {
		if err := tw.WriteHeader(&tar.Header{Name: d.name, Mode: d.mode, Typeflag: tar.TypeDir, ModTime: mtime}); err != nil {
			return 0, 0, err
		}
	}
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"app-status", 0o755, bin}, {"etc/ssl/certs/ca-certificates.crt", 0o644, certs}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg, ModTime: mtime}); err != nil {
			return 0, 0, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return 0, 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return 0, 0, err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return 0, 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, 0, err
	}
	return int64(raw.Len()), int64(gz.Len()), nil
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
