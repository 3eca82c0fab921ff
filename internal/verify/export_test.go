package verify

import (
	"crypto/tls"

	"k8s.io/apimachinery/pkg/api/meta"
)

// WatchConnections returns req with onHandshake told of every cluster's TLS handshakes and
// onPark of every cluster that waits for its turn without a connection.
func WatchConnections(req Request, onHandshake func(tls.ConnectionState), onPark func(cluster string)) Request {
	req.onHandshake = onHandshake
	req.onTurnWait = func(cluster string, parked bool) {
		if parked && onPark != nil {
			onPark(cluster)
		}
	}
	return req
}

// BuiltinMappings are the mappings the engine gives the built-in kinds without discovery.
func BuiltinMappings() []*meta.RESTMapping {
	out := make([]*meta.RESTMapping, 0, len(builtinResources))
	for gvk := range builtinResources {
		m, _ := builtinMapping(gvk)
		out = append(out, m)
	}
	return out
}
