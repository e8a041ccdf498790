module github.com/acpclient/acp/bench

go 1.26.0

require (
	github.com/acpclient/acp v0.0.0
	github.com/coder/acp-go-sdk v0.13.5
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/aymanbagabas/go-udiff v0.4.2 // indirect
	github.com/creachadair/jrpc2 v1.3.6 // indirect
	github.com/creachadair/mds v0.31.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace github.com/acpclient/acp => ../
