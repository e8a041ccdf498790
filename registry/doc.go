// Package registry launches agents listed in the ACP agent registry, the
// index editors resolve agents from (by default [DefaultURL]).
//
// Each entry offers one or more distributions: per-platform "binary"
// archives, an npm package run with npx, or a PyPI package run with uvx.
// [Registry.Command] turns an agent id into an [os/exec.Cmd] for this
// machine, downloading and unpacking a binary on first use into a
// per-version cache under the user's cache directory; later runs use the
// cache without the network.
//
// Everything the registry server and archive hosts send is untrusted: URLs
// must be https (http only to a loopback address), redirects never leave
// https nor lead from a remote host to this machine, a remote registry may
// not name an archive on loopback, archives are checked
// against the sha256 the registry gives, downloads and unpacked sizes are
// bounded (see [Options]), and an archive entry that would land outside the
// install directory (a ".." or absolute path, a link pointing out) fails the
// install with [ErrUnsafeArchive]. A half-done install is never visible: it
// is unpacked into a temporary directory and renamed into place.
//
// Typical use, with an acp.Client:
//
//	reg, err := registry.Load(ctx, nil) // the official registry, cached
//	if err != nil {
//		return err
//	}
//	cmd, err := reg.Command(ctx, "codex-acp")
//	if err != nil {
//		return err
//	}
//	client, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, nil)
//
// [Options.Registry] names another registry, a URL or a local file.
package registry
