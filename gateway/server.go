package gateway

import (
	"net/http"
	"time"
)

// NewServer returns an http.Server for h with what a listener facing
// untrusted clients needs and http.Server lacks by default: headers must
// arrive within 10s (a slowloris client is cut off) and fit 64 KiB; idle
// keep-alive connections close after 2 minutes. There is no WriteTimeout,
// which would cut long SSE streams; the gateway bounds each write itself
// (Options.StallTimeout). It speaks HTTP/1.1 and HTTP/2, also HTTP/2
// without TLS (h2c with prior knowledge): the RFD requires HTTP/2 for
// Streamable HTTP, while WebSocket upgrades and clients such as Node's
// fetch use HTTP/1.1.
func NewServer(h http.Handler) *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
		Protocols:         p,
	}
}
