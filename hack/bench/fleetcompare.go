package main

import (
	"cmp"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// credentialRuns verifies the largest fleet once more for each of cfg.compareCredentials,
// as the main series verifies it, each on a fleet of its own servers (each kind's
// credentials come with their own CA, and shared-token servers speak plain HTTP).
func credentialRuns(ctx context.Context, cfg fleetConfig, rusage, dir string) ([]*fleetRow, error) {
	n := slices.Max(cfg.counts)
	var rows []*fleetRow
	for _, kind := range cfg.compareCredentials {
		creds, err := newFleetCredentials(kind, n)
		if err != nil {
			return nil, err
		}
		sub := filepath.Join(dir, kind)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return nil, err
		}
		f, err := startFleet(n, cfg.objects, sub, creds)
		if err != nil {
			return nil, err
		}
		r := &fleetRow{tool: "app-status", command: "verify", clusters: n, healthy: len(f.healthy), credentials: kind}
		for i := range cfg.runs {
			s, err := measureFleet(ctx, rusage, cfg.appStatus, "verify", f, cfg.timeout, cfg.runCap,
				cfg.runFiles(sub, appStatusTool(cfg), fmt.Sprintf("verify-%d-%s-run%d", n, kind, i+1)))
			if err != nil {
				f.close()
				return nil, err
			}
			r.samples = append(r.samples, s)
			logf("  %d clusters, credentials %s, run %d: last healthy verdict %s (%d of %d), exit %s%s, peak RSS %d MiB, CPU %s",
				n, kind, i+1, ms(s.lastHealthy), s.healthyOK, r.healthy, ms(s.exit), killedNote(s), s.rss>>20, ms(s.cpu))
		}
		f.close()
		rows = append(rows, r)
	}
	return rows, nil
}

// rsaSignTime is the time of one RSA 2048 PSS signature on this machine, the one a client
// certificate's TLS 1.3 handshake makes with the client's key (CertificateVerify): the mean
// of 200, after one to warm up.
func rsaSignTime() (time.Duration, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return 0, err
	}
	digest := sha256.Sum256([]byte("CertificateVerify"))
	sign := func() error {
		_, err := rsa.SignPSS(rand.Reader, key, crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		return err
	}
	if err := sign(); err != nil {
		return 0, err
	}
	const n = 200
	began := time.Now()
	for range n {
		if err := sign(); err != nil {
			return 0, err
		}
	}
	return time.Since(began) / n, nil
}

// credentialsReport is the section that compares the largest fleet's verify runs by what
// each kubeconfig carries (empty without cfg.compareCredentials).
func credentialsReport(cfg fleetConfig, rows, credRows []*fleetRow) (string, error) {
	if len(credRows) == 0 {
		return "", nil
	}
	rsaSign, err := rsaSignTime()
	if err != nil {
		return "", err
	}
	n := slices.Max(cfg.counts)
	var b strings.Builder
	fmt.Fprintf(&b, "\n## %d clusters, by what each kubeconfig carries\n\n", n)
	b.WriteString("The same fleet and the same `verify` runs, each kind of credentials on a fleet of its own servers. ")
	b.WriteString("The last row is the engine's own cost, on which its targets were set: at most 5 ms of CPU per cluster of 200 objects, at most 250 MiB, an exit within 1 s of the deadline. ")
	b.WriteString("Credentials of each kubeconfig's own over TLS, as real fleets' are, add the TLS handshakes' cryptography: ")
	fmt.Fprintf(&b, "a key exchange in every handshake (resumed or not), the check of the server's certificate chain and signature in every full one and, with a client certificate, one RSA 2048 signature per full handshake: %.2f ms each on this machine, measured in this run.\n\n",
		float64(rsaSign.Microseconds())/1000)
	b.WriteString("| Kubeconfigs carry | Healthy clusters Current | Last healthy verdict | Exit | Last verdict to exit | Peak RSS | CPU per cluster |\n|---|---|---|---|---|---|---|\n")
	all := slices.Clone(credRows)
	for _, r := range rows {
		if r.clusters == n && r.tool == "app-status" && r.command == "verify" && r.busy == 0 {
			all = append([]*fleetRow{r}, all...)
		}
	}
	for _, r := range all {
		kind := cmp.Or(r.credentials, cfg.credentials)
		ok := int(medianInt(pick(r.samples, func(s fleetSample) int64 { return int64(s.healthyOK) })))
		if anyKilled(r) {
			fmt.Fprintf(&b, "| %s | %d of %d | | not within %s | | | |\n", credentialsShort(kind), ok, r.healthy, cfg.runCap)
			continue
		}
		last := ms(median(pick(r.samples, func(s fleetSample) time.Duration { return s.lastHealthy })))
		if ok < r.healthy {
			last = "never, for " + strconv.Itoa(r.healthy-ok)
		}
		exit := median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit }))
		tail := median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit - s.lastVerdict }))
		rss := medianInt(pick(r.samples, func(s fleetSample) int64 { return s.rss }))
		cpu := median(pick(r.samples, func(s fleetSample) time.Duration { return s.cpu }))
		fmt.Fprintf(&b, "| %s | %d of %d | %s | %s | %s | %d MiB | %.1f ms |\n", credentialsShort(kind), ok, r.healthy, last, ms(exit), ms(tail), rss>>20,
			float64(cpu.Microseconds())/1000/float64(n))
	}
	return b.String(), nil
}

func credentialsShort(kind string) string {
	switch kind {
	case credsCert:
		return "its own client certificate and RSA 2048 key, TLS"
	case credsToken:
		return "its own bearer token, TLS"
	}
	return "one token for all, plain HTTP (the engine's own cost)"
}
