package acp

import (
	"bytes"
	"encoding/json"
	"flag"
	"reflect"

	"github.com/acpclient/acp/schema"
	"github.com/google/go-cmp/cmp"
)

// testDecodeUpdate decodes one v1 update object through the protocol's
// front door, as the client's reader does.
func testDecodeUpdate(raw []byte) (schema.Update, error) {
	n, err := schema.DecodeNotification(1, []byte(`{"sessionId":"s","update":`+string(raw)+`}`))
	return n.Update, err
}

// update rewrites golden files: the expected states in testdata/turns/*.txtar.
var update = flag.Bool("update", false, "rewrite golden files in testdata")

// rawCmp makes cmp compare raw JSON by meaning (key order, spacing and
// escapes do not matter; numbers are compared as written).
var rawCmp = cmp.Comparer(func(a, b json.RawMessage) bool {
	va, ea := decodeAnyJSON(a)
	vb, eb := decodeAnyJSON(b)
	if ea != nil || eb != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(va, vb)
})

func decodeAnyJSON(b []byte) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}
