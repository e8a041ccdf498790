// Package proxytest runs the gateway behind the reverse proxies whose
// configurations docs/REMOTE.md publishes, docs/deploy/nginx.conf and
// docs/deploy/haproxy.cfg, as an operator would: two gateways on loopback
// with a bearer token, the proxy terminating TLS with a generated
// certificate, and package remote's clients, over Streamable HTTP and
// WebSocket, through each proxy.
//
// It holds only tests. They need nginx and haproxy on PATH: .ci/run
// installs Debian's packages when they are missing; without CI=true a
// missing proxy skips its tests, with CI=true it fails them.
// The tests build on Unix only: they start the proxies and the gateways
// in process groups of their own.
package proxytest
