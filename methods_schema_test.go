package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"os"
	"slices"
	"testing"
)

// methodsNamed is every Method* constant: the methods this package speaks.
var methodsNamed = []string{
	schema.MethodInitialize, schema.MethodAuthenticate, schema.MethodSessionNew, schema.MethodSessionLoad, schema.MethodSessionResume,
	schema.MethodSessionList, schema.MethodSessionClose, schema.MethodSessionDelete, schema.MethodSessionSetMode,
	schema.MethodSessionSetConfigOption, schema.MethodSessionPrompt, schema.MethodLogout, schema.MethodSessionCancel,
	schema.MethodSessionUpdate, schema.MethodElicitationComplete, schema.MethodSessionRequestPermission,
	schema.MethodFSReadTextFile, schema.MethodFSWriteTextFile, schema.MethodTerminalCreate, schema.MethodTerminalOutput,
	schema.MethodTerminalRelease, schema.MethodTerminalWaitForExit, schema.MethodTerminalKill, schema.MethodElicitationCreate,
	schema.MethodCancelRequest, schema.MethodSessionFork, schema.MethodNESStart, schema.MethodNESSuggest, schema.MethodNESAccept,
	schema.MethodNESReject, schema.MethodNESClose, schema.MethodDocumentDidOpen, schema.MethodDocumentDidChange,
	schema.MethodDocumentDidClose, schema.MethodDocumentDidSave, schema.MethodDocumentDidFocus,
	schema.MethodMCPMessage,
	schema.MethodSessionArchive, schema.MethodSessionUnarchive, schema.MethodSessionStatus, schema.MethodSessionSetTitle,
	schema.MethodAuthStatus, schema.MethodAuthStatusUpdate,
}

// methodsUntyped are the schema's methods with no constant (and no typed
// call), each with the reason; Client.Call reaches any of them.
var methodsUntyped = map[string]string{
	"providers/list":    "unstable LLM provider selection: no agent sends it here yet; reachable through Client.Call",
	"providers/set":     "unstable LLM provider selection: reachable through Client.Call",
	"providers/disable": "unstable LLM provider selection: reachable through Client.Call",
	"proxy/initialize":  "between a proxy and its conductor (proxy chains), not a client's method",
	"proxy/successor":   "between a proxy and its conductor (proxy chains), not a client's method",
}

// TestEverySchemaMethodNamed reads the method names (x-method) of the
// pinned v1 schemas and of the 1.21.0 definitions the generator still
// reads (what meta.json used to list), and checks that each is a Method*
// constant or in methodsUntyped with a reason — and that neither list
// names a method no schema has.
func TestEverySchemaMethodNamed(t *testing.T) {
	var frozen struct {
		Defs []string `json:"defs"`
	}
	if b, err := os.ReadFile("internal/schemagen/frozen.json"); err != nil || json.Unmarshal(b, &frozen) != nil {
		t.Fatalf("frozen.json: %v", err)
	}
	inSchema := map[string]bool{}
	for _, path := range []string{"schema/sdk-2.4.0/v1/schema.json", "schema/sdk-2.4.0/v1/schema.unstable.json", "schema/1.21.0/schema.unstable.json"} {
		old := path == "schema/1.21.0/schema.unstable.json" // only what frozen.json takes from it
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Defs map[string]struct {
				Method string `json:"x-method"`
			} `json:"$defs"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for name, d := range s.Defs {
			if old && !slices.Contains(frozen.Defs, name) {
				continue
			}
			if d.Method != "" {
				inSchema[d.Method] = true
			}
		}
	}
	if len(inSchema) < 40 {
		t.Fatalf("read only %d methods from the schemas", len(inSchema))
	}
	for m := range inSchema {
		_, untyped := methodsUntyped[m]
		if named := slices.Contains(methodsNamed, m); named == untyped {
			t.Errorf("method %s: named %v, in methodsUntyped %v; want exactly one", m, named, untyped)
		}
	}
	for _, m := range methodsNamed {
		if !inSchema[m] && m != schema.MethodSessionSetModel {
			t.Errorf("Method constant %q is in no pinned schema", m)
		}
	}
	for m, why := range methodsUntyped {
		if !inSchema[m] || why == "" {
			t.Errorf("methodsUntyped[%q]: in no pinned schema, or no reason", m)
		}
	}
}
