// Package remote reaches agents that run somewhere else — in a container,
// on a build machine, in a cloud sandbox — over the two profiles of the ACP
// RFD "Streamable HTTP & WebSocket transport": [HTTPTransport] (POST for
// what the client sends, long-lived SSE streams for what the agent sends)
// and [WebSocketTransport] (one JSON-RPC message per text frame). Each is
// an [acp.Transport]: pass it to [acp.Connect] and the client works as it
// does over stdio, its limits and guarantees included (each transport's
// documentation says what differs in ordering). [New] picks the profile
// from a URL's scheme.
//
//	tr, err := remote.New("https://agents.example.com/acp", remote.Options{
//		Header: http.Header{"Authorization": {"Bearer " + token}},
//	})
//	c, err := acp.Connect(ctx, tr, nil)
//
// # Security
//
// Plain http:// and ws:// are allowed only to loopback unless
// Options.AllowInsecure is set; redirects never go from https to http.
// Cookies the server sets are kept for the connection (a jar of its own,
// or Options.Jar: pass one jar to keep a load balancer's affinity across
// reconnects) and sent back, as the RFD requires.
//
// # Limits
//
// Every bound has a default in the zero [Options] and counts what the
// transport retains; docs/REMOTE.md tabulates them with what happens when
// each is exceeded. A Streamable HTTP connection opens at most
// Options.MaxSessions (64) session streams, and only for the sessions the
// client asked for (the answers to its own session/new, session/load,
// session/resume, session/fork, or a session it sends a message for): a
// server cannot make it open a stream per answer it invents. What it
// holds of unfinished messages is one budget for the whole connection,
// Options.MaxBufferedBytes (2 × MaxMessageBytes, 128 MiB), however many
// streams the server leaves mid-event; past it the connection ends with
// ErrBufferLimit. One message's buffer never grows past MaxMessageBytes
// (64 MiB): a longer one is passed on as it arrives. Ids the
// server chooses are sent back in headers only when they fit one (1024
// bytes, no control bytes).
//
// # Reconnecting
//
// Sessions outlive connections (RFD, v1): after a connection ends,
// connect again (with the same Options.Jar) and call Client.LoadSession
// (or ResumeSession) with the session's id. Nothing the agent sent while
// no connection was open is delivered again.
//
// Unstable: the RFD is at stage Active, not yet part of the protocol; the
// wire follows the TypeScript SDK 2.4.0 (experimental/http-client,
// experimental/ws-client, experimental/server), and each place where the
// RFD's prose and that SDK differ is noted in the code.
package remote

import (
	"fmt"
	"net/url"

	"github.com/acpclient/acp"
)

// New returns the transport for rawURL's scheme: https:// and http:// speak
// Streamable HTTP, wss:// and ws:// WebSocket.
func New(rawURL string, opts Options) (acp.Transport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("acp/remote: %w", err)
	}
	switch u.Scheme {
	case "https", "http":
		if _, err := checkURL(rawURL, "https", "http", opts.AllowInsecure); err != nil {
			return nil, err
		}
		return &HTTPTransport{URL: rawURL, Options: opts}, nil
	case "wss", "ws":
		if _, err := checkURL(rawURL, "wss", "ws", opts.AllowInsecure); err != nil {
			return nil, err
		}
		return &WebSocketTransport{URL: rawURL, Options: opts}, nil
	}
	return nil, fmt.Errorf("acp/remote: %q: want an https://, http://, wss:// or ws:// URL", u.Redacted())
}
