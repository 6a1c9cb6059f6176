// End to end in headless Chromium against the real agent with the REAL LOCAL MODEL (llama.cpp,
// SmolLM2-135M from models/, one thread, verification off), the real sextant-kb subprocess and a
// store holding one committed document (the espresso machine manual, a PDF with page labels).
// SmolLM2 is weak but fast; the test checks the code path (a written answer, the loop's forced search,
// citations that open the passages the model was shown with their quotes marked), not the answer's quality.
// Every statement's quote is checked against its passage before a label is kept, so the 135M model may
// well be left with nothing to say: then the answer is the abstention sentence, with no [n] at all.
// Run: npm run e2e   (after `npm run build`; scripts/test_frontend.sh does both)
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, test } from "node:test";
import { LOCAL_MODEL, MODELS_DIR, step as runStep, startStack } from "./harness.mjs";

const DOCUMENT = "espresso-maintenance.pdf";
const QUESTION = "How often should the espresso machine be descaled?";
const NOT_ANSWERED = "The documents do not answer this question.";
// The shortest quote the backend counts as evidence (sextant.agent.evidence.MIN_QUOTE_CHARS).
const MIN_QUOTE_CHARS = 8;
const flat = (text) => text.replace(/\s+/g, " ").trim();
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

test(
  "the local model answers (or abstains), its forced search is in the trace, and each [n] opens its marked quote",
  { timeout: 600_000 },
  () =>
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

      // Either every [n] opens a shown espresso passage with its quote marked, or the answer abstains with no [n].
      const citations = answer.locator("button[data-citation]");
      const count = await citations.count();
      assert.equal(await answer.locator("[data-dangling]").count(), 0, "no label without a passage");
      // "How this answer was found" lists each statement the model wrote with the checks' verdicts on it: a kept one
      // behind every cited answer, a removed one naming the rule that removed it.
      const checked = turn.getByTestId("checked-statement");
      const fates = [];
      for (let i = 0; i < (await checked.count()); i++) {
        const fate = await checked.nth(i).getAttribute("data-fate");
        fates.push(fate);
        assert.ok((await checked.nth(i).getByTestId("verdict").count()) >= 1, "a checked statement shows its verdicts");
        if (fate === "removed") assert.match((await checked.nth(i).textContent()) ?? "", /removed by /);
      }
      console.log(`checked statements: ${fates.join(", ") || "none written"}`);
      if (count === 0) {
        assert.ok(text.includes(NOT_ANSWERED), `an answer with no [n] is the abstention sentence (${text})`);
        assert.ok(!fates.includes("kept"), "an abstention kept no statement");
        return;
      }
      assert.ok(fates.includes("kept"), "a cited answer shows the statement the checks kept");
      for (let i = 0; i < count; i++) {
        const label = await citations.nth(i).getAttribute("data-citation");
        assert.ok(shown.has(label), `[${label}] is one of the shown passages (${[...shown.keys()]})`);
        const evidenced = Number((await citations.nth(i).getAttribute("data-evidence")) ?? 0);
        assert.ok(evidenced > 0, `[${label}] carries the quote that was found in its passage`);
        await citations.nth(i).click();
        const viewer = page.getByTestId("passage-viewer");
        await viewer.waitFor();
        assert.match(await page.locator("dialog[open] h2").innerText(), new RegExp(`^\\[${label}\\]`));
        assert.match(await viewer.getByTestId("passage-document").innerText(), /Espresso Machine/);
        assert.equal((await viewer.getByTestId("passage-page").innerText()).trim().split(" ")[0], shown.get(label));
        const passageText = viewer.getByTestId("passage-text");
        const whole = flat(await passageText.innerText()).toLowerCase();
        assert.ok(whole.length > 0);
        // The statement's quote is highlighted, and what is highlighted is the passage's own text.
        const marks = passageText.locator("mark[data-evidence]");
        assert.ok((await marks.count()) >= 1, `[${label}] opens with its quote marked`);
        const marked = flat((await marks.allInnerTexts()).join(" "));
        assert.ok(marked.length >= MIN_QUOTE_CHARS, `the marked quote is a real quote (${marked})`);
        for (const m of await marks.allInnerTexts()) assert.ok(whole.includes(flat(m).toLowerCase()), `the mark "${m}" is passage text`);
        await page.keyboard.press("Escape");
        await viewer.waitFor({ state: "detached" });
      }
    }),
);
