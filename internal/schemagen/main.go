// Command schemagen writes the lenient JSON decoders of the module's wire
// types, generated from the pinned ACP schema in schema/: protocol_gen.go
// for package schema, and one file for each other package that has generated
// decoders (outputs in table.go; each row of the type table names its
// package). Run it through `go generate ./...` from the repository root.
//
// The Go types stay hand-written (with their doc comments); the generator
// reads them from source and matches each field, by its json key, to a
// property of the schema's $defs. How a field decodes follows from the
// schema's marks: x-deserialize-default-on-error makes a malformed value
// read as its default, x-deserialize-skip-invalid-items drops the list
// items that do not decode, and required fields without a mark are strict.
// The generator fails on a Go field the schema does not have, a schema
// property with no Go field, and a Go type that cannot hold the property.
//
// Unions (session updates, content blocks, tool call content, resource
// contents, auth methods, MCP servers, config options) get a decoder
// function whose dispatch is read from the schema: the const of the
// discriminator in each oneOf or anyOf branch (an anyOf's one titled branch
// without it is what an absent discriminator means), or, for a union
// without one, the required key each variant has alone. Any other value is
// kept raw in the union's Unknown variant, and a branch that no Go type
// decodes stops the generator.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "the module root")
	v2 := flag.Bool("v2", false, "write the ACP v2 wire types (internal/v2wire) instead")
	flag.Parse()
	if *v2 {
		for file, gen := range map[string]func(string) ([]byte, error){v2OutFile: generateV2, v2UnstableOutFile: generateV2Unstable} {
			out, err := gen(*root)
			if err != nil {
				fmt.Fprintln(os.Stderr, "schemagen:", err)
				os.Exit(1)
			}
			if err := os.WriteFile(filepath.Join(*root, filepath.FromSlash(v2OutDir), file), out, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "schemagen:", err)
				os.Exit(1)
			}
		}
		return
	}
	for _, o := range outputs {
		out, err := generate(*root, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "schemagen:", o.File+":", err)
			os.Exit(1)
		}
		if err := os.WriteFile(filepath.Join(*root, filepath.FromSlash(o.Dir), o.File), out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "schemagen:", err)
			os.Exit(1)
		}
	}
}
