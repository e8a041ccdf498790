package acp

// The decoders in protocol_gen.go are generated from the schema copy in
// schema/ (see internal/schemagen); SchemaVersion names its release.
//go:generate go run ./internal/schemagen
