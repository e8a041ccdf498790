package registry

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/acpclient/acp/schema"
)

// Error is how resolving or installing an agent fails: which agent, and
// why (wrapping ErrChecksum, ErrUnsafeArchive, ErrInsecureURL,
// ErrUnsupportedPlatform, schema.ErrLimitExceeded, ...).
type Error struct {
	AgentID string
	Err     error
}

func (e *Error) Error() string {
	return "registry: agent " + strconv.Quote(e.AgentID) + ": " + strings.TrimPrefix(e.Err.Error(), "registry: ")
}

func (e *Error) Unwrap() error { return e.Err }

// limitError is a refusal at one of the package's limits: its message
// starts with the package's prefix and names the limit, and it wraps
// [schema.ErrLimitExceeded] without that error's "acp:" text.
type limitError struct{ msg string }

func limitExceeded(format string, args ...any) error {
	return &limitError{"registry: " + fmt.Sprintf(format, args...)}
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return schema.ErrLimitExceeded }

// withPrefix gives err the package's one "registry:" prefix.
func withPrefix(err error) error {
	if strings.HasPrefix(err.Error(), "registry: ") {
		return err
	}
	return fmt.Errorf("registry: %w", err)
}

func (r *Registry) options() *Options {
	if r.opts == nil { // from Parse
		return (*Options)(nil).withDefaults()
	}
	return r.opts
}

// Command resolves the agent with this id to a command ready to start (for
// example as an acp.CommandTransport's Command). It prefers the agent's
// binary for this platform (installing it first, see [Registry.Install]),
// then npx, then uvx, each only when the tool is on the PATH. The command
// runs the distribution's args, with its env added to this process's
// environment; its working directory is left unset.
//
// With no usable distribution the error wraps [ErrUnsupportedPlatform] and
// says what the agent offers; an unknown id wraps [ErrUnknownAgent].
func (r *Registry) Command(ctx context.Context, id string) (*exec.Cmd, error) {
	a, err := r.Agent(id)
	if err != nil {
		return nil, err
	}
	o := r.options()
	if t, ok := a.Distribution.Binary[o.Platform]; ok {
		exe, err := install(ctx, a, o, t, r.origin)
		if err != nil {
			return nil, &Error{AgentID: a.ID, Err: err}
		}
		return command(exe, t.Args, t.Env), nil
	}
	for _, k := range []struct {
		tool string
		p    *Package
	}{{"npx", a.Distribution.NPX}, {"uvx", a.Distribution.UVX}} {
		if k.p == nil {
			continue
		}
		path, err := o.LookPath(k.tool)
		if err != nil {
			continue
		}
		args := []string{k.p.Package}
		if k.tool == "npx" {
			// npx asks before installing a package unless told not to.
			args = []string{"--yes", k.p.Package}
		}
		return command(path, append(args, k.p.Args...), k.p.Env), nil
	}
	return nil, unsupported(a, o)
}

func command(path string, args []string, env map[string]string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	if len(env) > 0 {
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(env)) {
			cmd.Env = append(cmd.Env, k+"="+env[k])
		}
	}
	return cmd
}

// unsupported explains why no distribution of a fits this machine.
func unsupported(a *Agent, o *Options) error {
	var why []string
	if len(a.Distribution.Binary) > 0 {
		here := o.Platform
		if here == "" {
			here = "this machine has no registry platform name"
		}
		why = append(why, fmt.Sprintf("binaries for %s only (this is %s)", strings.Join(a.Platforms(), ", "), here))
	}
	if a.Distribution.NPX != nil {
		why = append(why, "npx (Node.js), which is not on the PATH")
	}
	if a.Distribution.UVX != nil {
		why = append(why, "uvx (uv), which is not on the PATH")
	}
	return &Error{AgentID: a.ID, Err: fmt.Errorf("%w: it offers %s", ErrUnsupportedPlatform, strings.Join(why, "; "))}
}
