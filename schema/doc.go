// Package schema is the Agent Client Protocol as Go values: every v1 wire
// type (initialize and capabilities, authentication, sessions, modes and
// config options, prompts and content blocks, permission, elicitation,
// fs/* and terminal/*, MCP over ACP), the kinds ACP v2 adds, as one model
// for both versions, the [Update] union an agent sends in session/update,
// the method names, and [Error] with its codes.
//
// It is the layer below the client in package
// github.com/acpclient/acp, which connects, prompts, waits and folds; this
// package only says what the protocol's values are and how they look on
// the wire, and imports nothing of the client. Use it to build requests
// and to read what the agent sent:
//
//	s, err := c.NewSession(ctx, &schema.NewSessionRequest{Cwd: dir})
//	turn, err := s.Prompt(ctx, schema.Text("Why does TestParse fail?"))
//	for u := range turn.Updates() {
//		if m, ok := u.(*schema.AgentMessageChunk); ok {
//			fmt.Print(schema.TextOf(m.Content))
//		}
//	}
//
// Decoding has one front door per direction: [DecodeNotification] turns
// the params of a session/update of either protocol version into a
// [SessionNotification] (an update that does not decode is kept as
// [UnknownUpdate], never mis-decoded into another kind),
// [DecodeInitializeResponse] reads the answer to initialize in the version
// the agent picked, and [DecodeResult] any other result. The decoders are
// lenient where the schema says so (x-deserialize-* marks) and strict
// elsewhere; they are generated (protocol_gen.go) from the JSON schema
// copies kept in this directory, whose release is [SchemaVersion]. v2 is
// read from the generated types of internal/v2wire and mapped onto the
// same model.
//
// Every type is a plain value: safe to copy and to compare with go-cmp,
// holding nothing of a connection. Testing code that reads updates needs
// no agent: decode a recorded line with [DecodeNotification], or build the
// value directly.
//
// Names marked "Unstable:" follow schema.unstable.json or ACP v2 (Preview)
// and may change; api/unstable.txt lists them.
package schema
