// End to end in headless Chromium against the real agent with the REAL LOCAL MODEL (llama.cpp,
// SmolLM2-135M from models/, one thread, verification off), the real sextant-kb subprocess and a
// store holding one committed document (the espresso machine manual, a PDF with page labels).
// SmolLM2 is weak but fast; the test checks the code path (a written answer, the forced search,
// citations that open the passages the model was shown), not the answer's quality.
// Run: npm run e2e   (after `npm run build`; scripts/test_frontend.sh does both)
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, test } from "node:test";
import { LOCAL_MODEL, MODELS_DIR, startStack, step as runStep } from "./harness.mjs";

const DOCUMENT = "espresso-maintenance.pdf";
const QUESTION = "How often should the espresso machine be descaled?";
// Loading the model and answering on one busy CPU thread: generous, and no wall-clock assertions.
const WAIT = { timeout: 300_000 };
let stack;
let page;

before(async () => {
  const file = readdirSync(MODELS_DIR).find((f) => f.startsWith(`${LOCAL_MODEL.SEXTANT_LOCAL_MODEL}.`) && f.endsWith(".gguf"));
  if (!file) throw new Error(`no ${LOCAL_MODEL.SEXTANT_LOCAL_MODEL} in ${MODELS_DIR}: run 'bash scripts/setup.sh' (sextant-models fetch)`);
  stack = await startStack({ documents: [DOCUMENT], model: LOCAL_MODEL });
  const context = await stack.browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  await stack?.stop();
});

const step = (name, body) => runStep(stack, { "local-": page }, name, body);

test("the local model answers, its forced search is in the trace, and its [n] opens a page-labelled passage", { timeout: 600_000 }, () =>
  step("answer", async () => {
    // The model is configured: /health says so, and no "no model" banner appears once the page has read it.
    const health = page.waitForResponse((r) => new URL(r.url()).pathname === "/health", WAIT);
    await page.goto(stack.ui);
    const body = await (await health).json();
    assert.equal(body.model.configured, true, `the local model is configured (${JSON.stringify(body.model)})`);
    await page.getByTestId("document-count").waitFor(WAIT);
    assert.match(await page.getByTestId("document-count").innerText(), /^1 document:.*Espresso Machine/);
    assert.equal(await page.getByTestId("no-model-banner").count(), 0);

    await page.keyboard.press("/");
    await page.keyboard.type(QUESTION);
    await page.keyboard.press("Enter");
    const turn = page.locator('[data-testid="turn"]').last();
    await turn.and(page.locator('[data-status="done"]')).waitFor(WAIT);

    // A written answer from the model, not excerpts.
    const answer = turn.getByTestId("answer");
    const text = await answer.innerText();
    assert.doesNotMatch(text, /Excerpts, not a written answer/);
    assert.match(text, /smollm2-135m-instruct/, "the answer is labelled with the model that wrote it");
    console.log(`local model answer:\n${text}`);

    // The loop's forced kb_search, which found passages.
    const first = turn.getByTestId("trace-step").first();
    assert.match((await first.textContent()) ?? "", /kb_search[\s\S]*by the loop/); // in a closed <details>
    assert.equal(await first.getAttribute("data-outcome"), "found");

    // What the model was shown: the sources panel lists the espresso manual's passages, each with its page.
    const sources = page.getByTestId("sources").locator("li button");
    const shown = new Map();
    for (let i = 0; i < (await sources.count()); i++) {
      const name = (await sources.nth(i).getAttribute("aria-label")) ?? "";
      const m = /^Source (\d+): (.*), page (\S+)/.exec(name);
      assert.ok(m, `source ${i} names its page (${name})`);
      assert.match(m[2], /Espresso Machine/);
      shown.set(m[1], m[3]);
    }
    assert.ok(shown.size >= 1, "the search showed the model at least one passage");

    // Every [n] the model wrote is a control that opens a shown espresso passage with that page label.
    const citations = answer.locator("button[data-citation]");
    const count = await citations.count();
    assert.ok(count >= 1, "the answer cites at least one passage with an [n] control");
    assert.equal(await answer.locator("[data-dangling]").count(), 0, "no label without a passage");
    for (let i = 0; i < count; i++) {
      const label = await citations.nth(i).getAttribute("data-citation");
      assert.ok(shown.has(label), `[${label}] is one of the shown passages (${[...shown.keys()]})`);
      await citations.nth(i).click();
      const viewer = page.getByTestId("passage-viewer");
      await viewer.waitFor();
      assert.match(await page.locator("dialog[open] h2").innerText(), new RegExp(`^\\[${label}\\]`));
      assert.match(await viewer.getByTestId("passage-document").innerText(), /Espresso Machine/);
      assert.equal((await viewer.getByTestId("passage-page").innerText()).trim().split(" ")[0], shown.get(label));
      assert.ok((await viewer.getByTestId("passage-text").innerText()).trim().length > 0);
      await page.keyboard.press("Escape");
      await viewer.waitFor({ state: "detached" });
    }
  }));
