package schema

// The decoders in protocol_gen.go are generated from the schema copies in
// this directory (see internal/schemagen); SchemaVersion names their
// release.
//go:generate go run ../internal/schemagen -root ..

// The ACP v2 wire types in internal/v2wire are generated from the v2 schema.
//go:generate go run ../internal/schemagen -root .. -v2
