// inittrace_test.go tests the reading of the runtime's init trace.
package inittrace

import "testing"

func TestParse(t *testing.T) {
	out := []byte("init runtime @0.080 ms, 0.10 ms clock, 0 bytes, 0 allocs\n" +
		"init internal/bytealg @0.006 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/acpclient/acp/registry @1.5 ms, 0.057 ms clock, 27040 bytes, 284 allocs\n" +
		"init github.com/acpclient/acp/registry/sub @1.6 ms, 0.001 ms clock, 8 bytes, 1 allocs\n")
	if n, err := parse(out, "github.com/acpclient/acp/registry"); err != nil || n != 27040 {
		t.Errorf("parse = %d, %v; want 27040", n, err)
	}
	if n, err := parse(out, "github.com/acpclient/acp/gateway"); err != nil || n != 0 {
		t.Errorf("parse of a package with no line = %d, %v; want 0 (its init does nothing)", n, err)
	}
	if _, err := parse([]byte("ok\n"), "github.com/acpclient/acp/registry"); err == nil {
		t.Error("parse of output with no trace gave no error")
	}
}

// Bytes reads a real trace: encoding/base64, which the test binary links,
// builds its encodings at init.
func TestBytesReadsATrace(t *testing.T) {
	if n := Bytes(t, "encoding/base64"); n == 0 {
		t.Error("Bytes(encoding/base64) = 0, want the bytes of its encodings")
	}
}
