// The TypeScript-SDK client of the memrun scenario (see ../README.md): a
// client built on @agentclientprotocol/sdk (v1 stable API, the `client()`
// builder) that spawns the agent, opens a session, sends one prompt and
// prints each agent_message_chunk's text to stdout as it arrives, like the
// `acp` command in text mode. With --accumulate it keeps the text instead
// (a UI's transcript: the chunks appended to one string) and prints it when
// the turn ends.
//
// The SDK is resolved from ../../interop/tsagent/node_modules (run `npm ci`
// in interop/tsagent first), so the benchmark has no lockfile of its own.
//
//   node client.mjs [--accumulate] [-p TEXT] -- AGENT [ARGS...]
//
// When ACP_MEMRUN_HWM names a file, the process appends "self <maxRSS kB>"
// to it at exit (its own peak, without its children's).

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const require = createRequire(new URL("../../interop/tsagent/package.json", import.meta.url));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);
const { client, methods, ndJsonStream } = acp;

const args = process.argv.slice(2);
let accumulate = false;
let prompt = "stream 100000";
while (args.length > 0 && args[0] !== "--") {
  const a = args.shift();
  if (a === "--accumulate") accumulate = true;
  else if (a === "-p") prompt = args.shift();
  else throw new Error(`unknown flag ${a}`);
}
args.shift(); // "--"
if (args.length === 0) throw new Error("usage: client.mjs [--accumulate] [-p TEXT] -- AGENT [ARGS...]");

const agent = spawn(args[0], args.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

let text = "";
const app = client({ name: "memrun-tsclient" }).onNotification(methods.client.session.update, ({ params }) => {
  const u = params.update;
  if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
    if (accumulate) text += u.content.text;
    else process.stdout.write(u.content.text);
  }
});

const stop = await app.connectWith(stream, async (cx) => {
  await cx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const s = await cx.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
  const r = await cx.request(methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: prompt }] });
  return r.stopReason;
});
if (accumulate) process.stdout.write(text);
process.stdout.write(`\n[${stop}]\n`);
agent.stdin.end();
await new Promise((resolve) => agent.once("exit", resolve));
if (process.env.ACP_MEMRUN_HWM) appendFileSync(process.env.ACP_MEMRUN_HWM, `self ${process.resourceUsage().maxRSS}\n`);
