package cloudauth

import (
	"strings"
	"testing"
)

// TestAPIEndpoint (attacker): only DNS names under a cloud's own API server domains are its
// endpoints; an IP address, an IPv6 address whose zone is a cloud's name (Go dials the
// address), a name with a character no DNS name has, a look-alike and another cloud's name
// are not, nor a name with a final dot (it may resolve to another server than the name
// without it).
func TestAPIEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cloud, host string
		want        bool
	}{
		{"EKS", "0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com", true},
		{"EKS", "0123456789abcdef.yl4.us-gov-west-1.eks.amazonaws.com", true},
		{"EKS", "0123456789abcdef.yl4.us-gov-west-1.eks.amazonaws.com.", false}, // the name dialled is not the name checked
		{"EKS", "0123456789ABCDEF.sk1.cn-north-1.eks.amazonaws.com.cn", true},
		{"EKS", "eks.amazonaws.com", false},
		{"EKS", ".eks.amazonaws.com", false},
		{"EKS", "x.eks.amazonaws.com.attacker.example", false},
		{"EKS", "x-eks.amazonaws.com", false},
		{"EKS", "127.0.0.1", false},
		{"EKS", "prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io", false},
		{"GKE", "gke-0123456789abcdef-123456789012.europe-west1.gke.goog", true},
		{"GKE", "34.76.1.2", false},
		{"GKE", "gke.goog", false},
		{"AKS", "prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io", true},
		{"AKS", "prod-1a2b3c4d.0f1e2d3c-aaaa-bbbb-cccc-0123456789ab.privatelink.westeurope.azmk8s.io", true},
		{"AKS", "prod-1a2b3c4d.hcp.usgovvirginia.cx.aks.containerservice.azure.us", true},
		{"AKS", "azmk8s.io", false},
		{"AKS", "10.0.0.4", false},
		{"AKS", "0123.gr7.eu-west-1.eks.amazonaws.com", false},
		{"EKS", "::ffff:127.0.0.1%.eks.amazonaws.com", false},
		{"EKS", "0:0:0:0:0:ffff:127.0.0.1%x.gr7.eu-west-1.eks.amazonaws.com", false},
		{"EKS", "fe80::1%eth0.eks.amazonaws.com", false},
		{"EKS", "[::1%.x.eks.amazonaws.com]", false},
		{"EKS", "x:1.eks.amazonaws.com", false},
		{"EKS", "x%2e.eks.amazonaws.com", false},
		{"EKS", "x_y.eks.amazonaws.com", false},
		{"EKS", "-x.eks.amazonaws.com", false},
		{"EKS", "x..eks.amazonaws.com", false},
		{"EKS", "x y.eks.amazonaws.com", false},
		{"EKS", "x\x00.eks.amazonaws.com", false},
		{"EKS", "\u0131.eks.amazonaws.com", false},
		{"EKS", strings.Repeat("x", 64) + ".eks.amazonaws.com", false},
		{"AKS", "::1%.x.azmk8s.io", false},
		{"AKS", "[::1%.x.azmk8s.io]", false},
		{"GKE", "::ffff:7f00:1%.gke.goog", false},
		{"other", "anything.example.com", false},
	}
	for _, tt := range tests {
		if _, got := APIEndpoint(tt.cloud, tt.host); got != tt.want {
			t.Errorf("APIEndpoint(%q, %q) = %t, want %t", tt.cloud, tt.host, got, tt.want)
		}
	}
}
