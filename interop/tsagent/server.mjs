// The interop agent (agent.mjs, or agent_v2.mjs) behind the TypeScript
// SDK's own server of the RFD "Streamable HTTP & WebSocket transport":
// experimental/server (AcpServer) with the experimental/node adapters on
// node:http, and the ws package for WebSocket upgrades, all on one
// endpoint. Every ACP connection gets a connection of the same app;
// sessions live in the process, so they outlive a connection
// (session/load, or in v2 session/resume, on a new one).
//
// It listens on 127.0.0.1 on a free port (or PORT) and prints the
// endpoint URL, http://127.0.0.1:<port>/acp, as its first line on stdout.
// It exits when stdin closes, so a test that dies takes it along.
//
// Environment:
//   TSSERVER_AGENT=v2           serve agent_v2.mjs's app (protocol 2)
//                               instead of agent.mjs's (protocol 1):
//                               AcpServer takes any app with connect(stream)
//                               and routes by method name and sessionId,
//                               which v2 keeps.
//   TSSERVER_COOKIE=name=value  set this cookie on every response and
//                               answer 403 to requests (after initialize
//                               and the WebSocket handshake) without it.
//   TSSERVER_TOKEN=secret       answer 401 to requests without
//                               "Authorization: Bearer secret".

import http from "node:http";
import { WebSocketServer } from "ws";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";

const which = process.env.TSSERVER_AGENT ?? "v1";
if (which !== "v1" && which !== "v2") {
  process.stderr.write(`server.mjs: TSSERVER_AGENT=${which}: want v1 or v2\n`);
  process.exit(2);
}
const { app } = await import(which === "v2" ? "./agent_v2.mjs" : "./agent.mjs");

const server = new AcpServer({ agent: app });
const handle = createNodeHttpHandler(server);
const wss = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(server, wss);
const cookie = process.env.TSSERVER_COOKIE ?? "";
const token = process.env.TSSERVER_TOKEN ?? "";

// refused says why a request may not pass, or "" if it may.
function refused(req, first) {
  if (token && req.headers.authorization !== `Bearer ${token}`) {
    return "401";
  }
  if (cookie && !first && !(req.headers.cookie ?? "").split(/;\s*/).includes(cookie)) {
    return "403";
  }
  return "";
}

const httpServer = http.createServer((req, res) => {
  const first = req.method === "POST" && !req.headers["acp-connection-id"];
  const why = refused(req, first);
  if (why) {
    res.writeHead(Number(why), { "Content-Type": "text/plain" });
    res.end(why === "401" ? "bearer token required" : "affinity cookie missing");
    return;
  }
  if (cookie) {
    res.setHeader("Set-Cookie", `${cookie}; Path=/; HttpOnly`);
  }
  handle(req, res);
});
httpServer.on("upgrade", (req, socket, head) => {
  const why = refused(req, true);
  if (why) {
    socket.end(`HTTP/1.1 ${why} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    return;
  }
  upgrade(req, socket, head);
});
if (cookie) {
  wss.on("headers", (headers) => headers.push(`Set-Cookie: ${cookie}; Path=/`));
}

httpServer.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${httpServer.address().port}/acp\n`);
});

process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
process.stdin.resume();
