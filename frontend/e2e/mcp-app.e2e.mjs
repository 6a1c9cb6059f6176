// The cited page inside an MCP host: sextant-kb's MCP App (the ui:// view kb_search names) rendered in headless
// Chromium by the official host bridge, AppBridge from @modelcontextprotocol/ext-apps. This file plays the host: it
// is the MCP client of a real sextant-kb over stdio, reads the view the tool names, and relays the view's calls.
// Run: node --test e2e/mcp-app.e2e.mjs   (scripts/test_frontend.sh runs it with the other e2e files)
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ARTIFACTS, CORPUS, FRONTEND, launchBrowser, step as runStep, UPLOADED, VENV_BIN } from "./harness.mjs";

const WAIT = { timeout: 120_000 };
const UI_EXTENSION = "io.modelcontextprotocol/ui";
const APP_MIME = "text/html;profile=mcp-app";
// The bare module names app-bridge.js imports, for a page that loads it without a bundler.
const IMPORTS = {
  "@modelcontextprotocol/ext-apps/app-bridge": "/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js",
  "@modelcontextprotocol/client": "/node_modules/@modelcontextprotocol/client/dist/index.mjs",
  "@modelcontextprotocol/client/_shims": "/node_modules/@modelcontextprotocol/client/dist/shimsBrowser.mjs",
  "@modelcontextprotocol/core": "/node_modules/@modelcontextprotocol/core/dist/index.mjs",
  "@modelcontextprotocol/core/internal": "/node_modules/@modelcontextprotocol/core/dist/internal.mjs",
  "zod/v4": "/node_modules/zod/v4/index.js",
  eventsource: "/node_modules/eventsource/dist/index.js",
  "eventsource-parser/stream": "/node_modules/eventsource-parser/dist/stream.js",
  "eventsource-parser": "/node_modules/eventsource-parser/dist/index.js",
  "pkce-challenge": "/node_modules/pkce-challenge/dist/index.browser.js",
};

// The host page: the view in a sandboxed iframe, AppBridge on its window, the tool call handed over by the test.
const HOST_PAGE = `<!DOCTYPE html><html><head><meta charset="utf-8">
<script type="importmap">${JSON.stringify({ imports: IMPORTS })}</script></head>
<body style="margin:0;background:#fff"><iframe id="view" title="sextant-kb" sandbox="allow-scripts allow-same-origin"
  style="border:0;width:900px;height:400px"></iframe>
<script type="module">
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
const view = document.getElementById("view");
const { toolArguments, toolResult } = await window.toolCall();
const bridge = new AppBridge(null, { name: "sextant-e2e-host", version: "1" }, { serverTools: {}, openLinks: {} },
  { hostContext: { theme: "light", displayMode: "inline", platform: "web" } });
bridge.oninitialized = async () => {
  await bridge.sendToolInput({ arguments: toolArguments });
  await bridge.sendToolResult(toolResult);
};
bridge.oncalltool = (params) => window.callServerTool(params);
bridge.onopenlink = async ({ url }) => { window.opened = url; return {}; };
bridge.onsizechange = ({ height }) => { if (height) view.style.height = height + "px"; };
await bridge.connect(new PostMessageTransport(view.contentWindow, view.contentWindow));
view.src = "/view.html";
</script></body></html>`;

let work;
let kb;
let browser;
let http;
let origin;
let view = "";

/** Serve the host page, the view as the server gave it, and the bridge's modules from node_modules. */
function serve() {
  const allowed = Object.values(IMPORTS).map((file) => path.dirname(path.dirname(file.split("/node_modules/")[1])));
  return createServer((request, response) => {
    const url = new URL(request.url, "http://host");
    if (url.pathname === "/host.html" || url.pathname === "/view.html") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return response.end(url.pathname === "/host.html" ? HOST_PAGE : view);
    }
    const file = path.normalize(url.pathname).replace(/^\/node_modules\//, "");
    if (url.pathname.startsWith("/node_modules/") && allowed.some((pkg) => file.startsWith(pkg.split("/dist")[0]))) {
      try {
        const body = readFileSync(path.join(FRONTEND, "node_modules", file));
        response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
        return response.end(body);
      } catch {
        // falls through to 404
      }
    }
    response.writeHead(404).end();
  });
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), "sextant-mcp-app-"));
  kb = new Client(
    { name: "sextant-e2e-host", version: "1" },
    { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } } },
  );
  const env = { ...process.env, SEXTANT_CHROMA_DIR: path.join(work, "store"), HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" };
  await kb.connect(new StdioClientTransport({ command: path.join(VENV_BIN, "sextant-kb"), env, stderr: "ignore" }));
  const pdf = readFileSync(path.join(CORPUS, UPLOADED)).toString("base64");
  for (const [name, args] of [
    ["kb_upload", { filename: UPLOADED, content_base64: pdf }],
    [
      "kb_ingest",
      { documents: [{ id: "sourdough", title: "Sourdough", content: readFileSync(path.join(CORPUS, "sourdough-guide.md"), "utf8") }] },
    ],
  ]) {
    const done = await kb.callTool({ name, arguments: args });
    assert.ok(!done.isError, `${name}: ${JSON.stringify(done.content)}`);
  }
  http = serve();
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${http.address().port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => undefined);
  http?.close();
  await kb?.close().catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** kb_search as the host's model would call it, the view it names, and that view opened in the host page. */
async function openView(query) {
  const { tools } = await kb.listTools();
  const search = tools.find((tool) => tool.name === "kb_search");
  const uri = search._meta?.ui?.resourceUri;
  assert.equal(uri, "ui://sextant-kb/passage");
  const { contents } = await kb.readResource({ uri });
  assert.equal(contents[0].mimeType, APP_MIME);
  view = contents[0].text;
  const toolArguments = { query, k: 3 };
  const toolResult = await kb.callTool({ name: "kb_search", arguments: toolArguments });
  const page = await browser.newPage({ viewport: { width: 960, height: 900 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  const calls = [];
  await page.exposeFunction("toolCall", () => ({ toolArguments, toolResult }));
  await page.exposeFunction("callServerTool", (params) => {
    calls.push(params.name);
    return kb.callTool(params);
  });
  await page.goto(`${origin}/host.html`);
  return { page, frame: page.frameLocator("#view"), calls };
}

test("a PDF hit shows its passage, the query's words marked, and the page with the passage highlighted", () =>
  runStep(null, {}, "mcp-app-pdf", async () => {
    const { page, frame, calls } = await openView("How many stone steps rise to the lantern of the Carrick Ness tower?");
    try {
      await frame.getByTestId("page-image").waitFor({ state: "visible", ...WAIT });
      assert.match(await frame.getByTestId("title").innerText(), /Carrick Ness/);
      assert.match(await frame.getByTestId("page-label").innerText(), /^page \S+/);
      assert.match(await frame.getByTestId("page-link").innerText(), /^kb:\/\/documents\/lighthouse-history\/pages\/\d+$/);
      assert.ok((await frame.getByTestId("passage-text").locator("mark").count()) >= 1, "the query's words are marked");
      assert.ok((await frame.getByTestId("highlight").count()) >= 1, "the passage is boxed on the page");
      // The boxed sentence is the passage's answer sentence, found whole on the page.
      assert.match(await frame.getByTestId("page-caption").innerText(), /highlighted \(quote\)/);
      // The page came through the host's bridge from kb_page_image; the view has no network of its own.
      assert.ok(calls.includes("kb_page_image"));
      await frame.getByTestId("page-link").click();
      await page.waitForFunction(() => typeof window.opened === "string");
      assert.match(await page.evaluate(() => window.opened), /^kb:\/\/documents\/lighthouse-history\/pages\//);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, "mcp-app-pdf-page.png"), fullPage: true });
    } finally {
      await page.close();
    }
  }));

test("a hit without pages shows its passage and draws no page", () =>
  runStep(null, {}, "mcp-app-markdown", async () => {
    const { page, frame, calls } = await openView("How long should sourdough starter ferment before baking?");
    try {
      await frame.getByTestId("passage-text").waitFor(WAIT);
      assert.match(await frame.getByTestId("title").innerText(), /sourdough/i);
      assert.ok((await frame.getByTestId("passage-text").locator("mark").count()) >= 1);
      assert.match(await frame.getByTestId("page-label").innerText(), /^no page/);
      assert.equal(await frame.getByTestId("page").isVisible(), false);
      assert.ok(!calls.includes("kb_page_image"), "nothing to draw: the page is not asked for");
    } finally {
      await page.close();
    }
  }));

test("a search that abstains says so instead of showing a passage", () =>
  runStep(null, {}, "mcp-app-abstained", async () => {
    const { page, frame } = await openView("What is the airspeed velocity of an unladen swallow in kilometres?");
    try {
      await frame.getByText(/Nothing in the documents answers this/).waitFor(WAIT);
      assert.equal(await frame.getByTestId("passage").isVisible(), false);
    } finally {
      await page.close();
    }
  }));
