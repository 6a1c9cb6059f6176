// End to end in headless Chromium against the real agent (SEXTANT_PROVIDER=none: answers are
// excerpts, which still cite), the real sextant-kb subprocess and the committed corpus.
// Run: npm run e2e   (after `npm run build`; scripts/test_frontend.sh does both)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { CORPUS, LAB_RESULTS, step as runStep, startStack, UPLOADED } from "./harness.mjs";

const WAIT = { timeout: 120_000 }; // the machine may be shared; answers come from real retrieval
let stack;
let page;

before(async () => {
  stack = await startStack();
  const context = await stack.browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

after(async () => {
  await stack?.stop();
});

const step = (name, body) => runStep(stack, { "": page }, name, body);

const lastTurn = () => page.locator('[data-testid="turn"]').last();

/** When the answer carries statements with evidence (`data-evidence` on the citation), the passage marks the quote. */
async function assertMarkedWhenEvidenced(citation, viewer) {
  const evidenced = Number((await citation.getAttribute("data-evidence")) ?? 0);
  if (evidenced > 0) assert.ok((await viewer.getByTestId("passage-text").locator("mark").count()) >= 1, "the quote is marked");
}

async function askByKeyboard(question) {
  await page.keyboard.press("/");
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  await lastTurn().and(page.locator('[data-status="done"]')).waitFor(WAIT);
}

test("the page says no model is configured and offers onboarding", () =>
  step("onboarding", async () => {
    await page.goto(stack.ui);
    await page.getByTestId("no-model-banner").waitFor(WAIT);
    assert.match(await page.getByTestId("no-model-banner").innerText(), /answers are excerpts/);
    await page.getByTestId("document-count").waitFor(WAIT);
    assert.match(await page.getByTestId("document-count").innerText(), /^24 documents/);
  }));

test("ask a question, watch the trace and sources, open a citation and see its passage", () =>
  step("ask", async () => {
    await askByKeyboard("How often should the espresso machine be descaled?");
    const answer = lastTurn().getByTestId("answer");
    assert.match(await answer.innerText(), /Excerpts, not a written answer/);
    assert.ok((await page.locator('[data-testid="trace-step"][data-outcome="found"]').count()) >= 1);
    assert.ok((await page.getByTestId("sources").locator("li").count()) >= 1);

    const citation = answer.locator("button[data-citation]").first();
    const label = await citation.getAttribute("data-citation");
    await citation.focus();
    await page.keyboard.press("Enter"); // keyboard only
    const viewer = page.getByTestId("passage-viewer");
    await viewer.waitFor();
    assert.match(await viewer.getByTestId("passage-document").innerText(), /Espresso Machine/);
    assert.equal((await viewer.getByTestId("passage-page").innerText()).trim().split(" ")[0], "3");
    assert.match(await viewer.getByTestId("passage-section").innerText(), /Descaling/);
    assert.match(await viewer.getByTestId("passage-text").innerText(), /descale every two months/);
    assert.match(await page.locator("dialog[open] h2").innerText(), new RegExp(`^\\[${label}\\]`));
    await assertMarkedWhenEvidenced(citation, viewer);
    // sextant-ingest keeps each PDF's original too: the cited page itself is shown, rendered by the knowledge base.
    const image = viewer.getByTestId("page-image").locator("img");
    await image.waitFor(WAIT);
    assert.ok(
      (await image.evaluate(async (img) => {
        await img.decode();
        return img.naturalWidth;
      })) >= 800,
    );
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "detached" });
  }));

test("drop a PDF on the page, then a follow-up finds a page-cited answer in it with labels kept", () =>
  step("upload", async () => {
    const before = await page.evaluate(() => JSON.parse(localStorage.getItem("sextant.conversations.v1") ?? "[]"));
    const bytes = readFileSync(path.join(CORPUS, UPLOADED)).toString("base64");
    const transfer = await page.evaluateHandle(
      ({ name, b64 }) => {
        const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([data], name, { type: "application/pdf" }));
        return dt;
      },
      { name: UPLOADED, b64: bytes },
    );
    await page.dispatchEvent("body", "dragenter", { dataTransfer: transfer });
    await page.getByText("Drop files to add them to the knowledge base").waitFor();
    await page.dispatchEvent("body", "drop", { dataTransfer: transfer });
    const result = page.getByTestId("upload-results").locator('li[data-status="added"]');
    await result.waitFor(WAIT);
    assert.match(await result.innerText(), /lighthouse-history\.pdf/);
    assert.equal(await page.getByRole("progressbar").getAttribute("aria-valuenow"), "100");
    await page.keyboard.press("Escape");
    const held = await page.getByTestId("sources").locator("li").count();
    assert.ok(held >= 1);

    await askByKeyboard("How many stone steps rise to the lantern of the Carrick Ness tower?");
    const cited = lastTurn().getByTestId("answer").locator("button[data-citation]");
    let found = null;
    for (let i = 0; i < (await cited.count()); i++) {
      await cited.nth(i).click();
      const viewer = page.getByTestId("passage-viewer");
      await viewer.waitFor();
      const document = await viewer.getByTestId("passage-document").innerText();
      const text = await viewer.getByTestId("passage-text").innerText();
      const hasPage = (await viewer.getByTestId("passage-page").count()) === 1;
      const label = Number(await cited.nth(i).getAttribute("data-citation"));
      const pageLabel = hasPage ? (await viewer.getByTestId("passage-page").innerText()).trim().split(" ")[0] : null;
      const hit = /lighthouse-history/.test(document) && /142 stone steps/.test(text);
      if (hit) {
        // An uploaded PDF keeps its original: the page itself is shown, rendered by the knowledge base.
        const image = viewer.getByTestId("page-image").locator("img");
        await image.waitFor(WAIT);
        const width = await image.evaluate(async (img) => {
          await img.decode();
          return img.naturalWidth;
        });
        assert.ok(width >= 800, `the page image is rendered at a readable size (${width} px wide)`);
        await assertMarkedWhenEvidenced(cited.nth(i), viewer);
      }
      await page.keyboard.press("Escape");
      await viewer.waitFor({ state: "detached" });
      if (hit) {
        found = { label, pageLabel };
        break;
      }
    }
    assert.ok(found, "a citation opens the uploaded PDF's passage about the 142 steps");
    assert.equal(found.pageLabel, "2");
    assert.ok(found.label > held, "new passages are numbered after the ones the conversation holds");
    // Label 1 still means what it meant in the first answer.
    const first = page.locator('[data-testid="turn"]').first().locator('button[data-citation="1"]').first();
    assert.match((await first.getAttribute("aria-label")) ?? "", /Espresso Machine/);
    assert.equal(before.length, 1);
  }));

test("reload and find the conversation, its answers and citations intact", () =>
  step("reload", async () => {
    await page.reload();
    const list = page.getByTestId("conversation-list");
    await list.waitFor(WAIT);
    assert.match(await list.innerText(), /How often should the espresso machine/);
    assert.equal(await page.locator('[data-testid="turn"]').count(), 2);
    await page.locator('[data-testid="turn"]').first().locator("button[data-citation]").first().click();
    await page.getByTestId("passage-viewer").waitFor();
    assert.match(await page.getByTestId("passage-text").innerText(), /descale/);
    await page.keyboard.press("Escape");
  }));

test("the command palette opens the Index Lab: the committed benchmark curves, then one query through every index", () =>
  step("lab", async () => {
    await page.keyboard.press("Control+k");
    const box = page.getByRole("combobox", { name: "Type a command" });
    await box.waitFor();
    await box.fill("index lab");
    await page.keyboard.press("Enter");
    const lab = page.getByTestId("lab-page");
    await lab.waitFor();

    // GET /lab answers with the checkout's learning/ann-lab.json: one chart per dataset, ours and the references apart.
    const committed = JSON.parse(readFileSync(LAB_RESULTS, "utf8"));
    await page.getByTestId("lab-dataset").first().waitFor(WAIT);
    assert.equal(await page.getByTestId("lab-unavailable").count(), 0);
    const datasets = await page.getByTestId("lab-dataset").evaluateAll((cards) => cards.map((c) => c.dataset.dataset));
    assert.deepEqual(
      datasets,
      committed.datasets.map((d) => d.dataset),
    );
    const first = committed.datasets[0];
    const chart = page.getByTestId("lab-chart").first();
    assert.equal(await chart.getByTestId("lab-curve").count(), first.curves.length);
    assert.equal(await chart.getByRole("img").count(), 1);
    const legend = await chart.getByTestId("lab-legend-item").evaluateAll((items) => items.map((i) => [i.textContent, i.dataset.system]));
    assert.ok(
      legend.some(([name, system]) => name === "hnsw" && system === "sextant"),
      "ours is in the legend",
    );
    assert.ok(
      legend.some(([name, system]) => name === "hnsw · hnswlib" && system === "hnswlib"),
      "hnswlib is in the legend",
    );
    assert.ok(
      legend.some(([name, system]) => name === "hnsw · faiss" && system === "faiss"),
      "faiss is in the legend",
    );
    assert.equal(await chart.getByTestId("lab-table").locator("tbody tr").count(), first.curves.length);

    // POST /lab/compare over the e2e store: every index answers with hits, with latency and overlap shown.
    await page.getByRole("textbox", { name: "Query to compare" }).fill("How often should the espresso machine be descaled?");
    await page.getByRole("button", { name: "Compare" }).click();
    await page.getByTestId("lab-comparison").waitFor(WAIT);
    const answers = page.getByTestId("lab-answer");
    const names = await answers.evaluateAll((els) => els.map((e) => e.dataset.index));
    for (const index of ["chroma", "flat", "hnsw", "ivfpq", "ivfpq_rerank"])
      assert.ok(names.includes(index), `${index} answered (got ${names})`);
    for (let i = 0; i < (await answers.count()); i++) {
      const answer = answers.nth(i);
      const hits = await answer.getByTestId("lab-hit").count();
      assert.ok(hits >= 1, `${names[i]} returned hits`);
      assert.match(await answer.innerText(), /ms · \d+% overlap/);
    }
    const exact = answers.and(page.locator('[data-index="flat"]'));
    assert.match(await exact.innerText(), /100% overlap/);
    assert.match(await exact.getByTestId("lab-hit").first().innerText(), /espresso/);

    await page.keyboard.press("?");
    await page.getByRole("heading", { name: "Keyboard shortcuts" }).waitFor();
    await page.keyboard.press("Escape");
  }));

test("usable at phone width", () =>
  step("phone", async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${stack.ui}/#/`);
    await page.getByRole("button", { name: "Conversations" }).click();
    await page.locator("dialog[open]").getByText("How often should the espresso machine").waitFor();
    await page.keyboard.press("Escape");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling (overflow ${overflow}px)`);
  }));
