package acp

// The decoders in protocol_gen.go are generated from the schema copy in
// schema/ (see internal/schemagen); SchemaVersion names its release.
//go:generate go run ./internal/schemagen

// The ACP v2 wire types in internal/v2wire are generated from the v2 schema.
//go:generate go run ./internal/schemagen -v2
