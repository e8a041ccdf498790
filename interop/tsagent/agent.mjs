// ACP interop agent built on the official TypeScript SDK (@agentclientprotocol/sdk).
//
// It speaks ACP v1 over stdin/stdout and exercises every client-side feature
// so that a Go client can be tested against a real, independent peer. What a
// prompt does is chosen by the first word of its first text block; see
// ../README.md for the list. Every message it receives or sends is logged to
// stderr (never stdout).
//
// Environment:
//   TSAGENT_REQUIRE_AUTH=1  session/new, session/load and session/resume fail
//                           with -32000 (auth_required) until `authenticate`
//                           succeeded with method "token".
//   TSAGENT_MCP_ACP=1       advertises mcpCapabilities.acp (MCP-over-ACP) and
//                           calls the client's declared servers in `mcp`.

import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import * as stable from "@agentclientprotocol/sdk";
import * as unstable from "@agentclientprotocol/sdk/unstable";

const { McpOverAcpCaller, isMcpServerAcp } = unstable;
// With TSAGENT_MCP_ACP=1 the agent is built on the SDK's unstable entry
// point, whose schema has the "acp" MCP server type and mcp/message; the
// stable one refuses such a session/new.
const acp = process.env.TSAGENT_MCP_ACP === "1" ? unstable : stable;
const { agent, methods, ndJsonStream, RequestError } = acp;

const log = (...args) => {
  process.stderr.write(`[tsagent] ${args.join(" ")}\n`);
};

// ---------------------------------------------------------------------------
// Fixed data

const AGENT_INFO = { name: "acp-interop-tsagent", title: "ACP interop agent (TypeScript SDK)", version: "0.1.0" };

const MODES = [
  { id: "ask", name: "Ask", description: "Ask before changing files" },
  { id: "code", name: "Code", description: "Change files freely" },
];

const MODEL_VALUES = [
  { value: "a", name: "Model A", description: "The first model" },
  { value: "b", name: "Model B", description: "The second model" },
];

// Sessions that session/list knows about (cwd is fixed so a client can filter).
const LIST_CWD = "/tmp/acp-interop";
const LIST_PAGE_SIZE = 2;
const listed = [
  { sessionId: "sess-1", cwd: LIST_CWD, title: "First session", updatedAt: "2026-01-01T10:00:00Z" },
  { sessionId: "sess-2", cwd: LIST_CWD, title: "Second session", updatedAt: "2026-01-02T10:00:00Z" },
  { sessionId: "sess-3", cwd: LIST_CWD, title: "Third session", updatedAt: "2026-01-03T10:00:00Z" },
];

// ---------------------------------------------------------------------------
// Connection state (one connection per process)

let clientCaps = {};
let authenticated = false;
const requireAuth = process.env.TSAGENT_REQUIRE_AUTH === "1";
const mcpOverAcp = process.env.TSAGENT_MCP_ACP === "1";
// The SDK's agent-side MCP-over-ACP caller (request-scoped mcp/message).
const mcpCaller = new McpOverAcpCaller({ clientInfo: { name: "acp-interop-tsagent", version: "0.1.0" } });
// Every mcp/message notification the connection receives, before the caller
// routes it: the SDK dispatches a notification asynchronously, so one read
// in the same chunk as its request's response can reach the caller after
// the request settled, and the caller then drops it. `mcp` waits for it
// here instead.
const mcpNotes = [];
let mcpNoteArrived = () => {};
function onMcpNotification(context) {
  mcpNotes.push(`${context.params?.requestId === mcpLastRequestId ? "this" : "other"}:${context.params?.method}`);
  mcpNoteArrived();
  return mcpCaller.handleNotification(context);
}
let mcpLastRequestId = "";
let sessionCounter = 0;

/** sessionId -> { cwd, mode, model, cancel: AbortController | null } */
const sessions = new Map();

function newSessionState(cwd) {
  return { cwd, mode: "ask", model: "a", cancel: null, turns: 0 };
}

function modeState(s) {
  return { currentModeId: s.mode, availableModes: MODES };
}

function configOptions(s) {
  return [
    {
      id: "model",
      name: "Model",
      description: "Which model answers",
      category: "model",
      type: "select",
      currentValue: s.model,
      options: MODEL_VALUES,
    },
  ];
}

function getSession(sessionId) {
  const s = sessions.get(sessionId);
  if (!s) throw RequestError.sessionNotFound(sessionId);
  return s;
}

function checkAuth() {
  if (requireAuth && !authenticated) throw RequestError.authRequired({ methods: ["token"] });
}

// ---------------------------------------------------------------------------
// Helpers used by the prompt scenarios

/**
 * Turn-scoped helper: sends updates for one session. Message IDs are unique
 * within the session: "t<turn>-<name>", where <turn> counts the session's
 * prompts from 1.
 */
class Turn {
  constructor(client, sessionId, signal, turnNo) {
    this.client = client;
    this.sessionId = sessionId;
    this.signal = signal;
    this.turnNo = turnNo;
    this.reports = 0;
  }

  id(name) {
    return `t${this.turnNo}-${name}`;
  }

  update(update) {
    return this.client.notify(methods.client.session.update, { sessionId: this.sessionId, update });
  }

  /** One agent_message_chunk per report, each with its own messageId ("t<turn>-r1", "t<turn>-r2", ...). */
  report(text) {
    this.reports++;
    log("report:", text);
    return this.update({
      sessionUpdate: "agent_message_chunk",
      messageId: this.id(`r${this.reports}`),
      content: { type: "text", text },
    });
  }

  request(method, params, options) {
    return this.client.request(method, { sessionId: this.sessionId, ...params }, options);
  }
}

function errCode(err) {
  if (err instanceof RequestError || (err && typeof err.code === "number")) return err.code;
  return "unknown";
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

const PERMISSION_OPTIONS = [
  { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow-always", name: "Allow always", kind: "allow_always" },
  { optionId: "reject-once", name: "Reject once", kind: "reject_once" },
  { optionId: "reject-always", name: "Reject always", kind: "reject_always" },
];

function outcomeText(outcome) {
  if (outcome?.outcome === "selected") return `selected:${outcome.optionId}`;
  return outcome?.outcome ?? "missing";
}

// ---------------------------------------------------------------------------
// Prompt scenarios. Each returns a PromptResponse.

const scenarios = {
  // `mcp`: through the SDK's McpOverAcpCaller, for each "acp" server the
  // session declared: tools/call "echo" {text:"hi"}, reporting
  // "mcp:<serverId>:echo:<outcome json>:notes=<notifications>" once one
  // arrived, each "this:<method>" when it names the request ("other:" if
  // not), and
  // tools/call "nope", reporting "mcp:<serverId>:nope:<outcome json>"; then
  // tools/call "block" with its signal aborted right after it is sent
  // ($/cancel_request of the outer request), reporting
  // "mcp:cancel:error:<code>" (or ":result:<json>"); then a request to the
  // undeclared server "undeclared", reporting "mcp:undeclared:error:<code>".
  async mcp(t, s) {
    const servers = s.mcpServers ?? [];
    for (const srv of servers) {
      mcpNotes.length = 0;
      mcpLastRequestId = `echo-${srv.serverId}`;
      const arrived = new Promise((resolve) => { mcpNoteArrived = resolve; });
      const echo = await mcpCaller.request(t.client, srv.serverId, "tools/call", { name: "echo", arguments: { text: "hi" } }, {
        requestId: mcpLastRequestId,
      });
      await arrived;
      await t.report(`mcp:${srv.serverId}:echo:${JSON.stringify(echo)}:notes=${mcpNotes.join(",")}`);
      const nope = await mcpCaller.request(t.client, srv.serverId, "tools/call", { name: "nope", arguments: {} });
      await t.report(`mcp:${srv.serverId}:nope:${JSON.stringify(nope)}`);
    }
    if (servers.length > 0) {
      const ac = new AbortController();
      const p = mcpCaller.request(t.client, servers[0].serverId, "tools/call", { name: "block", arguments: {} }, { signal: ac.signal });
      ac.abort();
      try {
        await t.report(`mcp:cancel:result:${JSON.stringify(await p)}`);
      } catch (err) {
        await t.report(`mcp:cancel:error:${errCode(err)}`);
      }
    }
    try {
      const out = await mcpCaller.request(t.client, "undeclared", "tools/list", {});
      await t.report(`mcp:undeclared:result:${JSON.stringify(out)}`);
    } catch (err) {
      await t.report(`mcp:undeclared:error:${errCode(err)}`);
    }
    return { stopReason: "end_turn" };
  },
  // `flood N`: N agent_message_chunk updates of one message (24-byte texts,
  // as the Go benchmarks send), then end_turn; for throughput runs.
  async flood(t, s, arg) {
    const n = Number.parseInt(arg, 10) || 1000;
    const messageId = t.id("f1");
    for (let i = 0; i < n; i++) {
      await t.update({ sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: `${i},`.padEnd(24, ".") } });
    }
    return { stopReason: "end_turn" };
  },
  // Every stable session/update kind, in this order, then end_turn.
  async updates(t, s) {
    await t.update({ sessionUpdate: "user_message_chunk", messageId: t.id("u1"), content: { type: "text", text: "updates" } });
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "Hello, " } });
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "world" } });
    await t.update({ sessionUpdate: "agent_thought_chunk", messageId: t.id("th1"), content: { type: "text", text: "thinking" } });
    await t.update({
      sessionUpdate: "tool_call",
      toolCallId: "call-1",
      title: "Edit /tmp/acp-interop/a.txt",
      kind: "edit",
      status: "pending",
      locations: [{ path: "/tmp/acp-interop/a.txt", line: 1 }],
      rawInput: { path: "/tmp/acp-interop/a.txt" },
    });
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "call-1",
      status: "completed",
      content: [
        { type: "diff", path: "/tmp/acp-interop/a.txt", oldText: "old\n", newText: "new\n" },
        { type: "terminal", terminalId: "term-1" },
        { type: "content", content: { type: "text", text: "edited" } },
      ],
      rawOutput: { ok: true },
    });
    await t.update({
      sessionUpdate: "plan",
      entries: [
        { content: "Read the file", priority: "high", status: "completed" },
        { content: "Edit the file", priority: "medium", status: "in_progress" },
        { content: "Run the tests", priority: "low", status: "pending" },
      ],
    });
    await t.update({
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { name: "web", description: "Search the web", input: { hint: "query to search for" } },
        { name: "test", description: "Run the tests" },
      ],
    });
    s.mode = "code";
    await t.update({ sessionUpdate: "current_mode_update", currentModeId: "code" });
    await t.update({ sessionUpdate: "config_option_update", configOptions: configOptions(s) });
    await t.update({ sessionUpdate: "session_info_update", title: "Interop session", updatedAt: "2026-02-03T04:05:06Z" });
    await t.update({ sessionUpdate: "usage_update", used: 1234, size: 200000, cost: { amount: 0.5, currency: "USD" } });
    // A late chunk of the first message: it belongs to t<turn>-m1 by its
    // messageId although ten updates of other kinds came in between.
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "!" } });
    return { stopReason: "end_turn" };
  },

  // tool_call, then session/request_permission offering the four option kinds,
  // then tool_call_update (completed on allow, failed otherwise) and a report
  // "outcome:selected:<optionId>" or "outcome:cancelled".
  async permission(t) {
    // locations and rawInput are only in the tool_call, not in the request's
    // toolCall: a client that shows the folded tool call has them.
    await t.update({
      sessionUpdate: "tool_call",
      toolCallId: "perm-1",
      title: "Write /tmp/acp-interop/b.txt",
      kind: "edit",
      status: "pending",
      locations: [{ path: "/tmp/acp-interop/b.txt" }],
      rawInput: { path: "/tmp/acp-interop/b.txt", content: "b" },
    });
    let res;
    try {
      res = await t.request(methods.client.session.requestPermission, {
        toolCall: { toolCallId: "perm-1", title: "Write /tmp/acp-interop/b.txt", kind: "edit", status: "pending" },
        options: PERMISSION_OPTIONS,
      });
    } catch (err) {
      await t.report(`outcome:error:${errCode(err)}`);
      return { stopReason: "end_turn" };
    }
    const o = res.outcome;
    const allowed = o?.outcome === "selected" && String(o.optionId).startsWith("allow");
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: "perm-1", status: allowed ? "completed" : "failed" });
    await t.report(`outcome:${outcomeText(o)}`);
    return { stopReason: t.signal.aborted || o?.outcome === "cancelled" ? "cancelled" : "end_turn" };
  },

  // A chunk "working", a tool_call, then a permission request that is left
  // pending. The client is expected to send session/cancel and answer the
  // permission with {"outcome":"cancelled"}. Reports "permission:<outcome>"
  // and "session/cancel:received" (or ":missing" if no session/cancel came
  // within 2 s of the answer), then returns stopReason cancelled. If the
  // permission is still unanswered 3 s after session/cancel, the agent sends
  // $/cancel_request for it and reports "permission:error:<code>" (or the
  // outcome it then gets).
  async cancel(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("w1"), content: { type: "text", text: "working" } });
    await t.update({ sessionUpdate: "tool_call", toolCallId: "cancel-1", title: "Run a long command", kind: "execute", status: "pending" });
    // A client that forgets to answer the permission after session/cancel gets
    // a $/cancel_request for it 3 s after the session/cancel.
    const giveUp = new AbortController();
    t.signal.addEventListener("abort", () => setTimeout(() => giveUp.abort(), 3000).unref(), { once: true });
    let res;
    try {
      res = await t.request(methods.client.session.requestPermission, {
        toolCall: { toolCallId: "cancel-1" },
        options: PERMISSION_OPTIONS,
      }, { cancellationSignal: giveUp.signal });
    } catch (err) {
      await t.report(`permission:error:${errCode(err)}`);
      return { stopReason: t.signal.aborted ? "cancelled" : "end_turn" };
    }
    await t.report(`permission:${outcomeText(res.outcome)}`);
    if (res.outcome?.outcome === "cancelled") {
      // The answer may be processed before the session/cancel notification
      // that preceded it on the wire; give it a moment.
      await Promise.race([aborted(t.signal), sleep(2000)]);
    }
    await t.report(`session/cancel:${t.signal.aborted ? "received" : "missing"}`);
    if (t.signal.aborted || res.outcome?.outcome === "cancelled") {
      await t.update({ sessionUpdate: "tool_call_update", toolCallId: "cancel-1", status: "failed" });
      return { stopReason: "cancelled" };
    }
    return { stopReason: "end_turn" };
  },

  // fs <path>: fs/read_text_file {path, line: 2, limit: 2}, then
  // fs/write_text_file {path: <path>.out, content: "copied:" + what was read}.
  // Reports "read:ok:<json string>" / "read:error:<code>" / "read:unsupported",
  // and "write:ok" / "write:error:<code>" / "write:unsupported".
  async fs(t, s, arg) {
    const path = arg;
    let content = "";
    if (clientCaps.fs?.readTextFile) {
      try {
        const res = await t.request(methods.client.fs.readTextFile, { path, line: 2, limit: 2 });
        content = res.content;
        await t.report(`read:ok:${JSON.stringify(content)}`);
      } catch (err) {
        await t.report(`read:error:${errCode(err)}`);
      }
    } else {
      await t.report("read:unsupported");
    }
    if (clientCaps.fs?.writeTextFile) {
      try {
        await t.request(methods.client.fs.writeTextFile, { path: `${path}.out`, content: `copied:${content}` });
        await t.report("write:ok");
      } catch (err) {
        await t.report(`write:error:${errCode(err)}`);
      }
    } else {
      await t.report("write:unsupported");
    }
    return { stopReason: "end_turn" };
  },

  // terminal/create sh -c "echo hi; exit 3" (outputByteLimit 1024), a
  // tool_call embedding the terminal, terminal/wait_for_exit, terminal/output,
  // terminal/release. Reports "exit:<code>|signal:<sig>", "output:<json string>",
  // "truncated:<bool>", "released"; errors as "terminal:error:<code>";
  // "terminal:unsupported" without the capability.
  async terminal(t) {
    if (!clientCaps.terminal) {
      await t.report("terminal:unsupported");
      return { stopReason: "end_turn" };
    }
    let term;
    try {
      term = await t.client.createTerminal({
        sessionId: t.sessionId,
        command: "sh",
        args: ["-c", "echo hi; exit 3"],
        outputByteLimit: 1024,
      });
      await t.update({
        sessionUpdate: "tool_call",
        toolCallId: "term-call-1",
        title: "sh -c \"echo hi; exit 3\"",
        kind: "execute",
        status: "in_progress",
        content: [{ type: "terminal", terminalId: term.id }],
      });
      const exit = await term.waitForExit();
      await t.report(exit.signal ? `signal:${exit.signal}` : `exit:${exit.exitCode}`);
      const out = await term.currentOutput();
      await t.report(`output:${JSON.stringify(out.output)}`);
      await t.report(`truncated:${out.truncated}`);
      await t.update({ sessionUpdate: "tool_call_update", toolCallId: "term-call-1", status: exit.exitCode === 0 ? "completed" : "failed" });
      await term.release();
      term = null;
      await t.report("released");
    } catch (err) {
      await t.report(`terminal:error:${errCode(err)}`);
      if (term) await term.release().catch(() => {});
    }
    return { stopReason: "end_turn" };
  },

  // Extension notification "_acp/note" {sessionId, note: "hello"}, then
  // extension request "_acp/echo" {sessionId, text: "ping"}. Reports
  // "echo:<json result>" or "echo:error:<code>".
  async ext(t) {
    await t.client.notify("_acp/note", { sessionId: t.sessionId, note: "hello" });
    try {
      const res = await t.client.request("_acp/echo", { sessionId: t.sessionId, text: "ping" });
      await t.report(`echo:${JSON.stringify(res)}`);
    } catch (err) {
      await t.report(`echo:error:${errCode(err)}`);
    }
    return { stopReason: "end_turn" };
  },

  // cancel_request            : sends extension request "_acp/slow" {sessionId}
  // cancel_request fs <path>  : sends fs/read_text_file {sessionId, path}
  // and right after it (via the SDK's cancellationSignal) the notification
  // {"method":"$/cancel_request","params":{"requestId":<id>}}. The SDK keeps
  // waiting for the one response; reports "cancel_request:error:<code>"
  // (-32800 expected) or "cancel_request:result:<json>"; the fs form reports
  // "cancel_request:unsupported" without the fs.readTextFile capability.
  async cancel_request(t, s, arg) {
    const ac = new AbortController();
    let pending;
    const parts = arg.split(" ");
    if (parts[0] === "fs") {
      if (!clientCaps.fs?.readTextFile) {
        await t.report("cancel_request:unsupported");
        return { stopReason: "end_turn" };
      }
      pending = t.request(methods.client.fs.readTextFile, { path: parts.slice(1).join(" ") }, { cancellationSignal: ac.signal });
    } else {
      pending = t.request("_acp/slow", {}, { cancellationSignal: ac.signal });
    }
    ac.abort(new Error("tsagent cancels its own request"));
    try {
      const res = await pending;
      await t.report(`cancel_request:result:${JSON.stringify(res)}`);
    } catch (err) {
      await t.report(`cancel_request:error:${errCode(err)}`);
    }
    return { stopReason: "end_turn" };
  },

  // Fails session/prompt with -32603 and data {"scenario":"error"}.
  async error(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("e1"), content: { type: "text", text: "about to fail" } });
    throw new RequestError(-32603, "Internal error: tsagent was asked to fail", { scenario: "error" });
  },
};

// Anything else: echo the prompt text back and end the turn.
async function echoScenario(t, s, text) {
  await t.report(`echo:${text}`);
  return { stopReason: "end_turn" };
}

// ---------------------------------------------------------------------------
// The agent

const app = agent({ name: "acp-interop-tsagent" })
  .onRequest(methods.agent.initialize, ({ params }) => {
    clientCaps = params.clientCapabilities ?? {};
    return {
      protocolVersion: 1,
      agentInfo: AGENT_INFO,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: true, embeddedContext: true },
        mcpCapabilities: mcpOverAcp ? { http: false, sse: false, acp: true } : { http: false, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {} },
        _meta: { "acp-interop": { ping: "_acp/ping" } },
      },
      authMethods: [{ id: "token", name: "Token", description: "Authenticate with a token (always accepted)" }],
    };
  })
  .onRequest(methods.agent.authenticate, ({ params }) => {
    if (params.methodId !== "token") {
      throw RequestError.invalidParams({ methodId: params.methodId }, `unknown auth method ${JSON.stringify(params.methodId)}`);
    }
    authenticated = true;
    return {};
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    checkAuth();
    const sessionId = `ts-${++sessionCounter}`;
    const s = newSessionState(params.cwd);
    s.mcpServers = (params.mcpServers ?? []).filter(isMcpServerAcp);
    sessions.set(sessionId, s);
    return { sessionId, modes: modeState(s), configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.load, async ({ params, client }) => {
    checkAuth();
    const s = newSessionState(params.cwd);
    sessions.set(params.sessionId, s);
    const update = (u) => client.notify(methods.client.session.update, { sessionId: params.sessionId, update: u });
    await update({ sessionUpdate: "user_message_chunk", messageId: "h-u1", content: { type: "text", text: "hello from history" } });
    await update({ sessionUpdate: "agent_message_chunk", messageId: "h-a1", content: { type: "text", text: "hi from history" } });
    return { modes: modeState(s), configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.resume, ({ params }) => {
    checkAuth();
    let s = sessions.get(params.sessionId);
    if (!s) {
      s = newSessionState(params.cwd);
      sessions.set(params.sessionId, s);
    }
    return { modes: modeState(s), configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.list, ({ params }) => {
    let all = listed;
    if (params.cwd) all = all.filter((x) => x.cwd === params.cwd);
    let start = 0;
    if (params.cursor) {
      const m = /^offset:(\d+)$/.exec(Buffer.from(params.cursor, "base64").toString("utf8"));
      if (!m) throw RequestError.invalidParams({ cursor: params.cursor }, "invalid cursor");
      start = Number(m[1]);
    }
    const page = all.slice(start, start + LIST_PAGE_SIZE);
    const res = { sessions: page };
    if (start + LIST_PAGE_SIZE < all.length) {
      res.nextCursor = Buffer.from(`offset:${start + LIST_PAGE_SIZE}`).toString("base64");
    }
    return res;
  })
  .onRequest(methods.agent.session.close, ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s) {
      s.cancel?.abort(new Error("session closed"));
      sessions.delete(params.sessionId);
    }
    return {};
  })
  .onRequest(methods.agent.session.delete, ({ params }) => {
    const i = listed.findIndex((x) => x.sessionId === params.sessionId);
    if (i >= 0) listed.splice(i, 1);
    const s = sessions.get(params.sessionId);
    if (s) {
      s.cancel?.abort(new Error("session deleted"));
      sessions.delete(params.sessionId);
    }
    return {};
  })
  .onRequest(methods.agent.session.setMode, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (!MODES.some((m) => m.id === params.modeId)) {
      throw RequestError.invalidParams({ modeId: params.modeId }, "unknown mode");
    }
    s.mode = params.modeId;
    await client.notify(methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "current_mode_update", currentModeId: s.mode },
    });
    return {};
  })
  .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
    const s = getSession(params.sessionId);
    if (params.configId !== "model") {
      throw RequestError.invalidParams({ configId: params.configId }, "unknown config option");
    }
    if (!MODEL_VALUES.some((v) => v.value === params.value)) {
      throw RequestError.invalidParams({ value: params.value }, "unknown value");
    }
    s.model = params.value;
    return { configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
    const s = getSession(params.sessionId);
    if (s.cancel && !s.cancel.signal.aborted) {
      throw RequestError.invalidRequest({ sessionId: params.sessionId }, "a prompt is already running");
    }
    // Aborted by session/cancel, session/close, or a $/cancel_request for this prompt.
    const cancel = new AbortController();
    s.cancel = cancel;
    const onAbort = () => cancel.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const first = params.prompt.find((b) => b.type === "text");
    const text = first ? first.text.trim() : "";
    const sp = text.indexOf(" ");
    const cmd = sp < 0 ? text : text.slice(0, sp);
    const arg = sp < 0 ? "" : text.slice(sp + 1).trim();
    const t = new Turn(client, params.sessionId, cancel.signal, ++s.turns);
    log("prompt:", JSON.stringify(cmd), "arg:", JSON.stringify(arg));
    try {
      const run = Object.hasOwn(scenarios, cmd) ? scenarios[cmd] : (t2, s2) => echoScenario(t2, s2, text);
      return await run(t, s, arg);
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (s.cancel === cancel) s.cancel = null;
    }
  })
  // Not in the stable method table: routed by name, params as sent.
  .onNotification(unstable.methods.agent.mcp.message, (p) => p, onMcpNotification)
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    const s = sessions.get(params.sessionId);
    log("session/cancel for", params.sessionId, s?.cancel ? "(turn running)" : "(no turn)");
    s?.cancel?.abort(new Error("session/cancel"));
  })
  .onRequest("_acp/ping", (p) => p ?? {}, ({ params }) => ({ pong: true, params }))
  .onNotification("*", ({ method, params }) => {
    log("unhandled notification", method, JSON.stringify(params));
  });

// ---------------------------------------------------------------------------
// stdio wiring with logging of every message in both directions (to stderr).

function logged(stream) {
  const inLog = new TransformStream({
    transform(msg, ctl) {
      log("<-", JSON.stringify(msg));
      ctl.enqueue(msg);
    },
  });
  const outLog = new TransformStream({
    transform(msg, ctl) {
      log("->", JSON.stringify(msg));
      ctl.enqueue(msg);
    },
  });
  outLog.readable.pipeTo(stream.writable).catch(() => {});
  return { readable: stream.readable.pipeThrough(inLog), writable: outLog.writable };
}

// The app is shared with server.mjs, which serves it over Streamable HTTP
// and WebSocket; run as a program, this file serves it on stdio.
export { app };

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  // TSAGENT_QUIET=1 logs no messages (throughput runs).
  const connection = app.connect(process.env.TSAGENT_QUIET === "1" ? stream : logged(stream));
  log("ready, pid", process.pid);
  connection.closed.then(() => {
    log("connection closed; exiting");
    process.exit(0);
  });
}
