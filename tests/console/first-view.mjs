// Measures how long the console's first view (the streams) takes to show its rows, in
// Debian's Chromium, already logged in: from the navigation's start to the first row drawn.
// Usage: node first-view.mjs BASE_URL ADMIN_TOKEN. Prints `first view: N ms` (three loads,
// the median); reports, asserts nothing.
import { chromium } from "playwright-core";

const [base, token] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu"],
});
try {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((t) => sessionStorage.setItem("palimpsest.admin-token", t), token);
    const page = await context.newPage();
    await page.goto(`${base}/console/#/streams`);
    await page.locator("table.streams tbody tr").first().waitFor({ timeout: 30000 });
    times.push(await page.evaluate(() => performance.now()));
    await context.close();
  }
  times.sort((a, b) => a - b);
  console.log(`first view: ${Math.round(times[1])} ms (loads: ${times.map(Math.round).join(", ")} ms)`);
} finally {
  await browser.close();
}
