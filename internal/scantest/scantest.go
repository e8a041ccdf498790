// Package scantest holds the inputs on which the client's one-pass JSON
// scanners (the wire envelope in internal/engine, the session/update path
// in package acp) are checked against encoding/json: well-formed and
// malformed lines, case and escape variants of the keys, duplicates. The
// tests of both packages range over it, so the corpus is written once.
package scantest

// Seeds are JSON-RPC lines and fragments, valid or not.
var Seeds = []string{
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a\nb \"q\" \u00e9 \ud83d\ude00 \ud800 x"},"messageId":"m\u0031"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"bad ` + "\xff" + ` utf8"},"messageId":42}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":{"priority":1}}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","_meta":{"a":1}},"_meta":{"b":2}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","Text":"case"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","text":"b"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","Content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"SessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s\u0031","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":5}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"text":"no type"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":null}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"Read","status":"pending"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call"}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"notice","x":[1,2,{"y":null}]}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","sessionUpdate":"plan","content":{"type":"text","text":"x"}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"messageId":null,"extra":{"k":[true,false,-1.5e3]}}}}`,
	`{"method":"session/update","params":{"sessionId":"s1"}}`,
	`{"method":"session/update","params":{"sessionId":5,"update":{"sessionUpdate":"plan","entries":[]}}}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":"str"}}`,
	`{"method":"session/update","params":[1]}`,
	`{"method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}},"params":{"sessionId":"s2"}}`,
	`{"Method":"session/update","params":{}}`,
	`{"method":"session\/update","params":{}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`,
	`{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1"}}`,
	`{"id":1,"ID":2}`,
	`{"\u0069d":1}`,
	`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":tru}`, `{"a":[1,]}`, `{"a":{"b":1,}}`,
	`{"a":"` + "\t" + `"}`, `{"a":1}x`, `{"a":1} `, `{"a":[]}`, `{}`, `{`, `{"a"}`, `{"a":1,"b"}`, `[]`, `"x"`, `nul`,
}
