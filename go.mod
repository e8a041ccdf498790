module github.com/acpclient/acp

go 1.26.0

require (
	github.com/aymanbagabas/go-udiff v0.4.2
	github.com/creachadair/jrpc2 v1.3.6
	github.com/google/go-cmp v0.7.0
	golang.org/x/term v0.48.0
)

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/sys v0.50.0
)

require golang.org/x/text v0.14.0 // indirect

require (
	github.com/creachadair/mds v0.31.0 // indirect
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.24.0 // indirect
)
