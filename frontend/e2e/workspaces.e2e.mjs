// End to end with SEXTANT_WORKSPACES=on: two browsers (two contexts, so two localStorages) each get
// their own private workspace on their first upload, see only their own documents, and one deletes
// its workspace from the command palette. The real agent, no model, an empty store.
// Run: npm run e2e   (after `npm run build`; scripts/test_frontend.sh does both)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { CORPUS, step as runStep, startStack } from "./harness.mjs";

const WAIT = { timeout: 120_000 };
const TOKEN_KEY = "sextant.workspace.v1";
let stack;
const pages = {};

before(async () => {
  stack = await startStack({ documents: [], workspaces: true });
  for (const name of ["ada", "ben"]) {
    const context = await stack.browser.newContext({ viewport: { width: 1280, height: 860 } });
    pages[name] = await context.newPage();
    pages[name].on("pageerror", (e) => console.error(`page error (${name}):`, e.message));
  }
});

after(async () => {
  await stack?.stop();
});

const step = (name, body) =>
  runStep(stack, Object.fromEntries(Object.entries(pages).map(([who, page]) => [`workspaces-${who}-`, page])), name, body);

async function upload(page, name) {
  await page.getByTestId("file-input").setInputFiles({ name, mimeType: "text/plain", buffer: readFileSync(path.join(CORPUS, name)) });
  await page.getByTestId("upload-results").locator('li[data-status="added"]').waitFor(WAIT);
  await page.keyboard.press("Escape");
  await page.getByTestId("document-count").waitFor(WAIT);
  return page.getByTestId("document-count").innerText();
}

const token = (page) => page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? "null")?.token ?? null, TOKEN_KEY);

test("each browser gets its own workspace on its first upload and sees only its own documents", () =>
  step("two", async () => {
    for (const page of Object.values(pages)) {
      await page.goto(stack.ui);
      await page.getByTestId("workspace-note").waitFor(WAIT);
    }
    assert.equal(await token(pages.ada), null, "opening the page creates no workspace");

    assert.match(await upload(pages.ada, "aquarium-cycling.txt"), /^1 document: .*quarium/i);
    assert.match(await pages.ada.getByTestId("workspace-expiry").innerText(), /^Private workspace — deleted at /);
    assert.match(await upload(pages.ben, "climbing-gym-rules.txt"), /^1 document: .*limbing/i);

    const [ada, ben] = [await token(pages.ada), await token(pages.ben)];
    assert.ok(ada && ben && ada !== ben, "two different workspace tokens");
    await pages.ada.reload();
    await pages.ada.getByTestId("document-count").waitFor(WAIT);
    assert.doesNotMatch(await pages.ada.getByTestId("document-count").innerText(), /limbing/i);
  }));

test("deleting a workspace from the command palette empties it, and the other is untouched", () =>
  step("delete", async () => {
    const page = pages.ada;
    page.once("dialog", (dialog) => dialog.accept());
    await page.keyboard.press("Control+k");
    await page.getByRole("combobox", { name: "Type a command" }).fill("delete this workspace");
    await page.keyboard.press("Enter");
    await page.getByText("Workspace deleted").waitFor(WAIT);
    assert.equal(await token(page), null);
    assert.equal(await page.getByTestId("document-count").count(), 0);
    assert.equal(await page.getByTestId("workspace-expiry").count(), 0);

    await pages.ben.reload();
    assert.match(await pages.ben.getByTestId("document-count").innerText(), /^1 document/);
  }));
