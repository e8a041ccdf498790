package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"
)

// TestSchemaPinned checks that the stable schema copy in schema/ is the one
// the decoders in protocol_gen.go were generated from, and that
// schema/README.md names the release SchemaVersion and SchemaStableThrough
// say.
func TestSchemaPinned(t *testing.T) {
	b, err := os.ReadFile("sdk-2.4.0/v1/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != schemaSHA256 {
		t.Errorf("schema/sdk-2.4.0/v1/schema.json has SHA-256 %x; the decoders were generated from %s: run go generate ./...", sum, schemaSHA256)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{SchemaVersion, SchemaStableThrough} {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).Match(readme) {
			t.Errorf("schema/README.md does not name release %s", v)
		}
	}
}
