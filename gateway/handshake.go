package gateway

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// checkHandshake checks a WebSocket upgrade request as websocket.Accept
// will (RFC 6455 section 4.2.1), and that the connection can be taken
// over, so that a request Accept would refuse is refused before an agent
// starts for it. A nonzero status is the answer, with the same headers
// the library sets.
func checkHandshake(w http.ResponseWriter, r *http.Request) (int, string) {
	upgradeRequired := func(msg string) (int, string) {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return http.StatusUpgradeRequired, msg
	}
	switch {
	case !r.ProtoAtLeast(1, 1):
		return http.StatusUpgradeRequired, "WebSocket handshake: HTTP/1.1 or later required"
	case !hasToken(r.Header, "Connection", "upgrade"):
		return upgradeRequired("WebSocket handshake: Connection must contain Upgrade")
	case !hasToken(r.Header, "Upgrade", "websocket"):
		return upgradeRequired("WebSocket handshake: Upgrade must contain websocket")
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, "WebSocket handshake: the method must be GET"
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		w.Header().Set("Sec-WebSocket-Version", "13")
		return http.StatusBadRequest, "WebSocket handshake: Sec-WebSocket-Version must be 13"
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return http.StatusBadRequest, "WebSocket handshake: exactly one Sec-WebSocket-Key required"
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return http.StatusBadRequest, "WebSocket handshake: Sec-WebSocket-Key must be 16 bytes in base64"
	}
	if !canHijack(w) {
		// HTTP/2 (WebSocket over HTTP/2, RFC 8441, is not offered).
		return http.StatusNotImplemented, "WebSocket handshake: this connection cannot be upgraded (HTTP/2?)"
	}
	return 0, ""
}

// hasToken: a comma-separated token of the header's values is token,
// case-insensitively.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// canHijack finds an http.Hijacker through wrappers with Unwrap, as the
// WebSocket library does.
func canHijack(w http.ResponseWriter) bool {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
}
