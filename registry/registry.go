package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Distribution kinds, as the registry names them.
const (
	KindBinary = "binary"
	KindNPX    = "npx"
	KindUVX    = "uvx"
)

// Registry is a parsed registry index. Its methods are safe for concurrent
// use; its fields are not to be changed while they run.
type Registry struct {
	// Version is the registry format's version, e.g. "1.0.0".
	Version    string  `json:"version"`
	Agents     []Agent `json:"agents"`
	Extensions []Agent `json:"extensions,omitempty"`

	// Stale is non-nil when the registry was read from the local cache
	// because refreshing it failed; it says why. Resolving agents still
	// works from a stale registry.
	Stale error `json:"-"`

	opts   *Options // with defaults applied; nil for a Parse result
	origin *url.URL // where Load fetched it; nil for a local file or Parse
}

// Agent is one registry entry.
type Agent struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	Icon         string       `json:"icon,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution says how an agent is installed and started. At least one
// field is set.
type Distribution struct {
	// Binary maps a platform name (see [Platform]) to a downloadable archive.
	Binary map[string]BinaryTarget `json:"binary,omitempty"`
	// NPX runs an npm package with `npx`.
	NPX *Package `json:"npx,omitempty"`
	// UVX runs a PyPI package with `uvx`.
	UVX *Package `json:"uvx,omitempty"`
}

// BinaryTarget is a downloadable build for one platform.
type BinaryTarget struct {
	// Archive is the download URL: a .zip, .tar.gz (.tgz), .tar.bz2
	// (.tbz2) or .tar archive, or a bare executable.
	Archive string `json:"archive"`
	// SHA256 is the archive's optional hex SHA-256 digest. When present, a
	// download that does not match is refused.
	SHA256 string `json:"sha256,omitempty"`
	// Cmd is the executable's path inside the unpacked archive, e.g.
	// "./codex-acp".
	Cmd  string            `json:"cmd"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// Package is an npx or uvx distribution.
type Package struct {
	// Package is the package name, optionally with a version
	// ("@google/gemini-cli@0.27.3").
	Package string            `json:"package"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Kinds lists the agent's distribution kinds in the order [Registry.Command]
// prefers them: "binary", "npx", "uvx".
func (a *Agent) Kinds() []string {
	var k []string
	if len(a.Distribution.Binary) > 0 {
		k = append(k, KindBinary)
	}
	if a.Distribution.NPX != nil {
		k = append(k, KindNPX)
	}
	if a.Distribution.UVX != nil {
		k = append(k, KindUVX)
	}
	return k
}

// Platforms lists the platforms the agent's binary distribution covers,
// sorted.
func (a *Agent) Platforms() []string {
	var p []string
	for k := range a.Distribution.Binary {
		p = append(p, k)
	}
	slices.Sort(p)
	return p
}

// Platform returns the registry's name for a Go GOOS/GOARCH pair
// ("linux-x86_64", "darwin-aarch64", "windows-x86_64", ...), or "" when the
// registry has no name for it.
func Platform(goos, goarch string) string {
	var os, arch string
	switch goos {
	case "darwin", "linux", "windows":
		os = goos
	default:
		return ""
	}
	switch goarch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	default:
		return ""
	}
	return os + "-" + arch
}

// currentPlatform is the registry's name for this machine.
func currentPlatform() string { return Platform(runtime.GOOS, runtime.GOARCH) }

// The entry patterns Parse checks, compiled on first use: compiled at
// init they cost every program that links the package (the acp command
// does, for --agent) their compilation and the pages it touches, also
// when it never reads a registry.
var (
	idPattern      = lazyPattern(`^[a-z][a-z0-9-]*$`)
	versionPattern = lazyPattern(`^[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+_-]*$`)
	sha256Pattern  = lazyPattern(`^[a-fA-F0-9]{64}$`)
)

func lazyPattern(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ErrInvalid wraps every error about a registry document or entry that
// breaks the format.
var ErrInvalid = errors.New("registry: invalid registry")

// Parse decodes a registry document and checks each entry: ids and versions
// are used as cache directory names, so they must match the format's
// patterns (an id is lowercase letters, digits and hyphens; a version starts
// with MAJOR.MINOR.PATCH and holds no path separator). Unknown fields are
// ignored, so newer registries still parse. A registry from Parse resolves
// commands with the zero [Options]; use [Load] to choose them.
func Parse(data []byte) (*Registry, error) {
	var r Registry
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if r.Agents == nil {
		return nil, fmt.Errorf("%w: no \"agents\" list", ErrInvalid)
	}
	seen := make(map[string]bool)
	for i := range r.Agents {
		a := &r.Agents[i]
		if err := a.validate(); err != nil {
			return nil, err
		}
		if seen[a.ID] {
			return nil, fmt.Errorf("%w: agent %q listed twice", ErrInvalid, a.ID)
		}
		seen[a.ID] = true
	}
	return &r, nil
}

func (a *Agent) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: agent %q: %s", ErrInvalid, a.ID, fmt.Sprintf(format, args...))
	}
	if !idPattern().MatchString(a.ID) {
		return bad("id must match %s", idPattern())
	}
	if !versionPattern().MatchString(a.Version) {
		return bad("version %q must match %s", a.Version, versionPattern())
	}
	d := a.Distribution
	if len(d.Binary) == 0 && d.NPX == nil && d.UVX == nil {
		return bad("no distribution")
	}
	for p, t := range d.Binary {
		if t.Archive == "" || t.Cmd == "" {
			return bad("binary %s needs archive and cmd", p)
		}
		if t.SHA256 != "" && !sha256Pattern().MatchString(t.SHA256) {
			return bad("binary %s: sha256 is not 64 hex digits", p)
		}
	}
	for kind, p := range map[string]*Package{KindNPX: d.NPX, KindUVX: d.UVX} {
		// A package starting with "-" would be read as an option by npx or uvx.
		if p != nil && (p.Package == "" || strings.HasPrefix(p.Package, "-")) {
			return bad("%s package %q", kind, p.Package)
		}
	}
	return nil
}

// Agent returns the entry with this id, or an error wrapping
// [ErrUnknownAgent].
func (r *Registry) Agent(id string) (*Agent, error) {
	for i := range r.Agents {
		if r.Agents[i].ID == id {
			return &r.Agents[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownAgent, id)
}

// ErrUnknownAgent: the registry has no agent with the id asked for.
var ErrUnknownAgent = errors.New("registry: no such agent in the registry")

// ErrUnsupportedPlatform: the agent has no distribution this machine can
// run (no binary for this platform, and no npx or uvx on the PATH that its
// other distributions need).
var ErrUnsupportedPlatform = errors.New("registry: agent not available for this platform")
