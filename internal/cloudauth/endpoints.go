package cloudauth

import (
	"strings"
)

// apiEndpoints are the DNS suffixes of each cloud's Kubernetes API servers: the only servers a
// repository kubeconfig may send a built-in provider's token to, unless the workflow allows
// another (see internal/kubeconfig). Nobody but the cloud serves names under them.
var apiEndpoints = map[string][]string{
	// https://ID.gr7.REGION.eks.amazonaws.com (GovCloud regions too), and the China regions'.
	"EKS": {".eks.amazonaws.com", ".eks.amazonaws.com.cn"},
	// The DNS endpoint, https://gke-HASH-PROJECT.LOCATION.gke.goog. A cluster's IP endpoint,
	// which gcloud container clusters get-credentials writes by default, says nothing of whose
	// it is: any VM has such an address.
	"GKE": {".gke.goog"},
	// Public, private (privatelink) and VNet-integrated API servers, in Azure's public cloud,
	// Azure Government and Azure operated by 21Vianet.
	"AKS": {".azmk8s.io", ".cx.aks.containerservice.azure.us", ".cx.prod.service.azk8s.cn"},
}

// APIEndpoint reports whether host is one of the cloud's API server names ("EKS", "GKE" or
// "AKS", as Plugin.Cloud), and describes them for a message. host is a URL's Hostname: only
// a plain DNS name is one. Anything else is dialled by what it holds, whatever it ends with:
// an IPv6 address's zone may be any text ("[::ffff:127.0.0.1%25.eks.amazonaws.com]" is
// 127.0.0.1), and an IP address says nothing of whose server it is.
func APIEndpoint(cloud, host string) (string, bool) {
	suffixes := apiEndpoints[cloud]
	want := "*" + strings.Join(suffixes, ", *")
	host = strings.ToLower(host)
	if !dnsName(host) { // a final dot too: the name compared must be the name dialled
		return want, false
	}
	for _, s := range suffixes {
		if name, ok := strings.CutSuffix(host, s); ok && name != "" && !strings.HasSuffix(name, ".") {
			return want, true
		}
	}
	return want, false
}

// dnsName reports whether host, in lower case, is a DNS name (without a final dot) of
// letters, digits and hyphens (RFC 1123): labels of 1 to 63 characters that neither start nor
// end with a hyphen, at most 253 characters, and a last label that is not all digits (so no
// IPv4 address). A "%", ":", "[" or any other character is refused.
func dnsName(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789-", l[i]) < 0 {
				return false
			}
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}
