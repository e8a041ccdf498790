// This file keeps the README's facts about the repository true: its
// dependency list is go.mod's, and its links stay inside the repository
// and lead somewhere (a file, and a heading when they name one).
package acp_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeDependencies checks that the README's dependency paragraph
// names each direct requirement of go.mod and no other module.
func TestReadmeDependencies(t *testing.T) {
	var want []string
	inBlock := false
	for _, line := range strings.Split(readFile(t, "go.mod"), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) >= 2 && !strings.Contains(line, "// indirect") {
			want = append(want, f[0])
		}
	}
	if len(want) == 0 {
		t.Fatal("go.mod has no direct requirements")
	}
	readme := readFile(t, "README.md")
	start := strings.Index(readme, "Dependencies")
	if start < 0 {
		t.Fatal("README.md has no Dependencies paragraph")
	}
	para, _, _ := strings.Cut(readme[start:], "\n\n")
	var got []string
	for _, m := range regexp.MustCompile("`([a-z0-9.-]+\\.[a-z]+/[^`\\s]+)`").FindAllStringSubmatch(para, -1) {
		got = append(got, m[1])
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("README.md's Dependencies name %q; go.mod's direct requirements are %q", got, want)
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```\n")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#+ (.+)$`)
)

// TestReadmeLinks checks that no link of the README points outside the
// repository (no URL in its prose at all, code aside) and that each link
// of the README and of the pages it sends readers to names a file that
// exists, and a heading of it when it has a #fragment.
func TestReadmeLinks(t *testing.T) {
	prose := inlineCode.ReplaceAllString(fence.ReplaceAllString(readFile(t, "README.md"), ""), "")
	if i := strings.Index(prose, "://"); i >= 0 {
		t.Errorf("README.md's prose holds a URL (%q): links stay inside the repository", prose[max(0, i-30):min(len(prose), i+30)])
	}
	pages := []string{"README.md"}
	for _, p := range movedPages {
		pages = append(pages, "docs/"+p+".md")
	}
	for _, page := range pages {
		text := fence.ReplaceAllString(readFile(t, page), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				if page == "README.md" {
					t.Errorf("README.md links outside the repository: %s", target)
				}
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := filepath.Join(filepath.Dir(page), file)
			if file == "" {
				path = page
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if frag != "" && !slices.Contains(anchors(t, path), frag) {
				t.Errorf("%s links to %s, but %s has no heading #%s", page, target, path, frag)
			}
		}
	}
}

// movedPages are the docs pages that took the README's former content.
var movedPages = []string{"GUARANTEES", "LIMITS", "BENCHMARKS", "COMMAND", "CLIENT", "PROTOCOL", "REGISTRY", "TESTING", "LAYOUT"}

// anchors returns the GitHub anchors of a Markdown file's headings.
func anchors(t *testing.T, path string) []string {
	var out []string
	for _, m := range heading.FindAllStringSubmatch(readFile(t, path), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// apiName is an inline code span that names the Go API: Name, pkg.Name,
// Type.Member or pkg.Type.Member.
var apiName = regexp.MustCompile("`(?:([a-z]+)\\.)?([A-Z]\\w*)(?:\\.([A-Z]\\w*))?`")

// TestReadmeNamesExist checks that each exported name the README and its
// pages write in code (`Turn.Snapshot`, `acp.AllowAll`, `ErrSessionLost`)
// is in the API listings under api/, and each example they name is
// defined, so a rename cannot leave them behind.
func TestReadmeNamesExist(t *testing.T) {
	files, err := filepath.Glob("api/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no API listings under api/: %v", err)
	}
	api := map[string]string{} // package name → its listing
	all := ""
	for _, f := range files {
		text := readFile(t, f)
		api[strings.TrimSuffix(filepath.Base(f), ".txt")] = text
		all += text
	}
	exampleFiles, err := filepath.Glob("*example*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("*/*example*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	examples := ""
	for _, f := range append(exampleFiles, more...) {
		examples += readFile(t, f)
	}
	pages := []string{"README.md"}
	for _, p := range movedPages {
		pages = append(pages, "docs/"+p+".md")
	}
	for _, page := range pages {
		text := fence.ReplaceAllString(readFile(t, page), "")
		for _, m := range apiName.FindAllStringSubmatch(text, -1) {
			pkg, name, member := m[1], m[2], m[3]
			if strings.HasPrefix(name, "Example") {
				if !strings.Contains(examples, "\nfunc "+name+"() {") {
					t.Errorf("%s names %s, which no example_*_test.go defines", page, m[0])
				}
				continue
			}
			if notAPI.MatchString(name) || foreignNames[name] != "" {
				continue
			}
			listing := all
			if pkg != "" {
				l, ok := api[pkg]
				if !ok {
					continue // not a package of this module (cmp.Diff, exec.Cmd)
				}
				listing = l
			}
			if !apiHas(listing, name, member) {
				t.Errorf("%s names %s, which the API listings under api/ do not have", page, m[0])
			}
		}
	}
}

// notAPI are code spans shaped like names that are not Go API: tests,
// benchmarks and examples, environment variables and placeholders.
var notAPI = regexp.MustCompile(`^(Test|Benchmark|Example|Fuzz)|^[A-Z0-9_]+$`)

// foreignNames are names in code that are not this module's API, each
// with what it is.
var foreignNames = map[string]string{
	"CloseWrite":       "a method of the caller's own acp.Conn, found by interface assertion",
	"McpOverAcpCaller": "the TypeScript SDK's class",
}

// apiHas reports whether an API listing declares name, or its member. A
// lone name may be a member too (`LoadSession` for Client.LoadSession).
func apiHas(listing, name, member string) bool {
	if member == "" {
		return regexp.MustCompile(`, ((type|func|const|var) ` + name + `\b|type \w+ (struct|interface), ` + name + `\b|method \(\*?\w+\) ` + name + `\()`).MatchString(listing)
	}
	return regexp.MustCompile(`, (type ` + name + ` (struct|interface), ` + member + `\b|method \(\*?` + name + `\) ` + member + `\()`).MatchString(listing)
}
