package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"
)

// TestSchemaPinned checks that the schema copy in schema/ is the one the
// decoders in protocol_gen.go were generated from, and that SchemaVersion
// is the newest release its CHANGELOG names.
func TestSchemaPinned(t *testing.T) {
	b, err := os.ReadFile("schema/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != schemaSHA256 {
		t.Errorf("schema/schema.json has SHA-256 %x; the decoders were generated from %s: run go generate ./...", sum, schemaSHA256)
	}
	log, err := os.ReadFile("schema/CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindSubmatch(log)
	if m == nil {
		t.Fatal("schema/CHANGELOG.md names no release")
	}
	if string(m[1]) != SchemaVersion {
		t.Errorf("schema/CHANGELOG.md names release %s; SchemaVersion is %s", m[1], SchemaVersion)
	}
}
