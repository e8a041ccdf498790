package registry

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultURL is the official registry index, the one editors resolve
// agents from.
const DefaultURL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"

// Default limits. The registry server and the archive hosts are untrusted:
// these bound what they can make a client download and write.
const (
	DefaultMaxRegistryBytes  = 16 << 20 // 16 MiB
	DefaultMaxArchiveBytes   = 1 << 30  // 1 GiB
	DefaultMaxUnpackedBytes  = 4 << 30  // 4 GiB
	DefaultMaxArchiveEntries = 100_000

	// DefaultMaxResponseHeaderBytes bounds the response headers the default
	// client reads (http.Transport.MaxResponseHeaderBytes); a response with
	// more fails. Real registry and CDN headers are a few KiB.
	DefaultMaxResponseHeaderBytes = 64 << 10 // 64 KiB

	DefaultLoadTimeout  = 30 * time.Second
	DefaultStallTimeout = 60 * time.Second
)

// defaultClient is the client used when Options.HTTPClient is nil: the
// default transport's settings (proxies from the environment, timeouts)
// with response headers bounded. One for the process, so that connections
// are reused across loads and installs.
var defaultClient = sync.OnceValue(func() *http.Client {
	var tr *http.Transport
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = d.Clone()
	} else {
		tr = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	tr.MaxResponseHeaderBytes = DefaultMaxResponseHeaderBytes
	return &http.Client{Transport: tr}
})

// Options configure [Load] and command resolution. The zero value (or nil)
// uses the official registry, a default HTTP client, the user's cache
// directory and this machine's platform.
type Options struct {
	// Registry is where the index comes from: an https:// URL (http:// only
	// for a loopback host), a file:// URL or a local file path. Default:
	// [DefaultURL].
	Registry string

	// HTTPClient fetches the registry and archives. Default: a client with
	// [http.DefaultTransport]'s settings that reads at most
	// DefaultMaxResponseHeaderBytes of response headers; a client given
	// here bounds them with its own Transport's MaxResponseHeaderBytes
	// (whatever it is, at most 1 KiB of a validator is ever stored and sent
	// back). Whatever the client's own redirect policy, at
	// most 10 redirects are followed and a redirect never leaves https
	// (plain http is followed only from an http URL on loopback, to
	// loopback) nor goes from a remote host to a loopback one.
	HTTPClient *http.Client

	// CacheDir holds the cached registry and the installed binaries.
	// Default: "acp" under [os.UserCacheDir].
	CacheDir string

	// Platform is the registry's platform name to pick binaries for, e.g.
	// "linux-x86_64". Default: this machine's (see [Platform]).
	Platform string

	// OnDownload, when set, is called before an agent's archive is
	// downloaded (not when the install is cached), so that a program can say
	// why it is waiting. It may be called from several goroutines at once.
	OnDownload func(a *Agent, archiveURL string)

	// Progress, when set, is called while an agent's archive downloads:
	// once when the response arrives (Done 0), then after each chunk
	// received. It is called from the goroutine that called Command or
	// Install, never concurrently for one download, and should return
	// quickly (the download waits for it); downloads of several agents at
	// once may call it concurrently.
	Progress func(Progress)

	// LookPath finds npx and uvx. Default: [exec.LookPath].
	LookPath func(file string) (string, error)

	// MaxRegistryBytes bounds the registry document (default
	// DefaultMaxRegistryBytes). A larger one is refused.
	MaxRegistryBytes int64
	// MaxArchiveBytes bounds a downloaded archive (default
	// DefaultMaxArchiveBytes). The download stops at the limit and nothing is
	// installed.
	MaxArchiveBytes int64
	// MaxUnpackedBytes bounds the total size of the files unpacked from one
	// archive (default DefaultMaxUnpackedBytes), which bounds decompression
	// bombs. Unpacking stops at the limit and nothing is installed.
	MaxUnpackedBytes int64
	// MaxArchiveEntries bounds the number of entries in one archive (default
	// DefaultMaxArchiveEntries).
	MaxArchiveEntries int

	// LoadTimeout bounds fetching the registry over the network, from
	// connecting to the last byte of the document (default
	// DefaultLoadTimeout; negative: no bound but ctx). When it passes the
	// fetch has failed, wrapping ErrTimeout: Load returns the cached copy
	// marked Stale, or without one the error.
	LoadTimeout time.Duration
	// StallTimeout bounds how long an archive download may go without
	// receiving a byte, the wait for the response included (default
	// DefaultStallTimeout; negative: no bound but ctx). When it passes the
	// install fails, wrapping ErrTimeout, and nothing is installed. There
	// is no bound on a download's total time: a slow one that keeps making
	// progress is not cut (ctx can).
	StallTimeout time.Duration
}

// Progress is one report of an archive download, for Options.Progress.
type Progress struct {
	Agent *Agent
	URL   string // the archive's URL
	Done  int64  // bytes received so far
	Total int64  // the archive's size when the host says it, else -1
}

// Errors wrapped by the failures they name.
var (
	// ErrInsecureURL: a registry or archive URL (or a redirect) that is
	// neither https nor http to a loopback address.
	ErrInsecureURL = errors.New("registry: registry URLs must be https (or http on loopback)")
	// ErrChecksum: a downloaded archive does not match its sha256.
	ErrChecksum = errors.New("registry: archive checksum mismatch")
	// ErrTimeout: fetching the registry took longer than
	// Options.LoadTimeout, or a download received nothing for
	// Options.StallTimeout.
	ErrTimeout = errors.New("registry: timed out")
	// ErrUnsafeArchive: an archive entry would land outside the install
	// directory (a ".." or absolute path, a link pointing out, a hard link to
	// outside) or is of a kind that has no business in an agent archive.
	ErrUnsafeArchive = errors.New("registry: unsafe archive")
)

func (o *Options) withDefaults() *Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Registry == "" {
		c.Registry = DefaultURL
	}
	if c.HTTPClient == nil {
		c.HTTPClient = defaultClient()
	}
	if c.Platform == "" {
		c.Platform = currentPlatform()
	}
	if c.LookPath == nil {
		c.LookPath = exec.LookPath
	}
	if c.MaxRegistryBytes <= 0 {
		c.MaxRegistryBytes = DefaultMaxRegistryBytes
	}
	if c.MaxArchiveBytes <= 0 {
		c.MaxArchiveBytes = DefaultMaxArchiveBytes
	}
	if c.MaxUnpackedBytes <= 0 {
		c.MaxUnpackedBytes = DefaultMaxUnpackedBytes
	}
	if c.MaxArchiveEntries <= 0 {
		c.MaxArchiveEntries = DefaultMaxArchiveEntries
	}
	if c.LoadTimeout == 0 {
		c.LoadTimeout = DefaultLoadTimeout
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = DefaultStallTimeout
	}
	return &c
}

// cacheDir returns the cache directory, creating nothing.
func (o *Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("registry: no cache directory (set Options.CacheDir): %w", err)
	}
	return filepath.Join(d, "acp"), nil
}

// maxRedirects bounds the redirects one request follows, whatever the
// client's own policy.
const maxRedirects = 10

// httpClient is the configured client with a redirect policy that keeps to
// allowed URLs (see [redirectAllowed]) and follows at most maxRedirects;
// the client's own CheckRedirect, if any, is asked after ours.
func (o *Options) httpClient() *http.Client {
	c := *o.HTTPClient
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := redirectAllowed(via[0].URL, req.URL); err != nil {
			return err
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return &c
}

// redirectAllowed says whether a request that started at orig may be
// redirected to next. A redirect never leaves https: plain http is followed
// only when the original URL was itself http on loopback (a test server, a
// local mirror), and then only to loopback. A request that started at a
// remote host is never redirected to a loopback one, over https either, so
// that a registry or archive host cannot make this machine send requests to
// its own local services. Hosts are judged by name or address as written;
// a remote name that resolves to a loopback address is not caught.
func redirectAllowed(orig, next *url.URL) error {
	origLocal, nextLocal := isLoopback(orig.Hostname()), isLoopback(next.Hostname())
	switch {
	case next.Scheme == "https" && (origLocal || !nextLocal):
		return nil
	case next.Scheme == "http" && orig.Scheme == "http" && origLocal && nextLocal:
		return nil
	}
	return fmt.Errorf("%w: %s redirected to %s", ErrInsecureURL, orig.Redacted(), next.Redacted())
}

// archiveAllowed says whether a registry read from origin (nil: a local
// file or a Parse result, which the caller chose) may name this archive
// URL: https, or http on loopback, and a loopback host only when the
// registry itself is local, for the reason redirectAllowed gives.
func archiveAllowed(origin, u *url.URL) error {
	if err := checkURL(u); err != nil {
		return err
	}
	if origin != nil && !isLoopback(origin.Hostname()) && isLoopback(u.Hostname()) {
		return fmt.Errorf("%w: the registry at %s names an archive on this machine, %s", ErrInsecureURL, origin.Redacted(), u.Redacted())
	}
	return nil
}

// checkURL allows https, and http only to a loopback host (which is how
// tests and local mirrors serve).
func checkURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrInsecureURL, u.Redacted())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
