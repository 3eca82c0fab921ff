package verify

import "crypto/tls"

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
