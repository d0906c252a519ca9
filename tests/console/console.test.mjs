// Drives the console in a real browser (Debian's Chromium through playwright-core) against a
// running server whose contexts were written to: log in, browse streams, open one and check its
// events and chain, read it as it was before it began, watch the pipeline, log out. Saves a
// screenshot of each view. Usage: node console.test.mjs BASE_URL ADMIN_TOKEN SCREENSHOT_DIR.
// Exits non-zero, saying what was missing, on the first check that fails.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const [base, token, shots] = process.argv.slice(2);
if (!base || !token || !shots) {
  console.error("usage: node console.test.mjs BASE_URL ADMIN_TOKEN SCREENSHOT_DIR");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

function check(condition, what) {
  if (!condition) throw new Error(`console check failed: ${what}`);
  console.log(`ok: ${what}`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
const failures = [];
page.on("pageerror", (e) => failures.push(String(e)));
try {
  await page.goto(`${base}/console/`);

  // A wrong token is refused and not kept.
  await page.fill("#token", "not-the-token");
  await page.click("button[type=submit]");
  const refusal = await page.getByRole("alert").textContent({ timeout: 10000 });
  check(refusal.includes("not the admin token"), "a wrong token is refused");

  await page.fill("#token", token);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Streams" }).waitFor({ timeout: 10000 });
  check(!page.url().includes(token), "the token is not in the address");
  const kept = await page.evaluate(() => sessionStorage.getItem("palimpsest.admin-token"));
  check(kept === token, "the token is kept in the session");

  // Jump to a position: the log's second event, in its stream, marked.
  await page.fill("#position", "2");
  await page.getByRole("button", { name: "Go", exact: true }).click();
  await page.locator("tr.focus").waitFor({ timeout: 10000 });
  const focused2 = await page.locator("tr.focus td:nth-child(2)").textContent();
  check(focused2 === "2" && page.url().includes("position=2"), `position 2 opened in its stream (${page.url()})`);
  await page.goto(`${base}/console/#/streams`);

  // Every context wrote streams; pads' are listed on their own.
  await page.locator("table.streams tbody tr").first().waitFor();
  const all = await page.locator("table.streams tbody tr td:first-child").allTextContents();
  for (const context of ["pads", "atlas", "docs", "records", "resources"]) {
    check(all.some((s) => s.startsWith(`${context}/`)), `a ${context} stream is listed`);
  }
  await page.getByRole("button", { name: "pads", exact: true }).click();
  await page.waitForFunction(() =>
    [...document.querySelectorAll("table.streams tbody td:first-child")].every((td) => td.textContent.startsWith("pads/")));
  const pads = await page.locator("table.streams tbody tr td:first-child").allTextContents();
  check(pads.length >= 1 && pads.every((s) => s.startsWith("pads/")), `only pads streams (${pads.length})`);
  await page.screenshot({ path: join(shots, "streams.png"), fullPage: true });

  // A stream: its events, its chain verified, its payload unfolded.
  const padStream = pads.find((s) => s === "pads/pad/p1") ?? pads[0];
  await page.getByRole("link", { name: padStream, exact: true }).click();
  await page.getByRole("heading", { name: `Stream ${padStream}` }).waitFor();
  await page.locator(".chain .ok").waitFor({ timeout: 15000 });
  const rows = page.locator("table.events tbody tr");
  await rows.first().waitFor();
  const count = await rows.count();
  const version = await page.locator("table.events tbody tr:last-child td:first-child").textContent();
  check(count >= 1 && Number(version) === count, `every event of ${padStream} (${count})`);
  const chain = await page.locator(".chain").textContent();
  check(chain.includes(`${count} events`), `the chain verified over its events: ${chain}`);
  // Each event proven in the signed tree, in the page; the stream saved as an audit bundle.
  await page.getByRole("button", { name: "Check inclusion proofs" }).click();
  await page.waitForFunction(() => document.querySelector(".proof-result")?.textContent.includes("proven"), null, { timeout: 20000 });
  const proofs = await page.locator(".proof-result").textContent();
  check(proofs.includes("signature verified") && proofs.includes(`${count} of ${count} events proven`), proofs);
  const marks = await page.locator("table.events td.proven").allTextContents();
  check(marks.length === count && marks.every((m) => m === "✓ proven"), `every row proven (${marks.join(", ")})`);
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Export bundle" }).click(),
  ]);
  await download.saveAs(join(shots, "bundle.json"));
  check(true, "the bundle is saved");
  await page.locator("table.events tbody tr:first-child summary").click();
  check(await page.locator("table.events tbody tr:first-child pre").first().isVisible(), "the payload unfolds");
  await page.screenshot({ path: join(shots, "stream.png"), fullPage: true });

  // As it was before its first event: no such stream then.
  await page.fill("#at", "2000-01-01T00:00:00");
  await page.locator("#at").blur(); // the input's change, as when a user leaves the field
  const before = await page.getByRole("alert").textContent({ timeout: 10000 });
  check(before.includes("no event at or before"), `the stream before it began: ${before}`);

  // A pad at its head and at an older version: the text, its author's colour, the chat.
  await page.goto(`${base}/console/#/stream/pads/pad/console`);
  await page.locator(".pad-text").waitFor({ timeout: 15000 });
  const headText = await page.locator(".pad-text").textContent();
  check(headText.includes("first line") && headText.includes("second by ann"), `the pad's text at its head: ${headText}`);
  const bold = await page.locator(".pad-text span", { hasText: "bold" }).evaluate((el) => getComputedStyle(el).fontWeight);
  check(Number(bold) >= 700, `bold text in bold (${bold})`);
  const italic = await page.locator(".pad-text span", { hasText: "italic" }).evaluate((el) => getComputedStyle(el).fontStyle);
  check(italic === "italic", `italic text in italic (${italic})`);
  check((await page.locator(".chat").textContent()).includes("hello from ann"), "the chat beside it");
  await page.screenshot({ path: join(shots, "pad-head.png"), fullPage: true });
  const slider = page.getByRole("slider", { name: "Version" });
  await slider.focus();
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => document.querySelector("#version")?.textContent === "2");
  await page.waitForFunction(() => !document.querySelector(".pad-text")?.textContent.includes("second by ann"));
  const older = await page.locator(".pad-text").textContent();
  check(older.includes("first line") && !older.includes("second by ann"), `the pad at version 2: ${older}`);
  check(!(await page.locator(".chat").textContent()).includes("hello from ann"), "no chat yet at version 2");
  await page.screenshot({ path: join(shots, "pad-version-2.png"), fullPage: true });

  // A document's revision tree: two revisions 1-…, one the winner, the other a conflict.
  await page.goto(`${base}/console/#/streams`);
  await page.fill("#prefix", "docs/document/");
  await page.locator("#prefix").dispatchEvent("change");
  await page.getByRole("link", { name: /conflicted/ }).click();
  await page.locator(".revtree").waitFor({ timeout: 15000 });
  const nodes = await page.locator(".revtree li.rev").count();
  check(nodes === 2, `the tree's nodes (${nodes})`);
  check(await page.locator(".revtree li.winner").count() === 1, "one winner");
  check(await page.locator(".revtree li.conflict").count() === 1, "one conflict");
  await page.waitForFunction(() => document.querySelector("#doc-readers")?.textContent.length > 0, null, { timeout: 10000 });
  const channels = await page.locator("#doc-channels").textContent();
  const readers = await page.locator("#doc-readers").textContent();
  check(channels === "news" && readers === "ann", `its channels (${channels}) and who may read it (${readers})`);
  await page.screenshot({ path: join(shots, "revtree.png"), fullPage: true });

  // A file's revisions: two, the second changing its content only.
  await page.goto(`${base}/console/#/stream/resources/resource/${process.env.CONSOLE_FILE_ID}`);
  await page.locator("table.resource-revisions tbody tr").nth(1).waitFor({ timeout: 15000 });
  const revisions = await page.locator("table.resource-revisions tbody tr").allTextContents();
  check(revisions.length === 2 && revisions.every((r) => r.includes("report.txt")), `the file's revisions (${revisions.length})`);
  const changed = await page.locator("table.resource-revisions tbody tr:nth-child(2) td:nth-child(3)").textContent();
  check(changed.trim() === "content", `the second revision changed its content only (${changed.trim()})`);
  check((await page.locator(".revisions .where").textContent()) === "live", "the file is live");
  await page.screenshot({ path: join(shots, "resource.png"), fullPage: true });

  // The atlas map now (two geometries) and before they were published (none); the section's
  // submission and its review.
  await page.getByRole("link", { name: "Atlas map" }).click();
  await page.waitForFunction(() => document.querySelector("#geometry-count")?.textContent.startsWith("2 "), null, { timeout: 15000 });
  const drawn = await page.locator(".map path.leaflet-interactive").count();
  check(drawn === 2, `the map's features (${drawn})`);
  await page.screenshot({ path: join(shots, "map.png"), fullPage: true });
  await page.fill("#map-at", process.env.CONSOLE_BEFORE_PUBLISHING);
  await page.locator("#map-at").blur();
  await page.waitForFunction(() => document.querySelector("#geometry-count")?.textContent.startsWith("0 "), null, { timeout: 15000 });
  check(await page.locator(".map path.leaflet-interactive").count() === 0, "no feature before publishing");
  // The unfiltered list answers only after the field was typed into: the re-render it causes
  // must keep the typed prefix (a controlled field put the old one back, and the change searched
  // for every stream).
  let typedIn;
  const typed = new Promise((resolve) => { typedIn = resolve; });
  const holdUnfiltered = async (route) => {
    if (!route.request().url().includes("prefix=")) await typed;
    await route.continue();
  };
  await page.route("**/v1/streams?*", holdUnfiltered);
  await page.goto(`${base}/console/#/streams`);
  await page.fill("#prefix", "atlas/section/");
  typedIn();
  await page.waitForFunction(() => document.querySelectorAll("table.streams tbody tr").length > 0);
  await page.locator("#prefix").dispatchEvent("change");
  await page.unroute("**/v1/streams?*", holdUnfiltered);
  await page.waitForFunction(() => {
    const names = [...document.querySelectorAll("table.streams tbody td:first-child")];
    return names.length > 0 && names.every((td) => td.textContent.startsWith("atlas/section/"));
  });
  // Section ids are time-ordered (UUID v7): the last one listed is the one just published.
  const sections = await page.locator("table.streams tbody td:first-child a").all();
  await sections[sections.length - 1].click();
  await page.locator("table.submissions tbody tr").first().waitFor({ timeout: 15000 });
  const review = await page.locator("table.submissions tbody tr").first().textContent();
  check(review.includes("approved") && review.includes("checked against the chronicle"), `the submission's review: ${review}`);

  // The pipeline: the log's head, each read model's checkpoint, the chart.
  await page.getByRole("link", { name: "Operations" }).click();
  await page.locator("#head").waitFor();
  const head = Number(await page.locator("#head").textContent());
  check(head > 0, `the log's head (${head})`);
  await page.locator("table.read-models tbody tr").first().waitFor();
  const models = await page.locator("table.read-models tbody td:first-child").allTextContents();
  for (const model of ["pads", "atlas", "docs", "records", "resources", "stream_heads"]) {
    check(models.includes(model), `read model ${model} is shown`);
  }
  await page.locator(".chart canvas").waitFor({ timeout: 10000 });
  await page.waitForTimeout(2500);
  await page.screenshot({ path: join(shots, "operations.png"), fullPage: true });

  // Records: a class's rows, their data opened for the administrator.
  await page.getByRole("link", { name: "Records" }).click();
  await page.fill("#records-org", "o1");
  await page.fill("#records-class", "Book");
  await page.getByRole("button", { name: "List rows" }).click();
  await page.locator("table.records tbody tr").first().waitFor({ timeout: 10000 });
  const rowText = await page.locator("table.records tbody").textContent();
  check(rowText.includes("Œ") && rowText.includes("b1"), `the Book row of o1, opened: ${rowText.replace(/\s+/g, " ").slice(0, 120)}`);
  // A document's history: at its head (n 2), then at its first version (n 1).
  await page.locator("table.records tbody tr", { hasText: '"p1": "hist"' }).getByRole("button", { name: "History" }).click();
  await page.waitForFunction(() => document.querySelector("#record-data")?.textContent.includes('"n": 2'), null, { timeout: 10000 });
  const recordSlider = page.getByRole("slider", { name: "Record version" });
  await recordSlider.focus();
  await page.keyboard.press("Home");
  await page.waitForFunction(() => document.querySelector("#record-version")?.textContent === "1");
  await page.waitForFunction(() => document.querySelector("#record-data")?.textContent.includes('"n": 1'));
  check(true, "the record's first version, opened: n 1 (its head: n 2)");
  await page.screenshot({ path: join(shots, "records.png"), fullPage: true });

  // Audit: the latest head's signature checked in the page; every chain, with a progress bar.
  await page.getByRole("link", { name: "Audit" }).click();
  await page.waitForFunction(() => document.querySelector("#head-signature")?.textContent.includes("verified"), null, { timeout: 15000 });
  await page.getByRole("button", { name: "Verify every chain" }).click();
  await page.waitForFunction(() => {
    const bar = document.querySelector("#verify-progress");
    return bar && bar.max > 0 && bar.value === bar.max;
  }, null, { timeout: 30000 });
  const verified = await page.locator("#verify-result").textContent();
  check(!verified.includes("broken") && /(\d+) of \1 streams/.test(verified), `every chain verified: ${verified}`);
  await page.screenshot({ path: join(shots, "audit.png"), fullPage: true });

  // Keyboard: the navigation is reachable and shows its focus.
  await page.locator("header strong").click();
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => {
    const el = document.activeElement;
    return { text: el?.textContent, outline: el ? getComputedStyle(el).outlineStyle : "none" };
  });
  check(focused.text === "Streams", `Tab reaches the navigation first (${focused.text})`);
  check(focused.outline !== "none", `the focus is visible (outline ${focused.outline})`);

  // A phone's width: no view is wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const view of ["streams", "stream/pads/pad/console", "stream/docs/document", "map", "records", "operations", "audit"]) {
    await page.goto(`${base}/console/#/${view}`);
    await page.waitForTimeout(view === "map" ? 1500 : 700);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `#/${view} fits 390 px (${width})`);
  }
  await page.goto(`${base}/console/#/stream/pads/pad/console`);
  await page.locator(".pad-text").waitFor();
  await page.screenshot({ path: join(shots, "narrow-pad.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole("button", { name: "Log out" }).click();
  await page.locator("#token").waitFor();
  const forgotten = await page.evaluate(() => sessionStorage.getItem("palimpsest.admin-token"));
  check(forgotten === null, "logging out forgets the token");
  check(failures.length === 0, `no script error in the page (${failures.join("; ")})`);
} catch (e) {
  await page.screenshot({ path: join(shots, "failure.png"), fullPage: true }).catch(() => {});
  console.error(`at ${page.url()}; script errors in the page: ${failures.join("; ") || "none"}`);
  throw e;
} finally {
  await browser.close();
}
