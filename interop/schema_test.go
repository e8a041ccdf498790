package interop

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The schemas pinned in ../schema/sdk-2.4.0 are the ones the TypeScript SDK
// installed here ships, byte for byte: bumping the SDK in
// tsagent/package-lock.json without re-pinning the schemas (or the other
// way round) fails here, naming the file and its first differing lines.
func TestPinnedSchemasMatchTheSDK(t *testing.T) {
	npm := needTool(t, "npm")
	npmOnce.Do(func() { npmErr = installTSAgent(npm) })
	if npmErr != nil {
		t.Fatalf("installing the TypeScript SDK failed: %v", npmErr)
	}
	sdk := filepath.Join(tsagentDir, "node_modules", "@agentclientprotocol", "sdk", "schema")
	for _, f := range []string{"v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"} {
		pinned, err := os.ReadFile(filepath.Join("..", "schema", "sdk-2.4.0", f))
		if err != nil {
			t.Fatal(err)
		}
		shipped, err := os.ReadFile(filepath.Join(sdk, f))
		if err != nil {
			t.Fatalf("the installed SDK has no %s: %v", f, err)
		}
		if !bytes.Equal(pinned, shipped) {
			d := cmp.Diff(string(pinned), string(shipped))
			if len(d) > 4000 {
				d = d[:4000] + "\n…"
			}
			t.Errorf("schema/sdk-2.4.0/%s differs from the installed SDK's (-pinned +SDK):\n%s", f, d)
		}
	}
}
