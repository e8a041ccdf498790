package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// The cost of the gateway on one long turn: 100 000 agent_message_chunk
// updates and the response, from the in-process acptest agent, read by a
// client over an SSE stream and over a WebSocket (loopback TCP, both).
//
//	go test -run '^$' -bench Turn -benchtime 3x ./gateway
const benchChunks = 100_000

func BenchmarkTurnSSE(b *testing.B) {
	d := newPipeDial(b, nil)
	_, u := start(b, d.Dial, nil)
	for b.Loop() {
		c := &client{t: b, url: u}
		c.initialize()
		conn := c.open("")
		sid := newSession(b, c, conn, 1)
		sess := c.open(sid)
		c.post(sid, prompt(2, sid, fmt.Sprint("chunks ", benchChunks)))
		n := 0
		for m := range sess.ch {
			if isResponse(2)(m) {
				break
			}
			n++
		}
		if n != benchChunks {
			b.Fatalf("%d chunks", n)
		}
		c.do("DELETE", "", "")
	}
	b.ReportMetric(float64(benchChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

func BenchmarkTurnWebSocket(b *testing.B) {
	d := newPipeDial(b, nil)
	_, u := start(b, d.Dial, nil)
	for b.Loop() {
		c, err := dialWS(b, u, nil)
		if err != nil {
			b.Fatal(err)
		}
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		c.until(isResponse(0))
		c.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
		sid := result(c.until(isResponse(1)))["sessionId"].(string)
		c.send(prompt(2, sid, fmt.Sprint("chunks ", benchChunks)))
		n := 0
		for {
			m, err := c.recv()
			if err != nil {
				b.Fatal(err)
			}
			if isResponse(2)(m) {
				break
			}
			n++
		}
		if n != benchChunks {
			b.Fatalf("%d chunks", n)
		}
		c.ws.CloseNow()
	}
	b.ReportMetric(float64(benchChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// The floor: the same turn read straight from the agent's stdio (in-process
// pipes), each line decoded as the SSE and WebSocket clients above decode
// theirs.
func BenchmarkTurnStdio(b *testing.B) {
	d := newPipeDial(b, nil)
	for b.Loop() {
		conn, _ := d.Dial(context.Background())
		br := bufio.NewReaderSize(conn, 64<<10)
		next := func() map[string]any {
			line, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				b.Fatal(err)
			}
			return m
		}
		fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		next()
		fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
		sid := result(next())["sessionId"].(string)
		fmt.Fprintln(conn, prompt(2, sid, fmt.Sprint("chunks ", benchChunks)))
		n := 0
		for m := next(); !isResponse(2)(m); m = next() {
			n++
		}
		if n != benchChunks {
			b.Fatalf("%d chunks", n)
		}
		conn.Close()
	}
	b.ReportMetric(float64(benchChunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// What an open, idle ACP connection costs the process: gateway, its
// in-process agent and the test client together (heap in use and
// goroutines per connection, 500 connections each with its connection
// stream open).
//
//	go test -run '^$' -bench IdleConnections -benchtime 1x ./gateway
func BenchmarkIdleConnections(b *testing.B) {
	const n = 500
	for b.Loop() {
		d := newPipeDial(b, nil)
		g, u := start(b, d.Dial, &Options{MaxConnections: n})
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		goroutines := runtime.NumGoroutine()
		for range n {
			c := &client{t: b, url: u}
			c.initialize()
			c.open("")
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "heap-bytes/conn")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/n, "goroutines/conn")
		g.Close()
	}
}
