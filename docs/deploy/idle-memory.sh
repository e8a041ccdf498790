#!/usr/bin/env bash
# What idle remote connections cost an `acp serve` backend: the gateway's
# resident memory before and after N connections that initialized and then
# sit idle, and the agent processes they started (one per connection).
#
#   docs/deploy/idle-memory.sh [N] [-- AGENT_COMMAND ...]
#
# N defaults to 20; the agent to the demo agent. Needs a built acp on PATH
# (go build -o ~/go/bin/acp ./examples/acp) and curl. Loopback only.
set -euo pipefail
n=${1:-20}
shift || true
if [ "${1:-}" = "--" ]; then shift; fi
port=18799
ACP_SERVE_TOKEN=idle-memory acp serve --listen 127.0.0.1:$port --max-connections $((n + 1)) -- "$@" >/dev/null 2>&1 &
serve=$!
trap 'kill $serve 2>/dev/null; wait $serve 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
	sleep 0.05
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
before=$(rss $serve)
for _ in $(seq "$n"); do
	curl -fsS -o /dev/null -H 'Authorization: Bearer idle-memory' -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' \
		"http://127.0.0.1:$port/acp"
done
after=$(rss $serve)
procs=0 kb=0
for p in $(pgrep -P $serve); do
	procs=$((procs + 1)) kb=$((kb + $(rss "$p")))
done
echo "$n idle connections: gateway ${before} kB -> ${after} kB ($(((after - before) / n)) kB each);" \
	"$procs processes under it, ${kb} kB ($((kb / n)) kB per connection: the agent and its shutdown watchdog)"
