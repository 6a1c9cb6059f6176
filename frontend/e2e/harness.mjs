// Real processes for the end-to-end tests: a temporary store holding the committed corpus (less one
// PDF, which the test uploads through the page) or a chosen few of its documents, the agent server
// (which starts the real sextant-kb subprocess itself) with no model or the local one, the static
// server for frontend/dist, and Debian's Chromium.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const FRONTEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = path.resolve(FRONTEND, "..");
export const CORPUS = path.join(REPO, "eval", "corpus", "documents");
export const UPLOADED = "lighthouse-history.pdf";
/** The Index Lab's committed benchmark results, which GET /lab serves (the agent's default in a checkout). */
export const LAB_RESULTS = path.join(REPO, "learning", "ann-lab.json");
export const ARTIFACTS = path.join(FRONTEND, "e2e", "artifacts");
/** The models folder that scripts/setup.sh fills (`sextant-models fetch`); SEXTANT_MODELS_DIR overrides. */
export const MODELS_DIR = path.resolve(process.env.SEXTANT_MODELS_DIR ?? path.join(REPO, "models"));
/** The local model's settings for the agent: the smallest known model, one thread, no verification pass. */
export const LOCAL_MODEL = {
  SEXTANT_PROVIDER: "local",
  SEXTANT_LOCAL_MODEL: "smollm2-135m-instruct",
  SEXTANT_MODELS_DIR: MODELS_DIR,
  SEXTANT_THREADS: "1",
  SEXTANT_VERIFY: "off",
};
export const VENV_BIN = path.resolve(REPO, process.env.SEXTANT_VENV ?? ".venv", "bin");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(url, child, log, seconds = 240) {
  for (let i = 0; i < seconds * 4; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode}); log:\n${log()}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} was not up within ${seconds} s; log:\n${log()}`);
}

function start(command, args, env, cwd) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  return { child, log: () => output };
}

/**
 * Start the stack. `documents`: the corpus files to ingest (default: all but UPLOADED; none: an empty
 * store). `model`: the agent's model settings (default: SEXTANT_PROVIDER=none, so answers are
 * excerpts; LOCAL_MODEL for the local llama.cpp model). `workspaces`: SEXTANT_WORKSPACES=on, so each
 * browser gets a private workspace.
 */
export async function startStack({ documents = null, model = { SEXTANT_PROVIDER: "none" }, workspaces = false } = {}) {
  for (const tool of ["sextant-agent", "sextant-ingest"]) {
    if (!existsSync(path.join(VENV_BIN, tool))) throw new Error(`no ${tool} in ${VENV_BIN}: run 'bash scripts/setup.sh' first`);
  }
  if (!existsSync(path.join(FRONTEND, "dist", "index.html"))) throw new Error("no frontend/dist: run 'npm run build' first");

  const work = mkdtempSync(path.join(tmpdir(), "sextant-e2e-"));
  const store = path.join(work, "store");
  const corpus = path.join(work, "corpus");
  mkdirSync(corpus);
  const chosen = documents ?? readdirSync(CORPUS).filter((name) => name !== UPLOADED);
  for (const name of chosen) cpSync(path.join(CORPUS, name), path.join(corpus, name));

  const env = {
    SEXTANT_CHROMA_DIR: store,
    ...model,
    HF_HUB_OFFLINE: "1",
    TRANSFORMERS_OFFLINE: "1",
    TOKENIZERS_PARALLELISM: "false",
    SEXTANT_STATE_DIR: path.join(work, "agent"), // spend and workspace records, away from the checkout's
    SEXTANT_LAB_RESULTS: LAB_RESULTS, // the default in a checkout; named so a stray setting cannot change it
    SEXTANT_WORKSPACES: workspaces ? "on" : "off",
  };
  if (chosen.length > 0) {
    const ingest = spawnSync(path.join(VENV_BIN, "sextant-ingest"), ["-r", corpus], {
      env: { ...process.env, ...env },
      cwd: work,
      encoding: "utf8",
    });
    if (ingest.status !== 0) throw new Error(`sextant-ingest failed (${ingest.status}):\n${ingest.stdout}\n${ingest.stderr}`);
  }

  const [agentPort, uiPort] = [await freePort(), await freePort()];
  const ui = `http://127.0.0.1:${uiPort}`;
  const api = `http://127.0.0.1:${agentPort}`;
  const agent = start(
    path.join(VENV_BIN, "sextant-agent"),
    [],
    { ...env, SEXTANT_HOST: "127.0.0.1", SEXTANT_PORT: String(agentPort), SEXTANT_ALLOWED_ORIGINS: ui, SEXTANT_RATE_LIMIT: "1000" },
    work, // cwd: no stray .env from the checkout
  );
  const server = start(
    process.execPath,
    [path.join(FRONTEND, "scripts", "serve.mjs"), "--port", String(uiPort), "--api", api],
    {},
    FRONTEND,
  );
  try {
    await waitFor(`${api}/health`, agent.child, agent.log);
    await waitFor(`${ui}/config.js`, server.child, server.log, 30);
  } catch (error) {
    agent.child.kill();
    server.child.kill();
    throw error;
  }
  const browser = await launchBrowser();

  return {
    ui,
    api,
    browser,
    agentLog: agent.log,
    async stop() {
      await browser.close().catch(() => undefined);
      for (const { child } of [server, agent]) {
        if (child.exitCode === null) {
          const exited = new Promise((r) => child.once("exit", r));
          child.kill("SIGTERM");
          await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
          if (child.exitCode === null) child.kill("SIGKILL");
        }
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** Headless Debian Chromium, with the flags this machine's closed network needs. */
export function launchBrowser() {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

/**
 * Run one test step; when it fails, save a full-page screenshot of each page (`{file prefix: page}`) in
 * e2e/artifacts and print the tail of the agent's log, then fail with the step's own error.
 */
export async function step(stack, pages, name, body) {
  try {
    await body();
  } catch (error) {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const [prefix, page] of Object.entries(pages)) {
      await page?.screenshot({ path: path.join(ARTIFACTS, `${prefix}${name}.png`), fullPage: true }).catch(() => undefined);
    }
    if (stack) console.error(`agent log (tail):\n${stack.agentLog().slice(-3000)}`);
    throw error;
  }
}
