// ACP interop client on the official TypeScript SDK's remote transports
// (experimental/http-client and experimental/ws-client), for testing the Go
// gateway: `node client.mjs URL http|ws SCENARIO [TOKEN]`. It runs one
// scenario against the agent behind URL (agent.mjs, through the gateway)
// and prints one JSON line: {"scenario":...,"ok":true,...facts} or
// {"scenario":...,"ok":false,"error":...}. Exit status 0 either way, 2 on
// bad arguments.
//
// Scenarios (see ../README.md for what agent.mjs does with each prompt):
//   text        session/new, prompt "hello": the chunks and stop reason
//   permission  prompt "permission", answer allow-once: the agent's report
//   cancel      prompt "cancel", session/cancel, answer the pending
//               permission cancelled: stop reason and reports
//   load        session/new on one connection, close it, reconnect with a
//               new stream and session/load: the replayed history
//   error       prompt "error": the JSON-RPC error; a prompt for an unknown
//               session: its error
//   unauthorized  connect without the token: the transport's error

import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream, MemoryAcpCookieStore } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const { client, methods } = acp;
const [url, profile, scenario, token] = process.argv.slice(2);
if (!url || !["http", "ws"].includes(profile) || !scenario) {
  process.stderr.write("usage: node client.mjs URL http|ws SCENARIO [TOKEN]\n");
  process.exit(2);
}

const cookieStore = new MemoryAcpCookieStore();
function stream(withToken = true) {
  const headers = withToken && token ? { Authorization: `Bearer ${token}` } : {};
  if (profile === "http") {
    return createHttpStream(url, { headers, cookieStore });
  }
  return createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket, headers, cookieStore });
}

// connect opens a client connection whose permission answers and updates
// the scenario controls.
function connect(state, withToken = true) {
  const app = client({ name: "acp-interop-tsclient" })
    .onNotification(methods.client.session.update, ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "user_message_chunk") {
        state.chunks.push(`${u.sessionUpdate === "user_message_chunk" ? "user" : "agent"}:${u.content?.text}`);
      }
      state.onUpdate?.(u);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      state.permissions.push(params.toolCall?.toolCallId);
      return await state.answerPermission(params);
    });
  return app.connect(stream(withToken));
}

function newState() {
  return { chunks: [], permissions: [], answerPermission: async () => ({ outcome: { outcome: "cancelled" } }) };
}

async function init(conn) {
  return await conn.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
}

async function newSession(conn) {
  return (await conn.agent.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] })).sessionId;
}

function prompt(conn, sessionId, text) {
  return conn.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

const scenarios = {
  // `flood`: one turn of the agent's `flood 100000` (TSAGENT_QUIET=1 on the
  // server), timed from the prompt to its answer inside this process, for
  // BenchmarkTSClientFlood100k: the SDK's client beside ours on one server.
  async flood() {
    const st = newState();
    let updates = 0;
    st.onUpdate = () => { updates++; };
    const conn = connect(st);
    await init(conn);
    const sid = await newSession(conn);
    const start = process.hrtime.bigint();
    const res = await prompt(conn, sid, "flood 100000");
    const ns = Number(process.hrtime.bigint() - start);
    conn.close();
    return { stopReason: res.stopReason, updates, ns };
  },
  async text() {
    const st = newState();
    const conn = connect(st);
    await init(conn);
    const sid = await newSession(conn);
    const res = await prompt(conn, sid, "hello");
    conn.close();
    return { sessionId: sid, stopReason: res.stopReason, chunks: st.chunks };
  },
  async permission() {
    const st = newState();
    st.answerPermission = async () => ({ outcome: { outcome: "selected", optionId: "allow-once" } });
    const conn = connect(st);
    await init(conn);
    const sid = await newSession(conn);
    const res = await prompt(conn, sid, "permission");
    conn.close();
    return { stopReason: res.stopReason, chunks: st.chunks, permissions: st.permissions };
  },
  async cancel() {
    const st = newState();
    let answer;
    const asked = new Promise((resolve) => {
      st.answerPermission = () => new Promise((r) => { answer = r; resolve(); });
    });
    const conn = connect(st);
    await init(conn);
    const sid = await newSession(conn);
    const turn = prompt(conn, sid, "cancel");
    await asked;
    await conn.agent.notify(methods.agent.session.cancel, { sessionId: sid });
    answer({ outcome: { outcome: "cancelled" } });
    const res = await turn;
    conn.close();
    return { stopReason: res.stopReason, chunks: st.chunks };
  },
  async load() {
    const st1 = newState();
    const first = connect(st1);
    const caps = await init(first);
    const sid = await newSession(first);
    first.close();
    await first.closed;
    const st2 = newState();
    const second = connect(st2);
    await init(second);
    await second.agent.request(methods.agent.session.load, { sessionId: sid, cwd: "/tmp", mcpServers: [] });
    const res = await prompt(second, sid, "after load");
    second.close();
    return { loadSession: caps.agentCapabilities?.loadSession === true, sessionId: sid, chunks: st2.chunks, stopReason: res.stopReason };
  },
  async error() {
    const st = newState();
    const conn = connect(st);
    await init(conn);
    const sid = await newSession(conn);
    const out = {};
    try {
      await prompt(conn, sid, "error");
      out.prompt = "resolved";
    } catch (e) {
      out.promptError = { code: e.code, data: e.data };
    }
    try {
      await prompt(conn, "no-such-session", "x");
      out.unknown = "resolved";
    } catch (e) {
      out.unknownError = { code: e.code };
    }
    out.chunks = st.chunks;
    conn.close();
    return out;
  },
  async unauthorized() {
    const conn = connect(newState(), false);
    try {
      await init(conn);
      return { connected: true };
    } catch (e) {
      return { connected: false, message: String(e?.message ?? e) };
    }
  },
};

const run = scenarios[scenario];
if (!run) {
  process.stderr.write(`unknown scenario ${scenario}\n`);
  process.exit(2);
}
const timer = setTimeout(() => {
  console.log(JSON.stringify({ scenario, ok: false, error: "timed out after 30s" }));
  process.exit(0);
}, 30_000);
try {
  const facts = await run();
  console.log(JSON.stringify({ scenario, ok: true, ...facts }));
} catch (e) {
  console.log(JSON.stringify({ scenario, ok: false, error: String(e?.stack ?? e) }));
}
clearTimeout(timer);
process.exit(0);
