package acp

import (
	"encoding/json"
	"github.com/acpclient/acp/schema"
	"testing"
)

// TestElicitationRequestSchema: a handler's request decodes its schema as
// the wire request does, whether the client served it or a test built it.
func TestElicitationRequestSchema(t *testing.T) {
	r := &schema.CreateElicitationRequest{Mode: schema.ElicitationModeURL, URL: "https://x"}
	if _, err := (&ElicitationRequest{CreateElicitationRequest: r}).Schema(); err == nil {
		t.Error("url mode has a schema, as a handler sees it")
	}
	// A request the client did not serve (a handler's test builds one)
	// decodes its schema.
	form := &ElicitationRequest{CreateElicitationRequest: &schema.CreateElicitationRequest{Mode: schema.ElicitationModeForm,
		RequestedSchema: json.RawMessage(`{"properties":{"n":{"type":"string"}},"required":["n"]}`)}}
	if s, err := form.Schema(); err != nil || len(s.Fields) != 1 || !s.Fields[0].Required {
		t.Errorf("Schema of a request made by hand: %+v, %v", s, err)
	}
}
