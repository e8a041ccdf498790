package registry_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/acpclient/acp"
	"github.com/acpclient/acp/registry"
)

// Listing a registry's agents. Load with a nil *Options reads the official
// registry (cached under the user's cache directory); Registry names a URL
// or a file instead.
func ExampleLoad() {
	reg, err := registry.Load(context.Background(), &registry.Options{Registry: "testdata/registry.json"})
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range reg.Agents {
		fmt.Printf("%s %s (%s)\n", a.ID, a.Version, strings.Join(a.Kinds(), ", "))
	}
	// Output:
	// codex-acp 0.9.2 (binary)
	// gemini 0.27.3 (npx)
	// opencode 1.1.53 (binary)
	// factory-droid 0.56.3 (binary)
}

// Resolving an agent from the official registry and connecting to it.
func ExampleRegistry_Command() {
	ctx := context.Background()
	reg, err := registry.Load(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	cmd, err := reg.Command(ctx, "codex-acp") // downloads on first use
	if err != nil {
		log.Fatal(err)
	}
	client, err := acp.Connect(ctx, &acp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}
