// ACP v2 interop agent built on the official TypeScript SDK's experimental v2
// API (@agentclientprotocol/sdk/experimental/v2, SDK 2.4.0).
//
// The v2 sibling of agent.mjs: it speaks only protocol version 2 (the SDK
// answers an initialize offering 1 with -32022) over stdin/stdout, or behind
// server.mjs (TSSERVER_AGENT=v2), and plays the interop scenarios v2 allows. The first word of a prompt's first text
// block picks the scenario (see ../README.md, "agent_v2.mjs"). Every message
// in and out is logged to stderr (never stdout).
//
// What v2 changes, and what this agent therefore does on every prompt
// (schema/sdk-2.4.0/v2; the Preview prose differs in places, see
// docs/V2.md):
//   - session/prompt answers {messageId} as soon as the prompt is accepted;
//     the turn runs on after the response;
//   - the turn's lifecycle is state_update: running first, requires_action
//     while a permission request is pending, idle with the stop reason last;
//   - the prompt is echoed as a whole user_message with that messageId;
//   - tool calls are upserts (tool_call_update creates, omitted fields keep,
//     null clears); tool_call_content_chunk appends content;
//   - there is no fs/* or terminal/* client method: a terminal is the
//     agent's own (terminal_update, terminal_output_chunk) and may outlive
//     the turn as background work, stopped by terminal/cancel;
//   - there is no session/load: session/resume with replayFrom {"type":
//     "start"} replays the session's history, then its current state.

import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const { agent, methods, ndJsonStream, RequestError } = acp;

const log = (...args) => {
  process.stderr.write(`[tsagent-v2] ${args.join(" ")}\n`);
};

const INFO = { name: "acp-interop-tsagent-v2", title: "ACP v2 interop agent (TypeScript SDK)", version: "0.1.0" };

const MODEL_VALUES = [
  { value: "a", name: "Model A", description: "The first model" },
  { value: "b", name: "Model B", description: "The second model" },
];

const LIST_CWD = "/tmp/acp-interop";
const LIST_PAGE_SIZE = 2;
const listed = [
  { sessionId: "sess-1", cwd: LIST_CWD, title: "First session", updatedAt: "2026-01-01T10:00:00Z" },
  { sessionId: "sess-2", cwd: LIST_CWD, title: "Second session", updatedAt: "2026-01-02T10:00:00Z" },
  { sessionId: "sess-3", cwd: LIST_CWD, title: "Third session", updatedAt: "2026-01-03T10:00:00Z" },
];

const PERMISSION_OPTIONS = [
  { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow-always", name: "Allow always", kind: "allow_always" },
  { optionId: "reject-once", name: "Reject once", kind: "reject_once" },
  { optionId: "reject-always", name: "Reject always", kind: "reject_always" },
];

// ---------------------------------------------------------------------------
// Process state: one connection on stdio, every connection behind
// server.mjs (so there sessions outlive the connection that made them).

let sessionCounter = 0;
let authenticated = false;
const requireAuth = process.env.TSAGENT_REQUIRE_AUTH === "1";

// With TSAGENT_REQUIRE_AUTH=1, session/new and session/resume fail with
// -32000 (auth_required) until auth/login succeeded with method "token".
function checkAuth() {
  if (requireAuth && !authenticated) throw RequestError.authRequired({ methods: ["token"] });
}

/**
 * sessionId -> {cwd, model, turns, cancel, history, terminals}. history is
 * the session's replayable entries (whole messages and tool calls, as
 * session/update "update" objects); terminals maps a background terminal's
 * id to its timer.
 */
const sessions = new Map();

function newSessionState(cwd) {
  return { cwd, model: "a", turns: 0, cancel: null, history: [], terminals: new Map(), toolCalls: new Set() };
}

function configOptions(s) {
  return [
    {
      configId: "model",
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

function background(s) {
  return [
    ...[...s.terminals.keys()].map((terminalId) => ({ type: "terminal", terminalId })),
    ...[...s.toolCalls].map((toolCallId) => ({ type: "tool_call", toolCallId })),
  ];
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

function outcomeText(outcome) {
  if (outcome?.outcome === "selected") return `selected:${outcome.optionId}`;
  return outcome?.outcome ?? "missing";
}

const b64 = (text) => Buffer.from(text, "utf8").toString("base64");

// ---------------------------------------------------------------------------
// A turn: sends one session's updates. Message ids are "t<turn>-<name>".

class Turn {
  constructor(client, sessionId, s, signal) {
    this.client = client;
    this.sessionId = sessionId;
    this.s = s;
    this.signal = signal;
    this.turnNo = s.turns;
    this.reports = 0;
  }

  id(name) {
    return `t${this.turnNo}-${name}`;
  }

  update(update) {
    return this.client.notify(methods.client.session.update, { sessionId: this.sessionId, update });
  }

  state(state, extra = {}) {
    return this.update({ sessionUpdate: "state_update", state, background: background(this.s), ...extra });
  }

  /** One whole agent_message per report ("t<turn>-r1", ...); kept in history. */
  async report(text) {
    this.reports++;
    log("report:", text);
    const u = { sessionUpdate: "agent_message", messageId: this.id(`r${this.reports}`), content: [{ type: "text", text }] };
    this.s.history.push(u);
    await this.update(u);
  }

  request(method, params, options) {
    return this.client.request(method, { sessionId: this.sessionId, ...params }, options);
  }
}

// ---------------------------------------------------------------------------
// Prompt scenarios. Each runs after the prompt was accepted and returns the
// idle state's stop reason (or {stopReason, error}); a throw ends the turn
// idle with stopReason "error".

const scenarios = {
  // Every v2 stable update kind the SDK's agent side can send in one turn,
  // with upserts: omitted fields keep, null clears, chunks append.
  async updates(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "Hello, " } });
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "world" } });
    await t.update({ sessionUpdate: "agent_thought_chunk", messageId: t.id("th1"), content: { type: "text", text: "thinking" } });
    // A whole thought replaces what the chunks of the same id built.
    await t.update({ sessionUpdate: "agent_thought", messageId: t.id("th1"), content: [{ type: "text", text: "thought it over" }] });
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "call-1",
      title: "Edit /tmp/acp-interop/a.txt",
      kind: "edit",
      status: "pending",
      locations: [{ path: "/tmp/acp-interop/a.txt", line: 1 }],
      rawInput: { path: "/tmp/acp-interop/a.txt" },
    });
    // Omitted fields keep their values; this one only moves the status.
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "in_progress" });
    await t.update({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: "call-1",
      content: { type: "content", content: { type: "text", text: "editing" } },
    });
    await t.update({
      sessionUpdate: "tool_call_content_chunk",
      toolCallId: "call-1",
      content: { type: "diff", changes: [{ operation: "modify", path: "/tmp/acp-interop/a.txt" }] },
    });
    // null clears: the locations go, the rest stays.
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "completed", locations: null, rawOutput: { ok: true } });
    await t.update({
      sessionUpdate: "plan_update",
      plan: {
        type: "items",
        planId: t.id("plan"),
        entries: [
          { content: "Read the file", priority: "high", status: "completed" },
          { content: "Edit the file", priority: "medium", status: "in_progress" },
        ],
      },
    });
    await t.update({
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { type: "command", name: "web", description: "Search the web", input: { type: "text", hint: "query to search for" } },
        { type: "command", name: "test", description: "Run the tests" },
      ],
    });
    await t.update({ sessionUpdate: "config_option_update", configOptions: configOptions(t.s) });
    await t.update({ sessionUpdate: "session_info_update", title: "Interop session", updatedAt: "2026-02-03T04:05:06Z" });
    // null clears the title again.
    await t.update({ sessionUpdate: "session_info_update", title: null });
    await t.update({ sessionUpdate: "usage_update", used: 1234, size: 200000, cost: { amount: 0.5, currency: "USD" } });
    // A late chunk of the first message: it belongs to t<turn>-m1 by its id.
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("m1"), content: { type: "text", text: "!" } });
    t.s.history.push({ sessionUpdate: "agent_message", messageId: t.id("m1"), content: [{ type: "text", text: "Hello, world!" }] });
    return "end_turn";
  },

  // A tool call, then session/request_permission (state requires_action while
  // it is pending) offering the four option kinds; the call completes on
  // allow and fails otherwise. Reports "outcome:selected:<optionId>" or
  // "outcome:cancelled".
  async permission(t) {
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: t.id("perm"),
      title: "Write /tmp/acp-interop/b.txt",
      kind: "edit",
      status: "pending",
      locations: [{ path: "/tmp/acp-interop/b.txt" }],
      rawInput: { path: "/tmp/acp-interop/b.txt", content: "b" },
    });
    await t.state("requires_action");
    let res;
    try {
      res = await t.request(methods.client.session.requestPermission, {
        title: "Write /tmp/acp-interop/b.txt",
        subject: { type: "tool_call", toolCall: { toolCallId: t.id("perm") } },
        options: PERMISSION_OPTIONS,
      }, { cancellationSignal: t.signal, stopWaitingOnCancel: true });
    } catch (err) {
      await t.state("running");
      await t.update({ sessionUpdate: "tool_call_update", toolCallId: t.id("perm"), status: "failed" });
      await t.report(`outcome:error:${errCode(err)}`);
      return t.signal.aborted ? "cancelled" : "end_turn";
    }
    await t.state("running");
    const o = res.outcome;
    const allowed = o?.outcome === "selected" && String(o.optionId).startsWith("allow");
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: t.id("perm"), status: allowed ? "completed" : "failed" });
    await t.report(`outcome:${outcomeText(o)}`);
    return t.signal.aborted || o?.outcome === "cancelled" ? "cancelled" : "end_turn";
  },

  // A chunk "working", a tool call and a permission request left pending.
  // On session/cancel the agent withdraws the request itself with
  // $/cancel_request (the SDK's stopWaitingOnCancel, which rejects the
  // pending request with -32800 at once), marks the call failed and goes
  // idle "cancelled". Reports "permission:error:-32800" (or the outcome, if
  // the client answered first) and "session/cancel:received".
  async cancel(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("w1"), content: { type: "text", text: "working" } });
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: t.id("cancel"), title: "Run a long command", kind: "execute", status: "pending" });
    await t.state("requires_action");
    try {
      const res = await t.request(methods.client.session.requestPermission, {
        title: "Run a long command",
        subject: { type: "tool_call", toolCall: { toolCallId: t.id("cancel") } },
        options: PERMISSION_OPTIONS,
      }, { cancellationSignal: t.signal, stopWaitingOnCancel: true });
      await t.report(`permission:${outcomeText(res.outcome)}`);
    } catch (err) {
      await t.report(`permission:error:${errCode(err)}`);
    }
    await t.report(`session/cancel:${t.signal.aborted ? "received" : "missing"}`);
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: t.id("cancel"), status: "failed" });
    return t.signal.aborted ? "cancelled" : "end_turn";
  },

  // Streams "stalling" and waits for session/cancel (at most 10 s), then
  // goes idle "cancelled" (or "end_turn" when nothing came).
  async stall(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("s1"), content: { type: "text", text: "stalling" } });
    await Promise.race([aborted(t.signal), sleep(10000)]);
    return t.signal.aborted ? "cancelled" : "end_turn";
  },

  // The agent's own terminal, which outlives the turn: a tool call
  // embedding it, terminal_update (command, cwd, cancel capability), one
  // terminal_output_chunk "started\n", then idle end_turn with the terminal
  // in background. It then streams "tick <n>\n" every 50 ms until
  // terminal/cancel (or session/close) stops it: terminal_update with
  // exitStatus {signal: "SIGTERM"}, then an idle state without a stop reason
  // and with an empty background list.
  async terminal(t) {
    const terminalId = t.id("term");
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId: t.id("run"),
      title: "watch",
      kind: "execute",
      status: "in_progress",
      content: [{ type: "terminal", terminalId }],
    });
    await t.update({
      sessionUpdate: "terminal_update",
      terminalId,
      command: "watch",
      cwd: t.s.cwd,
      capabilities: { cancel: {} },
    });
    await t.update({ sessionUpdate: "terminal_output_chunk", terminalId, data: b64("started\n") });
    await t.update({ sessionUpdate: "tool_call_update", toolCallId: t.id("run"), status: "completed" });
    let n = 0;
    const timer = setInterval(() => {
      n++;
      t.update({ sessionUpdate: "terminal_output_chunk", terminalId, data: b64(`tick ${n}\n`) }).catch(() => {});
    }, 50);
    t.s.terminals.set(terminalId, { timer, turn: t });
    return "end_turn";
  },

  // Fails after acceptance: chunk "about to fail", then idle with stopReason
  // "error" and the error {code: -32603, message, data: {scenario: "error"}}.
  async error(t) {
    await t.update({ sessionUpdate: "agent_message_chunk", messageId: t.id("e1"), content: { type: "text", text: "about to fail" } });
    return { stopReason: "error", error: { code: -32603, message: "Internal error: tsagent was asked to fail", data: { scenario: "error" } } };
  },
};

// Additional scenarios shared with the v1 agent where v2 allows them.
Object.assign(scenarios, {
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
    return "end_turn";
  },

  // Extension request "_acp/slow" {sessionId} immediately followed by
  // $/cancel_request for it; waits for the one response. Reports
  // "cancel_request:error:<code>" (-32800 expected) or
  // "cancel_request:result:<json>".
  async cancel_request(t) {
    const ac = new AbortController();
    const pending = t.request("_acp/slow", {}, { cancellationSignal: ac.signal });
    ac.abort(new Error("tsagent cancels its own request"));
    try {
      const res = await pending;
      await t.report(`cancel_request:result:${JSON.stringify(res)}`);
    } catch (err) {
      await t.report(`cancel_request:error:${errCode(err)}`);
    }
    return "end_turn";
  },

  // A tool call that outlives the turn: tool_call_update in_progress with
  // capabilities {cancel: {}}, idle end_turn with it in background; on
  // tool_call/cancel the agent answers {}, then tool_call_update status
  // failed, then an idle state without a stop reason, background [].
  async bgtool(t) {
    const toolCallId = t.id("bg");
    await t.update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      title: "index the repository",
      kind: "search",
      status: "in_progress",
      capabilities: { cancel: {} },
    });
    t.s.toolCalls.add(toolCallId);
    return "end_turn";
  },
});

// "reject" fails session/prompt itself (before acceptance) with -32603 and
// data {"scenario":"reject"}: no state update, no user message.
const REJECT = "reject";

async function stopTerminal(s, terminalId, client, sessionId) {
  const term = s.terminals.get(terminalId);
  if (!term) return false;
  clearInterval(term.timer);
  s.terminals.delete(terminalId);
  const update = (u) => client.notify(methods.client.session.update, { sessionId, update: u });
  await update({ sessionUpdate: "terminal_update", terminalId, exitStatus: { exitCode: null, signal: "SIGTERM" } });
  await update({ sessionUpdate: "state_update", state: "idle", background: background(s) });
  return true;
}

// runTurn plays one accepted prompt to its idle state.
async function runTurn(t, cmd, text) {
  const s = t.s;
  let idle = {};
  try {
    const run = Object.hasOwn(scenarios, cmd) ? scenarios[cmd] : async (t2) => {
      await t2.report(`echo:${text}`);
      return "end_turn";
    };
    const r = await run(t, text);
    idle = typeof r === "string" ? { stopReason: r } : r;
  } catch (err) {
    log("scenario failed:", err?.stack ?? String(err));
    idle = { stopReason: "error", error: { code: -32603, message: String(err?.message ?? err) } };
  } finally {
    if (s.cancel?.signal === t.signal) s.cancel = null;
  }
  await t.state("idle", idle);
}

// ---------------------------------------------------------------------------
// The agent

const app = agent({ name: "acp-interop-tsagent-v2" })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: 2,
    info: INFO,
    capabilities: {
      session: {
        prompt: { image: {}, embeddedContext: {} },
        mcp: { stdio: {}, http: {} },
        delete: {},
        additionalDirectories: {},
      },
      auth: {},
      _meta: { "acp-interop": { ping: "_acp/ping" } },
    },
    authMethods: [{ type: "agent", methodId: "token", name: "Token" }],
  }))
  .onRequest(methods.agent.auth.login, ({ params }) => {
    if (params.methodId !== "token") {
      throw RequestError.invalidParams({ methodId: params.methodId }, `unknown auth method ${JSON.stringify(params.methodId)}`);
    }
    authenticated = true;
    return {};
  })
  .onRequest(methods.agent.auth.logout, () => {
    authenticated = false;
    return {};
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    checkAuth();
    const sessionId = `ts2-${++sessionCounter}`;
    const s = newSessionState(params.cwd);
    sessions.set(sessionId, s);
    return { sessionId, configOptions: configOptions(s) };
  })
  .onRequest(methods.agent.session.resume, async ({ params, client }) => {
    checkAuth();
    let s = sessions.get(params.sessionId);
    if (!s) {
      // A listed session that this process never ran: give it a history.
      if (!listed.some((x) => x.sessionId === params.sessionId)) throw RequestError.sessionNotFound(params.sessionId);
      s = newSessionState(params.cwd);
      s.history.push(
        { sessionUpdate: "user_message", messageId: "h-u1", content: [{ type: "text", text: "hello from history" }] },
        { sessionUpdate: "agent_message", messageId: "h-a1", content: [{ type: "text", text: "hi from history" }] },
      );
      sessions.set(params.sessionId, s);
    }
    const update = (u) => client.notify(methods.client.session.update, { sessionId: params.sessionId, update: u });
    const from = params.replayFrom?.type;
    if (from === "start") {
      for (const u of s.history) await update(u);
    } else if (from !== undefined) {
      throw RequestError.invalidParams({ replayFrom: params.replayFrom }, "unsupported replayFrom");
    }
    // The current state comes last, before the response: a replay has no
    // end marker of its own in this schema.
    await update({ sessionUpdate: "state_update", state: s.cancel ? "running" : "idle", background: background(s) });
    return { configOptions: configOptions(s) };
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
    const res = { sessions: all.slice(start, start + LIST_PAGE_SIZE) };
    if (start + LIST_PAGE_SIZE < all.length) {
      res.nextCursor = Buffer.from(`offset:${start + LIST_PAGE_SIZE}`).toString("base64");
    }
    return res;
  })
  .onRequest(methods.agent.session.close, ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s) {
      s.cancel?.abort(new Error("session closed"));
      for (const { timer } of s.terminals.values()) clearInterval(timer);
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
      for (const { timer } of s.terminals.values()) clearInterval(timer);
      sessions.delete(params.sessionId);
    }
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
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (s.cancel && !s.cancel.signal.aborted) {
      throw RequestError.invalidRequest({ sessionId: params.sessionId }, "a prompt is already running");
    }
    const first = params.prompt.find((b) => b.type === "text");
    const text = first ? first.text.trim() : "";
    const sp = text.indexOf(" ");
    const cmd = sp < 0 ? text : text.slice(0, sp);
    log("prompt:", JSON.stringify(cmd));
    if (cmd === REJECT) {
      throw new RequestError(-32603, "Internal error: tsagent was asked to reject the prompt", { scenario: "reject" });
    }
    // Aborted by session/cancel or session/close. A $/cancel_request for the
    // prompt itself has nothing to stop: the prompt is answered at once.
    const cancel = new AbortController();
    s.cancel = cancel;
    s.turns++;
    const t = new Turn(client, params.sessionId, s, cancel.signal);
    const messageId = t.id("u");
    const userMessage = { sessionUpdate: "user_message", messageId, content: params.prompt };
    s.history.push(userMessage);
    await t.state("running");
    await t.update(userMessage);
    // The turn runs on after the response, which only says "accepted".
    setImmediate(() => runTurn(t, cmd, text).catch((err) => log("turn failed:", err?.stack ?? String(err))));
    return { messageId };
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    const s = sessions.get(params.sessionId);
    log("session/cancel for", params.sessionId, s?.cancel ? "(turn running)" : "(no turn)");
    // Background terminals keep running: session/cancel stops the
    // foreground work only.
    s?.cancel?.abort(new Error("session/cancel"));
  })
  .onRequest(methods.agent.terminal.cancel, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (!s.terminals.has(params.terminalId)) {
      throw RequestError.invalidParams({ terminalId: params.terminalId }, "unknown or exited terminal");
    }
    // Answered first, then confirmed by the terminal_update with exitStatus.
    setImmediate(() => stopTerminal(s, params.terminalId, client, params.sessionId).catch(() => {}));
    return {};
  })
  .onRequest(methods.agent.toolCall.cancel, async ({ params, client }) => {
    const s = getSession(params.sessionId);
    if (!s.toolCalls.has(params.toolCallId)) {
      throw RequestError.invalidParams({ toolCallId: params.toolCallId }, "unknown, final or not cancellable tool call");
    }
    s.toolCalls.delete(params.toolCallId);
    // Answered first, then confirmed by a tool_call_update to a final status.
    setImmediate(async () => {
      const update = (u) => client.notify(methods.client.session.update, { sessionId: params.sessionId, update: u });
      await update({ sessionUpdate: "tool_call_update", toolCallId: params.toolCallId, status: "failed" }).catch(() => {});
      await update({ sessionUpdate: "state_update", state: "idle", background: background(s) }).catch(() => {});
    });
    return {};
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

// The app is shared with server.mjs (TSSERVER_AGENT=v2), which serves it
// over Streamable HTTP and WebSocket; run as a program, this file serves it
// on stdio.
export { app };

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const stream = ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  const connection = app.connect(logged(stream));
  log("ready, pid", process.pid);
  connection.closed.then(() => {
    log("connection closed; exiting");
    process.exit(0);
  });
}
