package cloudauth

import (
	"net"
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
// "AKS", as Plugin.Cloud), and describes them for a message.
func APIEndpoint(cloud, host string) (string, bool) {
	suffixes := apiEndpoints[cloud]
	want := "*" + strings.Join(suffixes, ", *")
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(host) != nil {
		return want, false
	}
	for _, s := range suffixes {
		if name, ok := strings.CutSuffix(host, s); ok && name != "" && !strings.HasSuffix(name, ".") {
			return want, true
		}
	}
	return want, false
}
