//go:build windows

package workspace

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func statusOf(ps *os.ProcessState) exitStatus {
	if ps == nil {
		return exitStatus{signaled: true, signal: "unknown"}
	}
	return exitStatus{code: uint32(ps.ExitCode())}
}

// lookCommand finds the executable as cmd.exe would for the command's own
// environment: names with a path separator or a drive are taken relative
// to dir, others are searched in the PATH of env (not of this process);
// a name without one of PATHEXT's extensions gets each in turn. Relative
// PATH entries are skipped, as os/exec does.
func lookCommand(name, dir string, env []string) (string, error) {
	exts := strings.Split(strings.ToLower(envValue(env, "PATHEXT")), ";")
	if envValue(env, "PATHEXT") == "" {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	if strings.ContainsAny(name, `/\:`) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return findExecutable(p, exts)
	}
	for _, d := range filepath.SplitList(envValue(env, "PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		if p, err := findExecutable(filepath.Join(d, name), exts); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// envValue is the value of name in env; names are case-insensitive on
// Windows ("Path" is the usual spelling).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && strings.EqualFold(k, name) {
			v = val
		}
	}
	return v
}

func findExecutable(p string, exts []string) (string, error) {
	if ext := strings.ToLower(filepath.Ext(p)); ext != "" {
		for _, e := range exts {
			if e == ext && isFile(p) {
				return p, nil
			}
		}
	}
	for _, e := range exts {
		if e != "" && isFile(p+e) {
			return p + e, nil
		}
	}
	return "", fs.ErrNotExist
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
