package acp

import "encoding/json"

// TEMPORARY: defined in protocol.go on main. This copy only lets the fsterm
// branch compile in isolation; delete it at merge.
type EnvVariable struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}
