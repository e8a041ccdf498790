package schema

import (
	"encoding/json"
	"fmt"
)

// Role is who a piece of content is meant for (Annotations.Audience).
// Unknown values are kept; decoding never fails.
type Role string

const (
	RoleAssistant Role = "assistant"
	RoleUser      Role = "user"
)

// ContentBlock is one piece of content in a prompt, a message chunk or a tool
// call. It is a sealed union, told apart on the wire by "type":
//
//   - *TextContent ("text")
//   - *ImageContent ("image")
//   - *AudioContent ("audio")
//   - *ResourceLink ("resource_link")
//   - *EmbeddedResource ("resource")
//   - *UnknownContent (any other "type"; the raw JSON is kept and re-sent)
//
// Decoding is strict for a known type: a block whose required field is
// missing or of the wrong type fails rather than turning into another
// variant. Optional fields (annotations, uri, mimeType, ...) are lenient.
type ContentBlock interface {
	isContentBlock()
}

func (*TextContent) isContentBlock()      {}
func (*ImageContent) isContentBlock()     {}
func (*AudioContent) isContentBlock()     {}
func (*ResourceLink) isContentBlock()     {}
func (*EmbeddedResource) isContentBlock() {}
func (*UnknownContent) isContentBlock()   {}

// TextContent is a text block. Agents' text SHOULD be rendered as Markdown.
type TextContent struct {
	Text        string          `json:"text"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ImageContent is a base64-encoded image. Sending one in a prompt needs
// promptCapabilities.image.
type ImageContent struct {
	Data        string          `json:"data"`
	MimeType    string          `json:"mimeType"`
	URI         string          `json:"uri,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// AudioContent is base64-encoded audio. Sending it in a prompt needs
// promptCapabilities.audio.
type AudioContent struct {
	Data        string          `json:"data"`
	MimeType    string          `json:"mimeType"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceLink points at a resource the agent can fetch itself. Size is in
// bytes.
type ResourceLink struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	MimeType    string          `json:"mimeType,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// EmbeddedResource carries a resource's contents inline. Sending one in a
// prompt needs promptCapabilities.embeddedContext.
type EmbeddedResource struct {
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// UnknownContent is a content block of a type this package does not know.
// Raw is the whole block as received and is re-sent byte for byte.
type UnknownContent struct {
	Type string
	Raw  json.RawMessage
}

// Annotations are display hints shared with MCP. Every field is optional and
// lenient: a malformed value reads as absent, audience entries that are not
// strings are dropped.
type Annotations struct {
	Audience     []Role          `json:"audience,omitzero"`
	LastModified *string         `json:"lastModified,omitempty"`
	Priority     *float64        `json:"priority,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is the body of an [EmbeddedResource]. The wire has no
// tag: a "text" key makes it text, a "blob" key binary.
//
//   - *TextResourceContents
//   - *BlobResourceContents
//   - *UnknownResourceContents (neither key; the raw JSON is kept)
type ResourceContents interface {
	isResourceContents()
}

func (*TextResourceContents) isResourceContents()    {}
func (*BlobResourceContents) isResourceContents()    {}
func (*UnknownResourceContents) isResourceContents() {}

// TextResourceContents is a text resource.
type TextResourceContents struct {
	URI      string          `json:"uri"`
	Text     string          `json:"text"`
	MimeType string          `json:"mimeType,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// BlobResourceContents is a binary resource; Blob is base64.
type BlobResourceContents struct {
	URI      string          `json:"uri"`
	Blob     string          `json:"blob"`
	MimeType string          `json:"mimeType,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// UnknownResourceContents is a resource body with neither "text" nor "blob".
type UnknownResourceContents struct {
	Raw json.RawMessage
}

// Text returns a text block.
func Text(s string) *TextContent { return &TextContent{Text: s} }

// Image returns an image block; data is base64.
func Image(data, mimeType string) *ImageContent {
	return &ImageContent{Data: data, MimeType: mimeType}
}

// Audio returns an audio block; data is base64.
func Audio(data, mimeType string) *AudioContent {
	return &AudioContent{Data: data, MimeType: mimeType}
}

// Link returns a resource link block.
func Link(uri, name string) *ResourceLink { return &ResourceLink{URI: uri, Name: name} }

// TextResource returns an embedded text resource block, the preferred way to
// give the agent a file's contents as context.
func TextResource(uri, text, mimeType string) *EmbeddedResource {
	return &EmbeddedResource{Resource: &TextResourceContents{URI: uri, Text: text, MimeType: mimeType}}
}

// TextOf returns the text a reader sees in b: a text block's text, the text
// of an embedded text resource, and for a resource link a Markdown link
// ("[name](uri)"; agents' text is Markdown). Images, audio, binary
// resources, unknown blocks and nil (also a nil pointer) have no text and
// give "".
func TextOf(b ContentBlock) string {
	switch b := b.(type) {
	case *TextContent:
		if b != nil {
			return b.Text
		}
	case *EmbeddedResource:
		if b == nil {
			break
		}
		if r, ok := b.Resource.(*TextResourceContents); ok && r != nil {
			return r.Text
		}
	case *ResourceLink:
		if b != nil {
			return "[" + b.Name + "](" + b.URI + ")"
		}
	}
	return ""
}

// ---- encoding ----

// The MarshalJSON methods have value receivers so a variant encodes the same
// whether it is held by value or by pointer. Each writes its discriminator.

func (c TextContent) MarshalJSON() ([]byte, error) {
	type body TextContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"text", body(c)})
}

func (c ImageContent) MarshalJSON() ([]byte, error) {
	type body ImageContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"image", body(c)})
}

func (c AudioContent) MarshalJSON() ([]byte, error) {
	type body AudioContent
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"audio", body(c)})
}

func (c ResourceLink) MarshalJSON() ([]byte, error) {
	type body ResourceLink
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"resource_link", body(c)})
}

func (c EmbeddedResource) MarshalJSON() ([]byte, error) {
	if c.Resource == nil {
		return nil, fmt.Errorf("acp: embedded resource: Resource is nil")
	}
	type body EmbeddedResource
	return json.Marshal(struct {
		Type string `json:"type"`
		body
	}{"resource", body(c)})
}

// MarshalJSON returns Raw unchanged (or a bare {"type":...} when Raw is empty).
func (c UnknownContent) MarshalJSON() ([]byte, error) {
	return marshalRaw(c.Raw, func() ([]byte, error) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{c.Type})
	})
}

// MarshalJSON returns Raw unchanged (or {} when Raw is empty).
func (c UnknownResourceContents) MarshalJSON() ([]byte, error) {
	return marshalRaw(c.Raw, func() ([]byte, error) { return []byte("{}"), nil })
}

// marshalContentBlock encodes a content block; nil is an error rather than a
// null the agent would reject.
func marshalContentBlock(c ContentBlock) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("acp: content block is nil")
	}
	return json.Marshal(c)
}
