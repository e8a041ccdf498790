package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Load reads the registry that opts name (nil: the official one).
//
// A local file is read as is. A URL is fetched with a conditional request
// (If-None-Match and If-Modified-Since from the cached copy's ETag and
// Last-Modified) and the response cached under the cache directory; a
// "304 Not Modified" reuses the cached copy. Validators longer than 1 KiB
// or not of their syntax are not stored, and a conditional request the
// server refuses (a 4xx other than 429) is sent once more without them, so
// that a server cannot freeze the client at its cached copy. When the
// fetch fails (no
// network, a server error, a document that does not parse) and a cached
// copy exists, Load returns it with [Registry.Stale] set to the failure;
// without a cached copy it returns the failure. A response is cached only
// after it parses. The fetch is bounded by [Options.LoadTimeout] (30 s by
// default); passing it is such a failure, wrapping [ErrTimeout].
//
// Load is safe to call concurrently, also from several processes: the cache
// files are replaced atomically.
func Load(ctx context.Context, opts *Options) (*Registry, error) {
	o := opts.withDefaults()
	u, err := url.Parse(o.Registry)
	if err != nil || len(u.Scheme) < 2 { // "C:\..." parses with scheme "c"
		return loadFile(o.Registry, o)
	}
	if u.Scheme == "file" {
		p := u.Path
		if runtime.GOOS == "windows" && len(p) > 2 && p[0] == '/' && p[2] == ':' {
			p = p[1:] // file:///C:/x
		}
		return loadFile(filepath.FromSlash(p), o)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	return loadURL(ctx, u, o)
}

func loadFile(path string, o *Options) (*Registry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("registry: reading the registry: %w", err)
	}
	defer f.Close()
	data, err := readLimited(f, o.MaxRegistryBytes, "the registry is")
	if err != nil {
		return nil, err
	}
	r, err := Parse(data)
	if err != nil {
		return nil, err
	}
	r.opts = o
	return r, nil
}

// readLimited reads r whole, or fails wrapping [schema.ErrLimitExceeded] when
// it holds more than max bytes.
func readLimited(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, limitExceeded("%s larger than MaxRegistryBytes (%d bytes)", what, max)
	}
	return data, nil
}

// cacheEntry is a cached registry document with what a conditional request
// needs; one file, so that the validators and the body always match.
type cacheEntry struct {
	URL          string          `json:"url"`
	ETag         string          `json:"etag,omitempty"`
	LastModified string          `json:"lastModified,omitempty"`
	Body         json.RawMessage `json:"body"`
}

// maxValidatorBytes bounds a cached ETag or Last-Modified: each is sent
// back with every refresh, so one the server should never have sent (a
// megabyte ETag, answered 431 forever after) would otherwise freeze the
// registry at the cached copy. Real validators are tens of bytes.
const maxValidatorBytes = 1 << 10

// dropBadValidators forgets an ETag or Last-Modified that is too long or
// not of its syntax (RFC 9110 8.8.3, an HTTP date), so it is never sent.
func (e *cacheEntry) dropBadValidators() {
	if !validETag(e.ETag) {
		e.ETag = ""
	}
	if _, err := http.ParseTime(e.LastModified); err != nil || len(e.LastModified) > maxValidatorBytes {
		e.LastModified = ""
	}
}

// validETag reports whether s is an entity tag: W/ optionally, then a
// quoted string of etagc characters (no '"', no controls or spaces).
func validETag(s string) bool {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || len(s) > maxValidatorBytes || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; c == '"' || c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// refused reports a client-error answer, as a server gives to a
// conditional request it will not take; 429 (slow down) is not retried.
func refused(resp *http.Response) bool {
	return resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests
}

// get sends the registry request, conditional on the validators given.
func get(ctx context.Context, u *url.URL, o *Options, validators cacheEntry) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if validators.ETag != "" {
		req.Header.Set("If-None-Match", validators.ETag)
	}
	if validators.LastModified != "" {
		req.Header.Set("If-Modified-Since", validators.LastModified)
	}
	return o.httpClient().Do(req)
}

func loadURL(ctx context.Context, u *url.URL, o *Options) (*Registry, error) {
	dir, err := o.cacheDir()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(u.String()))
	path := filepath.Join(dir, "registry", hex.EncodeToString(sum[:8])+".json")

	var entry cacheEntry
	cacheErr := errNoCache
	if b, err := os.ReadFile(path); err == nil {
		if cacheErr = json.Unmarshal(b, &entry); cacheErr == nil && entry.URL != u.String() {
			cacheErr = errNoCache
		}
		entry.dropBadValidators() // a cache written before they were checked
	}
	fromCache := func(fetchErr error) (*Registry, error) {
		if cacheErr != nil {
			return nil, fetchErr
		}
		r, err := Parse(entry.Body)
		if err != nil {
			return nil, fmt.Errorf("%w (and the cached copy: %v)", fetchErr, err)
		}
		r.opts, r.origin, r.Stale = o, u, fetchErr
		return r, nil
	}

	var validators cacheEntry
	if cacheErr == nil {
		validators = entry
	}
	// The timeout is the fetch's, not the caller's: when it passes, the
	// cached copy is still used.
	fctx := ctx
	if d := o.LoadTimeout; d > 0 {
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeoutCause(ctx, d, fmt.Errorf("%w: fetching %s took longer than LoadTimeout (%v)", ErrTimeout, u.Redacted(), d))
		defer cancel()
	}
	timedOut := func(err error) error {
		if ctx.Err() == nil && fctx.Err() != nil {
			return context.Cause(fctx)
		}
		return err
	}
	resp, err := get(fctx, u, o, validators)
	if err == nil && refused(resp) && (validators.ETag != "" || validators.LastModified != "") {
		// A server that refuses the validators it gave (a 412, or a 431
		// for one it should never have sent) would otherwise keep this
		// client on the stale copy for good: ask once more without them.
		resp.Body.Close()
		resp, err = get(fctx, u, o, cacheEntry{})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return fromCache(timedOut(withPrefix(fetchError(u, err))))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && cacheErr == nil:
		r, err := Parse(entry.Body)
		if err != nil {
			return nil, err
		}
		r.opts, r.origin = o, u
		return r, nil
	case resp.StatusCode != http.StatusOK:
		return fromCache(fmt.Errorf("registry: fetching %s: %s", u.Redacted(), resp.Status))
	}
	data, err := readLimited(resp.Body, o.MaxRegistryBytes, "the registry is")
	if err == nil && fctx.Err() != nil {
		// A canceled read can end in a clean EOF (the server saw the
		// connection close and ended the body): a body read past the
		// deadline may be cut short, so it is not used.
		err = fctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return fromCache(timedOut(withPrefix(err)))
	}
	r, err := Parse(data)
	if err != nil {
		return fromCache(err)
	}
	r.opts, r.origin = o, u
	fresh := cacheEntry{URL: u.String(), ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Body: data}
	fresh.dropBadValidators()
	b, err := json.Marshal(fresh)
	if err == nil && os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		// A failed write only costs the next run a full download.
		_ = writeFileAtomic(path, b)
	}
	return r, nil
}

// writeFileAtomic replaces path with data so that readers see the old or
// the new content, never a part.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

var errNoCache = errors.New("registry: no cached registry")
