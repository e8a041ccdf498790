package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The generator still reads some definitions from the 1.21.0 unstable schema
// (internal/schemagen/frozen.json) because the SDK's v1 schema dropped them.
// For NES and document sync the SDK ships a zod snapshot instead
// (experimental/nes, "frozen from schema-v1.25.0"): every object there must
// have the same properties, and the same required ones, as the 1.21.0
// definition of its name, so the 1.21.0 JSON (with the x-deserialize marks
// the generator needs and the zod code lacks) still describes what the SDK
// speaks. MCP-over-ACP is not frozen: the package speaks the request-scoped
// binding the pinned SDK schema defines, so no MCP definition may be frozen
// or replaced, and the pinned ones must have the shape the package decodes.
func TestFrozenDefsMatchTheSDK(t *testing.T) {
	npm := needTool(t, "npm")
	node := needTool(t, "node")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript SDK failed: %v", npmErr)
	}
	var frozen struct {
		From    string   `json:"from"`
		Replace []string `json:"replace"`
		Defs    []string `json:"defs"`
	}
	readJSON(t, filepath.Join("..", "internal", "schemagen", "frozen.json"), &frozen)
	var old struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"$defs"`
	}
	readJSON(t, filepath.Join("..", filepath.FromSlash(frozen.From)), &old)

	cmd := exec.Command(node, "nes_shapes.mjs")
	cmd.Dir = tsagentDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node nes_shapes.mjs: %v", err)
	}
	var sdk map[string]struct {
		Type     string   `json:"type"`
		Keys     []string `json:"keys"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(out, &sdk); err != nil {
		t.Fatalf("nes_shapes.mjs printed %.200s: %v", out, err)
	}
	checked := 0
	for _, name := range frozen.Defs {
		z, ok := sdk[name]
		if strings.Contains(name, "Mcp") {
			t.Errorf("frozen.json keeps %s from %s; MCP-over-ACP comes from the pinned SDK schema", name, frozen.From)
			continue
		}
		if !ok {
			t.Errorf("frozen.json keeps %s for NES or document sync, but the SDK's NES snapshot has no such schema", name)
			continue
		}
		d := old.Defs[name]
		if z.Keys == nil {
			continue // not an object (an enum, a union, an id)
		}
		keys := make([]string, 0, len(d.Properties))
		for k := range d.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		req := slices.Sorted(slices.Values(d.Required))
		if diff := cmp.Diff(keys, z.Keys); diff != "" {
			t.Errorf("%s: properties differ (-1.21.0 +SDK snapshot):\n%s", name, diff)
		}
		if diff := cmp.Diff(req, z.Required, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: required properties differ (-1.21.0 +SDK snapshot):\n%s", name, diff)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("compared only %d object definitions; the NES snapshot moved?", checked)
	}
	if len(frozen.Replace) != 0 {
		t.Errorf("frozen.json replaces %v from %s: nothing the pinned SDK schema has needs the old shape now", frozen.Replace, frozen.From)
	}
	// The request-scoped binding of the pinned schema (1.24.1): mcp/message
	// names a server and an inner request, no connection.
	var pinned struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"$defs"`
	}
	readJSON(t, filepath.Join("..", "schema", "sdk-2.4.0", "v1", "schema.unstable.json"), &pinned)
	for _, name := range []string{"MessageMcpRequest", "MessageMcpNotification"} {
		if got := slices.Sorted(slices.Values(pinned.Defs[name].Required)); !slices.Equal(got, []string{"method", "requestId", "serverId"}) {
			t.Errorf("pinned %s requires %v, want method, requestId, serverId", name, got)
		}
	}
	for _, name := range []string{"ConnectMcpRequest", "DisconnectMcpRequest", "McpConnectionId"} {
		if _, ok := pinned.Defs[name]; ok {
			t.Errorf("the pinned schema has %s again: the connection-scoped binding is back?", name)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
