// The new formats end to end: a slide deck and a scanned page dropped on the page, then questions answered from
// them, in headless Chromium against the real agent (SEXTANT_PROVIDER=none: answers are excerpts, which still cite
// and carry their quotes), the real sextant-kb subprocess and the committed corpus. The files are in e2e/fixtures/,
// written by make_fixtures.py; what they say is in that script, and in no corpus document.
// Run: node --test e2e/formats.e2e.mjs   (after `npm run build`; scripts/test_frontend.sh runs it with the others)
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { ARTIFACTS, FRONTEND, step as runStep, startStack } from "./harness.mjs";

const WAIT = { timeout: 120_000 }; // the machine may be shared; the scan is read by OCR on upload
const FIXTURES = path.join(FRONTEND, "e2e", "fixtures");
const DECK = { name: "kiln-firing-workshop.pptx", type: "application/vnd.openxmlformats-officedocument.presentationml.presentation" };
const SCAN = { name: "cheese-dairy-scan.pdf", type: "application/pdf" };
/** Why the scan cannot be read here, or false: sextant-kb runs `tesseract` from PATH with English (SEXTANT_OCR_LANG=eng). */
function whyNoOcr() {
  const listed = spawnSync("tesseract", ["--list-langs"], { encoding: "utf8" });
  if (listed.error) return "no tesseract on PATH, so the scan cannot be read (CI installs it: apt-get install tesseract-ocr)";
  const languages = listed.stdout
    .split("\n")
    .slice(1)
    .map((line) => line.trim()); // the first line names the data folder
  return languages.includes("eng") ? false : "Tesseract has no English data (apt-get install tesseract-ocr-eng)";
}
let stack;
let page;

before(async () => {
  stack = await startStack();
  const context = await stack.browser.newContext({ viewport: { width: 1280, height: 860 } });
  page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(stack.ui);
  await page.getByTestId("document-count").waitFor(WAIT);
});

after(async () => {
  await stack?.stop();
});

const step = (name, body) => runStep(stack, { "formats-": page }, name, body);

const lastTurn = () => page.locator('[data-testid="turn"]').last();

/** Drop one fixture on the page, as a person drags a file from their desktop, and wait until it is added. */
async function drop({ name, type }) {
  const b64 = readFileSync(path.join(FIXTURES, name)).toString("base64");
  const transfer = await page.evaluateHandle(
    ({ name, type, b64 }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name, { type }));
      return dt;
    },
    { name, type, b64 },
  );
  await page.dispatchEvent("body", "dragenter", { dataTransfer: transfer });
  await page.getByText("Drop files to add them to the knowledge base").waitFor();
  await page.dispatchEvent("body", "drop", { dataTransfer: transfer });
  const result = page.getByTestId("upload-results").locator("li").filter({ hasText: name });
  await result.waitFor(WAIT);
  assert.equal(await result.getAttribute("data-status"), "added", await result.innerText());
  await page.keyboard.press("Escape");
  await page.getByTestId("upload-dialog").waitFor({ state: "detached" });
}

async function ask(question) {
  await page.keyboard.press("/");
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  await lastTurn().and(page.locator('[data-status="done"]')).waitFor(WAIT);
}

/**
 * Open the last answer's citations in turn until one shows a passage of `title`; leave the viewer open on it.
 * Other documents may be cited first (retrieval is real), so the test looks for the right one rather than at [1].
 */
async function openCitationOf(title) {
  const cited = lastTurn().getByTestId("answer").locator("button[data-citation]");
  const seen = [];
  for (let i = 0; i < (await cited.count()); i++) {
    await cited.nth(i).click();
    const viewer = page.getByTestId("passage-viewer");
    await viewer.waitFor();
    const document = await viewer.getByTestId("passage-document").innerText();
    if (document.includes(title)) return { citation: cited.nth(i), viewer };
    seen.push(document);
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "detached" });
  }
  assert.fail(`no citation opens ${title}; they open: ${seen.join(" | ")}`);
}

/** An excerpt answer (no model) carries the quote it cites, and the viewer marks it in the passage. */
async function assertQuoteMarked(citation, viewer) {
  assert.ok(Number((await citation.getAttribute("data-evidence")) ?? 0) >= 1, "the citation carries its quote");
  assert.ok((await viewer.getByTestId("passage-text").locator("mark").count()) >= 1, "the quote is marked in the passage");
}

/** The term before the passage's page number: "Page" or "Slide". */
const pageTerm = (viewer) => viewer.getByTestId("passage-page").evaluate((dd) => dd.previousElementSibling?.textContent ?? "");

test("drop a slide deck, ask about its third slide, and the citation says Slide 3", () =>
  step("slides", async () => {
    await drop(DECK);
    await ask("What temperature does the glaze firing in the kiln peak at?");
    const { citation, viewer } = await openCitationOf("Kiln Firing Workshop");
    await assertQuoteMarked(citation, viewer);
    assert.equal(await pageTerm(viewer), "Slide");
    assert.equal((await viewer.getByTestId("passage-page").innerText()).trim(), "3");
    assert.match(await viewer.getByTestId("passage-section").innerText(), /The glaze firing/);
    assert.match(await viewer.getByTestId("passage-text").innerText(), /peaks at cone 6, about 1222 degrees Celsius/);
    // A deck is not a PDF: no page image is asked for, and its whole slide is offered as text, named as a slide.
    assert.equal(await viewer.getByTestId("page-image").count(), 0);
    await viewer.getByRole("button", { name: "Show the whole slide 3" }).click();
    const whole = viewer.getByRole("region", { name: "Slide 3" });
    await whole.waitFor(WAIT);
    assert.match(await whole.innerText(), /Hold the peak for fifteen minutes/);
    assert.doesNotMatch(await whole.innerText(), /Loading the kiln/, "the whole slide is slide 3 alone");
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "detached" });
  }));

test("drop a scanned page, ask about it, and the citation shows the OCR'd passage and the page with its quote", { skip: whyNoOcr() }, () =>
  step("scan", async () => {
    await drop(SCAN);
    await ask("How much calf rennet is added for every ten litres of milk?");
    // The page image is fetched as the viewer opens; its response says how many quoted words were highlighted.
    const images = [];
    const keep = (response) => response.url().includes("/image") && images.push(response);
    page.on("response", keep);
    const { citation, viewer } = await openCitationOf("Hillside Dairy");
    assert.equal(await pageTerm(viewer), "Page");
    assert.equal((await viewer.getByTestId("passage-page").innerText()).trim(), "1");
    assert.match(await viewer.getByTestId("passage-text").innerText(), /four millilitres of calf rennet/);

    const image = viewer.getByTestId("page-image").locator("img");
    await image.waitFor(WAIT);
    const width = await image.evaluate(async (img) => {
      await img.decode();
      return img.naturalWidth;
    });
    assert.ok(width >= 800, `the scanned page is rendered at a readable size (${width} px wide)`);
    // Excerpt answers quote their passage: the quote is marked in the text and, found again by OCR, highlighted on
    // the scan (the count comes back in a header, and the page says so when it is none).
    await assertQuoteMarked(citation, viewer);
    const id = (await viewer.getByTestId("passage-document").innerText()).match(/\(([^()]+)\)$/)?.[1];
    assert.ok(id, "the viewer names the document's id");
    const response = images.find((r) => r.url().includes(`/documents/${encodeURIComponent(id)}/pages/1/image`));
    assert.ok(response, `the page image of ${id} was fetched (fetched: ${images.map((r) => r.url()).join(", ")})`);
    assert.match(new URL(response.url()).search, /quote=/);
    const highlights = Number(response.headers()["x-sextant-highlights"]);
    assert.ok(highlights >= 1, `the quote is highlighted on the scanned page (${highlights} highlights)`);
    assert.equal(await viewer.getByText("The quoted words were not found on this page's image.").count(), 0);
    assert.match((await image.getAttribute("alt")) ?? "", /the quoted words highlighted$/);

    page.off("response", keep);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator("dialog[open]").screenshot({ path: path.join(ARTIFACTS, "formats-scan-passage.png") });
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "detached" });
  }),
);
