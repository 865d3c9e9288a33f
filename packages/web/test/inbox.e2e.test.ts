// End to end, issue 7 "Must show": `aep up` (relay + inbox) and `aep demo agent` as real
// processes, headless Debian chromium through playwright-core. The demo agent raises a
// five-field form; the test fills every field type (an "Other…" answer included), first without
// the required field (the emitter's rejection is shown), then corrected (accepted); the agent
// receives exactly the typed values; a second browser context (phone width) sees the request
// resolve without reloading; the permission request that follows is denied with a reason.
// A screenshot of each state goes to test-results/web/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { spawnAep } from '../../../test/support/cli.js';
import { launchBrowser, resultsDir } from './support/browser.js';
import { ensureWebBuilt, exited, Lines, startUp, stopChild } from './support/processes.js';

let browser: Browser;
let up: Awaited<ReturnType<typeof startUp>>;
let token = '';
const contexts: BrowserContext[] = [];

before(async () => {
  ensureWebBuilt();
  up = await startUp();
  const tokenLine = await up.out.wait((l) => l.trimStart().startsWith('Token:'), 'the token line');
  token = tokenLine.split('Token:')[1]?.trim() ?? '';
  browser = await launchBrowser();
});

after(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  if (up) await stopChild(up.child);
});

/** A fresh browser context (own storage, as another device would have) with the token entered. */
async function openInbox(viewport: { width: number; height: number }, external: string[]): Promise<Page> {
  const ctx = await browser.newContext({ viewport });
  contexts.push(ctx);
  const page = await ctx.newPage();
  const origin = new URL(up.url).origin;
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) external.push(r.url());
  });
  await page.goto(`${up.url}/`);
  if (contexts.length === 1) {
    // `aep up` always has a token: anonymous reading is refused, so no read-only path is offered.
    await page.getByTestId('token-required').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('button', { name: /without a token/ }).count(), 0);
    await shot(page, '00-token-screen');
  }
  await page.getByLabel('Relay token').fill(token);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(resultsDir, `${name}.png`), fullPage: true });
}

test("a person answers the demo agent's five-field form from the inbox; the agent receives exactly the typed values", async () => {
  const external: string[] = [];
  const agent = spawnAep(['demo', 'agent', '--relay', up.url, '--token', token]);
  const out = new Lines(agent.stdout, agent);
  const err = new Lines(agent.stderr);
  try {
    const requested = await out.json('requested');
    assert.equal(requested['kind'], 'form');
    const requestId = String(requested['id']);

    const a = await openInbox({ width: 1200, height: 900 }, external);
    const b = await openInbox({ width: 390, height: 844 }, external);
    for (const p of [a, b]) await p.locator(`.item[data-request="${requestId}"]`).waitFor({ timeout: 30_000 });
    await shot(a, '01-inbox-desktop');
    await shot(b, '01-inbox-phone');

    // Context B keeps the request open to watch it resolve live (a marker proves no reload).
    await b.evaluate(() => {
      (window as unknown as { __noReload?: boolean }).__noReload = true;
    });
    await b.locator(`.item[data-request="${requestId}"] a`).click();
    await b.locator(`.detail[data-request="${requestId}"]`).waitFor();
    await shot(b, '02-form-phone');

    await a.locator(`.item[data-request="${requestId}"] a`).click();
    const form = a.locator(`.detail[data-request="${requestId}"] form.answer-form`);
    await form.waitFor();
    // Provenance beside the agent's (quoted) text.
    const detail = a.locator(`.detail[data-request="${requestId}"]`);
    assert.match(await detail.locator('.prov').innerText(), /demo-agent/);
    assert.equal((await detail.locator('.agent-text blockquote').innerText()).trim(), 'Configure the nightly backup');
    await detail.locator('[data-route="live"]').waitFor({ timeout: 30_000 }); // roster: the agent holds the session
    await shot(a, '02-form');

    // Every field type except the required string: number, checkbox, multi select, Other… text.
    await form.getByLabel('Retention (days)').fill('30');
    await form.getByLabel('Encrypt at rest?').check();
    await form.getByRole('group', { name: 'Weekdays' }).getByLabel('Mon').check();
    await form.getByRole('group', { name: 'Weekdays' }).getByLabel('Fri').check();
    await form.getByRole('group', { name: 'Storage class' }).getByLabel('Other…').check();
    await form.getByLabel('Storage class: other answer').fill('cold-line');
    await form.getByRole('button', { name: 'Submit answer' }).click();

    // The emitter nacks it (required field missing) and the UI shows that next to the field.
    const rejected = await out.json('rejected');
    assert.equal(rejected['id'], requestId);
    await detail.locator('[data-phase="rejected"]').waitFor({ timeout: 30_000 });
    assert.match(await detail.locator('[data-phase="rejected"]').innerText(), /Rejected by the agent/);
    const bucket = detail.locator('[data-field="1"]');
    assert.match(await bucket.locator('.field-issues').innerText(), /required/i);
    await shot(a, '03-rejected');

    // Corrected: the same form, now with the required field; a new command is sent.
    await form.getByLabel('Bucket name').fill('nightly-bk');
    await form.getByRole('button', { name: 'Submit answer' }).click();
    const answered = await out.json('answered');
    assert.equal(answered['id'], requestId);
    assert.deepEqual(answered['values'], { 1: 'nightly-bk', 2: 30, 3: true, 4: ['1', '3'], 5: 'cold-line' });
    await detail.locator('.outcome[data-status="resolved"]').waitFor({ timeout: 30_000 });
    await a.locator(`.item[data-request="${requestId}"]`).waitFor({ state: 'detached' });
    await shot(a, '04-accepted');

    // The second context saw it resolve without any reload.
    await b.locator(`.detail[data-request="${requestId}"] .outcome[data-status="resolved"]`).waitFor({ timeout: 30_000 });
    await b.getByRole('link', { name: /All pending requests/ }).click(); // in-page navigation
    await b.locator(`.item[data-request="${requestId}"]`).waitFor({ state: 'detached' });
    assert.equal(await b.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload), true);
    await shot(b, '05-second-context-resolved');

    // Then the agent asks for a permission: answer it with a reason (deny needs no proof).
    const perm = await out.json('requested');
    const permReq = out.all
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      })
      .find((j) => j['event'] === 'requested' && j['kind'] === 'permission');
    assert.ok(permReq, `no permission request in: ${JSON.stringify(perm)}`);
    const permId = String(permReq['id']);
    await a.locator(`.item[data-request="${permId}"] a`).click();
    const pd = a.locator(`.detail[data-request="${permId}"]`);
    // The demo agent declares steering now, so the detail also holds the steer panel's own
    // "Reason" field: fill the answer's.
    await pd.locator('textarea[id^="reason-"]').fill('build dir is generated');
    await shot(a, '06-permission');
    await pd.locator('button[data-option="deny"]').click();
    const permAnswered = await out.wait((l) => l.includes('"answered"') && l.includes('"permission"'), 'permission answered');
    assert.deepEqual(JSON.parse(permAnswered), { event: 'answered', kind: 'permission', id: permId, option: 'deny', text: 'build dir is generated' });
    await pd.locator('.outcome[data-status="resolved"]').waitFor({ timeout: 30_000 });
    await shot(a, '07-permission-resolved');

    assert.equal(await exited(agent), 0);
    assert.equal(await a.locator('[data-testid="pending-count"]').innerText(), '0');

    // No request left the relay's origin; the token never appeared in a page address or a log.
    assert.deepEqual(external, []);
    assert.ok(!a.url().includes(token) && !b.url().includes(token));
    assert.ok(!up.err.all.join('\n').includes(token), 'token in the relay log');
  } catch (e) {
    process.stderr.write(`demo agent stderr:\n${err.all.join('\n')}\n`);
    throw e;
  } finally {
    await stopChild(agent);
  }
});

test('aep up keeps its token in a 0600 file so the inbox keeps working across restarts', () => {
  const saved = readFileSync(join(up.stateHome, 'aep', 'token'), 'utf8').trim();
  assert.equal(saved, token);
});
