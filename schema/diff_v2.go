package schema

import (
	"encoding/json"
	"fmt"
)

// DiffChange is one file-level change of a v2 agent's diff
// ([DiffContent].Changes): Operation is "add", "delete", "modify" (Path
// names the file), "move" or "copy" (OldPath is where it came from), or a
// custom or future operation (kept as sent). FileType ("text", "binary",
// "directory", "symlink", …) and MimeType are "" when unknown. Unstable:
// ACP v2 is in Preview; may change.
type DiffChange struct {
	Operation string          `json:"operation"`
	Path      string          `json:"path,omitempty"`
	OldPath   string          `json:"oldPath,omitempty"`
	FileType  string          `json:"fileType,omitempty"`
	MimeType  string          `json:"mimeType,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// DiffPatch is the renderable text of a v2 agent's diff: Format is
// "git_patch" (git's --patch format with absolute paths and no a/ b/
// prefixes) or a custom format, Text the patch. Unstable: ACP v2 is in
// Preview; may change.
type DiffPatch struct {
	Format string          `json:"format"`
	Text   string          `json:"text"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// decodeDiffV2 maps a v2 diff ({"type":"diff","changes":[…],"patch":…})
// onto DiffContent. changes is required; a change that is not an object
// with an operation, or a known operation without its paths, is dropped
// (x-deserialize-skip-invalid-items); a malformed patch or fileType reads
// as none (x-deserialize-default-on-error). Path is the first change's
// path, so a renderer that only names the file still can.
func decodeDiffV2(raw []byte) (*DiffContent, error) {
	var w struct {
		Changes []json.RawMessage `json:"changes"`
		Patch   json.RawMessage   `json:"patch"`
		Meta    json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, errDecode("diff", err)
	}
	if w.Changes == nil {
		return nil, errMissing("diff", "changes")
	}
	d := &DiffContent{Changes: make([]DiffChange, 0, len(w.Changes))}
	for _, r := range w.Changes {
		if c, ok := decodeDiffChange(r); ok {
			d.Changes = append(d.Changes, c)
		}
	}
	if len(d.Changes) > 0 {
		d.Path = d.Changes[0].Path
	}
	var p struct {
		Format *string         `json:"format"`
		Text   *string         `json:"text"`
		Meta   json.RawMessage `json:"_meta"`
	}
	if len(w.Patch) > 0 && json.Unmarshal(w.Patch, &p) == nil && p.Format != nil && p.Text != nil {
		d.Patch = &DiffPatch{Format: *p.Format, Text: *p.Text, Meta: objectMeta(p.Meta)}
	}
	d.Meta = objectMeta(w.Meta)
	return d, nil
}

func decodeDiffChange(raw json.RawMessage) (DiffChange, bool) {
	var w struct {
		Operation *string         `json:"operation"`
		Path      *string         `json:"path"`
		OldPath   *string         `json:"oldPath"`
		FileType  json.RawMessage `json:"fileType"`
		MimeType  json.RawMessage `json:"mimeType"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Operation == nil {
		return DiffChange{}, false
	}
	c := DiffChange{Operation: *w.Operation, Meta: objectMeta(w.Meta)}
	switch c.Operation {
	case "add", "delete", "modify":
		if w.Path == nil {
			return DiffChange{}, false
		}
	case "move", "copy":
		if w.Path == nil || w.OldPath == nil {
			return DiffChange{}, false
		}
	}
	if w.Path != nil {
		c.Path = *w.Path
	}
	if w.OldPath != nil {
		c.OldPath = *w.OldPath
	}
	_ = json.Unmarshal(w.FileType, &c.FileType) // malformed reads as unknown
	_ = json.Unmarshal(w.MimeType, &c.MimeType)
	return c, true
}

// objectMeta keeps a _meta that is an object; anything else reads as none.
func objectMeta(m json.RawMessage) json.RawMessage {
	if len(m) == 0 || m[0] != '{' || jsonObject(m) != nil {
		return nil
	}
	return rawCopy(m)
}

// marshalDiffV2 writes a v2 diff in its wire shape (no v1 path, oldText,
// newText), so it reads back through decodeDiffV2 unchanged.
func marshalDiffV2(c DiffContent) ([]byte, error) {
	if c.Changes == nil {
		return nil, fmt.Errorf("acp: diff: not a v2 diff")
	}
	return json.Marshal(struct {
		Type    string          `json:"type"`
		Changes []DiffChange    `json:"changes"`
		Patch   *DiffPatch      `json:"patch,omitempty"`
		Meta    json.RawMessage `json:"_meta,omitempty"`
	}{"diff", c.Changes, c.Patch, c.Meta})
}
