package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// The ways the fleet benchmark's kubeconfigs carry credentials.
const (
	credsCert        = "cert"         // each its own client certificate and RSA 2048 key, over TLS (kubeadm, kind)
	credsToken       = "token"        // each its own bearer token, over TLS
	credsSharedToken = "shared-token" // one token for every cluster, plain HTTP (the engine's own cost)
)

// sharedToken is the one token of a shared-token fleet. It is long enough to be masked: the
// product refuses a token of fewer than 8 characters, which the runner would blank from every
// line of the job.
const sharedToken = "bench-fleet-shared-token" //nolint:gosec // G101: the fake servers' own token, in no real cluster

// fleetCredentials are the credentials of a fleet of fake clusters: a CA, the servers' TLS
// configuration (which verifies client certificates against the CA), and per cluster a client
// certificate and key or a token. They are made once, for the largest fleet; smaller fleets
// use the first ones.
type fleetCredentials struct {
	kind      string
	serverTLS *tls.Config
	caPEM     []byte
	certs     [][]byte // PEM, per cluster
	keys      [][]byte // PEM, per cluster
	tokens    []string
}

func newFleetCredentials(kind string, n int) (*fleetCredentials, error) {
	c := &fleetCredentials{kind: kind}
	switch kind {
	case credsSharedToken:
		return c, nil
	case credsToken, credsCert:
	default:
		return nil, fmt.Errorf("--credentials must be %s, %s or %s, not %q", credsCert, credsToken, credsSharedToken, kind)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench-fleet-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serverDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, &serverKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	c.serverTLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{serverDER}, PrivateKey: serverKey}},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	if kind == credsToken {
		for range n {
			c.tokens = append(c.tokens, randomToken())
		}
		return c, nil
	}
	// RSA 2048 keys, as kubeadm and kind write them, made on every core.
	c.certs, c.keys = make([][]byte, n), make([][]byte, n)
	var mu sync.Mutex
	g := errgroup.Group{}
	g.SetLimit(runtime.NumCPU())
	for i := range n {
		g.Go(func() error {
			key, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				return err
			}
			der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(int64(i) + 10),
				Subject:   pkix.Name{CommonName: fmt.Sprintf("admin-%04d", i), Organization: []string{"system:masters"}},
				NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, &key.PublicKey, caKey)
			if err != nil {
				return err
			}
			keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
			mu.Lock()
			defer mu.Unlock()
			c.certs[i], c.keys[i] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM
			return nil
		})
	}
	return c, g.Wait()
}

func randomToken() string {
	b := make([]byte, 48)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// kubeconfig is cluster i's kubeconfig for the server at url.
func (c *fleetCredentials) kubeconfig(i int, url string) string {
	const head = "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
	b64 := base64.StdEncoding.EncodeToString
	switch c.kind {
	case credsCert:
		return fmt.Sprintf("%sclusters:\n- name: c\n  cluster:\n    server: %s\n    certificate-authority-data: %s\nusers:\n- name: u\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n",
			head, url, b64(c.caPEM), b64(c.certs[i]), b64(c.keys[i]))
	case credsToken:
		return fmt.Sprintf("%sclusters:\n- name: c\n  cluster:\n    server: %s\n    certificate-authority-data: %s\nusers:\n- name: u\n  user:\n    token: %s\n",
			head, url, b64(c.caPEM), c.tokens[i])
	}
	return fmt.Sprintf("%sclusters:\n- name: c\n  cluster:\n    server: %s\nusers:\n- name: u\n  user:\n    token: %s\n", head, url, sharedToken)
}
