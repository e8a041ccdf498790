package traceview_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpclient/acp/traceview"
)

// A trace as acp --trace writes it, rendered to a page (here discarded;
// write it to a file and open it in a browser).
func ExampleRender() {
	trace := `{"t":0.4,"dir":">","msg":{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}}
{"t":9.1,"dir":"<","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}}
this line is not JSON
{"t":9.7,"dir":"<","msg":{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}}
`
	st, err := traceview.Render(io.Discard, strings.NewReader(trace), traceview.Options{Title: "hi"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, %d malformed line, %d session, %d turn\n", st.Frames, st.Malformed, st.Sessions, st.Turns)
	// Output: 3 frames, 1 malformed line, 1 session, 1 turn
}
