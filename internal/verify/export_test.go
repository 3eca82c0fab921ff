package verify

import (
	"crypto/tls"
	"time"
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

// WithWatchHold returns req with the watches' longest wait for a settled assessment set to d.
func WithWatchHold(req Request, d time.Duration) Request {
	req.watchHold = d
	return req
}
