package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/textproto"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/remote"
)

// remoteFlags reach an agent served remotely, over the RFD "Streamable
// HTTP & WebSocket transport" (package remote): --url picks the profile by
// its scheme.
type remoteFlags struct {
	url           string
	headers       multiFlag
	allowInsecure bool
}

func (r *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.url, "url", "", "connect to a remote agent at this endpoint instead of running one: https:// (or http:// on loopback) speaks Streamable HTTP, wss:// (ws://) WebSocket")
	fs.Var(&r.headers, "header", "with --url, send this header on every request, as 'Name: value' (repeatable; e.g. 'Authorization: Bearer TOKEN')")
	fs.BoolVar(&r.allowInsecure, "allow-insecure", false, "with --url, allow plain http:// or ws:// to a host that is not loopback")
}

// validate rejects combinations that cannot mean what they say.
func (r *remoteFlags) validate(cfg *config) error {
	switch {
	case r.url == "" && len(r.headers) > 0:
		return errors.New("--header needs --url")
	case r.url == "" && r.allowInsecure:
		return errors.New("--allow-insecure needs --url")
	case r.url == "":
		return nil
	case len(cfg.agent) > 0:
		return errors.New("--url and an agent command after -- exclude each other")
	case cfg.registry.agentID != "" || cfg.registry.listAgents:
		return errors.New("--url excludes --agent and --list-agents")
	}
	if _, err := r.header(); err != nil {
		return err
	}
	_, err := r.transport()
	return err
}

// header parses the --header values.
func (r *remoteFlags) header() (http.Header, error) {
	h := http.Header{}
	for _, v := range r.headers {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("--header wants 'Name: value', got %q", v)
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

func (r *remoteFlags) transport() (acp.Transport, error) {
	h, err := r.header()
	if err != nil {
		return nil, err
	}
	// One cookie jar for the command's life, not one per connection: with
	// --restart every reconnect must carry the load balancer's affinity
	// cookie back, or it lands on another backend that does not have the
	// agent's sessions (docs/REMOTE.md, "Behind a reverse proxy").
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	tr, err := remote.New(r.url, remote.Options{Header: h, Jar: jar, AllowInsecure: r.allowInsecure})
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	return tr, nil
}
