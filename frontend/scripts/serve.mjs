#!/usr/bin/env node
// Serve the built UI (frontend/dist) with no dependencies. /config.js tells the page where the agent is.
//   node scripts/serve.mjs [--port 3000] [--host 127.0.0.1] [--api http://127.0.0.1:8000] [--dir dist]
// Environment: PORT, HOST, SEXTANT_API_URL (flags win). Unknown paths fall back to index.html.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const args = Object.fromEntries(argv.flatMap((arg, i) => (arg.startsWith("--") ? [[arg.slice(2), argv[i + 1]]] : [])));
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(args.dir ?? path.join(here, "..", "dist"));
const port = Number(args.port ?? process.env.PORT ?? 3000);
const host = args.host ?? process.env.HOST ?? "127.0.0.1";
const api = args.api ?? process.env.SEXTANT_API_URL ?? "";

if (!existsSync(path.join(root, "index.html"))) {
  console.error(`serve: no build in ${root}; run 'npm run build' in frontend/ first`);
  process.exit(1);
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".md": "text/markdown; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".pdf": "application/pdf",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/config.js") {
    res.writeHead(200, { "content-type": TYPES[".js"], "cache-control": "no-store" });
    res.end(`window.__SEXTANT__ = ${JSON.stringify(api ? { apiUrl: api } : {})};\n`);
    return;
  }
  let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)));
  if (!file.startsWith(root)) {
    res.writeHead(403).end("forbidden");
    return;
  }
  if (!existsSync(file) || statSync(file).isDirectory()) file = path.join(root, "index.html");
  const immutable = file.includes(`${path.sep}assets${path.sep}`);
  res.writeHead(200, {
    "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
    "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
    "x-content-type-options": "nosniff",
  });
  createReadStream(file).pipe(res);
});

server.listen(port, host, () => {
  console.log(`Sextant UI on http://${host}:${port}/ (agent: ${api || "the page's host on :8000"})`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
