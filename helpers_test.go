package acp_test

import (
	"testing"

	"github.com/acpclient/acp/acptest"
	"github.com/acpclient/acp/schema"
)

func TestTextOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    schema.ContentBlock
		want string
	}{
		{"text", schema.Text("hello"), "hello"},
		{"embedded text", schema.TextResource("file:///a.go", "package a", "text/x-go"), "package a"},
		{"link", schema.Link("file:///a.go", "a.go"), "[a.go](file:///a.go)"},
		{"embedded blob", &schema.EmbeddedResource{Resource: &schema.BlobResourceContents{URI: "file:///a.png", Blob: "AAAA"}}, ""},
		{"embedded unknown", &schema.EmbeddedResource{Resource: &schema.UnknownResourceContents{}}, ""},
		{"image", schema.Image("AAAA", "image/png"), ""},
		{"audio", schema.Audio("AAAA", "audio/wav"), ""},
		{"unknown", &schema.UnknownContent{Type: "video"}, ""},
		{"nil", nil, ""},
		{"nil text", (*schema.TextContent)(nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := schema.TextOf(tc.b); got != tc.want {
				t.Errorf("TextOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiffContentUnified(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name    string
		d       schema.DiffContent
		context int
		want    string
	}{
		{
			name:    "modified",
			d:       schema.DiffContent{Path: "/w/a.txt", OldText: str("1\n2\n3\n4\n5\n"), NewText: "1\n2\nthree\n4\n5\n"},
			context: 1,
			want:    "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n",
		},
		{
			name:    "default context",
			d:       schema.DiffContent{Path: "/w/a.txt", OldText: str("1\n2\n3\n4\n5\n"), NewText: "1\n2\nthree\n4\n5\n"},
			context: -1,
			want:    "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1,5 +1,5 @@\n 1\n 2\n-3\n+three\n 4\n 5\n",
		},
		{
			name: "new file",
			d:    schema.DiffContent{Path: "/w/new.go", NewText: "package w\n"},
			want: "--- /dev/null\n+++ b/w/new.go\n@@ -0,0 +1 @@\n+package w\n",
		},
		{
			name: "new empty file",
			d:    schema.DiffContent{Path: "/w/empty", NewText: ""},
			want: "",
		},
		{
			name: "content deleted",
			d:    schema.DiffContent{Path: "/w/a.txt", OldText: str("x\ny\n"), NewText: ""},
			want: "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1,2 +0,0 @@\n-x\n-y\n",
		},
		{
			name: "no final newline",
			d:    schema.DiffContent{Path: "rel.txt", OldText: str("a"), NewText: "b"},
			want: "--- a/rel.txt\n+++ b/rel.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
		},
		{
			name: "unchanged",
			d:    schema.DiffContent{Path: "/w/a.txt", OldText: str("same\n"), NewText: "same\n"},
			want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Unified(tc.context); got != tc.want {
				t.Errorf("Unified(%d) =\n%s\nwant\n%s", tc.context, got, tc.want)
			}
			if got := (&tc.d).Unified(tc.context); got != tc.want {
				t.Errorf("through a pointer: %q", got)
			}
		})
	}
}

// The getters return the agent's initialize answer and its capabilities.
func TestClientInitializeGetters(t *testing.T) {
	c, _ := acptest.Connect(t, &acptest.Options{AgentInfo: map[string]any{"name": "x", "version": "1"}}, nil)
	if got := c.InitializeResponse(); got.AgentInfo == nil || got.AgentInfo.Name != "x" {
		t.Errorf("InitializeResponse() = %+v", got)
	}
	if !c.InitializeResponse().AgentCapabilities.LoadSession {
		t.Errorf("AgentCapabilities() = %+v; want loadSession", c.InitializeResponse().AgentCapabilities)
	}
}
