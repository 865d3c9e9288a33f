// The inbox in headless chromium against a real relay (in-process, port 0) fed over HTTP:
// capture-level honesty (AEP-0006 §5.1 placeholders), respond_via (AEP-0008 §2), unknown kinds
// degrade to prompt + text reply, agent text is text (never markup), a relay refusal is shown
// (AEP-0004 §4.2 `no-route`), a refused token returns to the token screen, keyboard-only use.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { webRoot } from '@aep/web';
import { launchBrowser, postEvents, resultsDir } from './support/browser.js';
import { formRequest, permissionRequest, sessionEvent } from './support/fixtures.js';
import { ensureWebBuilt } from './support/processes.js';

const token = 'render-test-token-0123456789';
let relay: RelayHandle;
let browser: Browser;
const ids: Record<string, string> = {};

before(async () => {
  ensureWebBuilt();
  relay = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
  const meta = formRequest('meta-bot', 's_meta', 1, 'metadata');
  const oob = sessionEvent('hermes', 's_oob', 1, 'attention.requested', {
    capture: 'redacted',
    data: { kind: 'review', prompt: 'Approve the deploy?', options: [{ id: 'approve', label: 'Approve' }], respond_via: ['oob'] },
  });
  const input = sessionEvent('writer', 's_in', 1, 'attention.requested', {
    capture: 'redacted',
    data: { kind: 'input', prompt: 'Name the release <img src=x onerror="window.__xss=1"> <b>bold</b>' },
  });
  const perm = permissionRequest('claude-code', 's_perm', 1);
  const closed = sessionEvent('writer', 's_in', 2, 'attention.requested', { capture: 'redacted', data: { kind: 'input', prompt: 'already answered' } });
  const closedEnd = sessionEvent('writer', 's_in', 3, 'attention.timeout', { subject: closed['id'] });
  // An MCP elicitation as the bridge records it: a form that also declares decline / cancel options.
  const elicit = formRequest('mcp-bridge', 's_elicit', 1);
  (elicit['data'] as Record<string, unknown>)['options'] = [
    { id: 'decline', label: 'Decline' },
    { id: 'cancel', label: 'Cancel' },
  ];
  await postEvents(relay.url, token, [
    sessionEvent('meta-bot', 's_meta', 0, 'session.started'),
    meta,
    oob,
    input,
    perm,
    closed,
    closedEnd,
    elicit,
    sessionEvent('writer', 's_in', 4, 'run.started', { run: 'r1' }),
    sessionEvent('writer', 's_in', 5, 'tool.completed', { run: 'r1', data: { tool: { name: 'Read' } } }),
  ]);
  ids['meta'] = String(meta['id']);
  ids['oob'] = String(oob['id']);
  ids['input'] = String(input['id']);
  ids['perm'] = String(perm['id']);
  ids['closed'] = String(closed['id']);
  ids['elicit'] = String(elicit['id']);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await relay?.close();
});

async function inbox(viewport = { width: 1100, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Relay token').fill(token);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.locator('.inbox').waitFor();
  return page;
}

async function open(page: Page, id: string) {
  await page.locator(`.item[data-request="${id}"] a`).click();
  const d = page.locator(`.detail[data-request="${id}"]`);
  await d.waitFor();
  return d;
}

test('only pending requests are listed; a timed-out one is not', async () => {
  const page = await inbox();
  assert.equal(await page.locator('.inbox .item').count(), 5);
  assert.equal(await page.locator(`.item[data-request="${ids['closed']}"]`).count(), 0);
  assert.equal(await page.getByTestId('pending-count').innerText(), '5');
  await page.close();
});

test('at a metadata ceiling the labels are honest placeholders with a note', async () => {
  const page = await inbox();
  const d = await open(page, ids['meta'] ?? '');
  assert.match(await d.locator('.withheld').innerText(), /withheld at capture level metadata/);
  assert.equal(await d.getByLabel('Question 1').count(), 1);
  assert.equal(await d.getByRole('group', { name: 'Question 4' }).getByLabel('Choice 2').count(), 1);
  assert.match(await d.locator('.agent-text figcaption').innerText(), /synthesized/i);
  await page.screenshot({ path: join(resultsDir, '10-metadata-placeholders.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: join(resultsDir, '10-metadata-placeholders-dark.png'), fullPage: true });
  await page.close();
});

test('respond_via without control shows the request as information only', async () => {
  const page = await inbox();
  const d = await open(page, ids['oob'] ?? '');
  assert.match(await d.locator('.note').first().innerText(), /answered elsewhere \(oob\)/);
  assert.equal(await d.getByRole('button', { name: 'Approve' }).isDisabled(), true);
  await page.close();
});

test('agent text is rendered as text, never as markup', async () => {
  const page = await inbox();
  const d = await open(page, ids['input'] ?? '');
  assert.match(await d.locator('.agent-text blockquote').innerText(), /<img src=x onerror="window.__xss=1"> <b>bold<\/b>/);
  assert.equal(await d.locator('.agent-text img, .agent-text b').count(), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
  await page.close();
});

test('an unknown-kind request is answered by keyboard alone; the relay refusal (no-route) is shown', async () => {
  const page = await inbox({ width: 390, height: 844 });
  await page.locator(`.item[data-request="${ids['input']}"] a`).focus();
  await page.keyboard.press('Enter');
  const d = page.locator(`.detail[data-request="${ids['input']}"]`);
  await d.waitFor();
  // The roster snapshot already tells the person nobody holds this session.
  await d.locator('[data-route="no-route"]').waitFor({ timeout: 30_000 });
  // Focus moves to the request heading; then the session link (provenance), the reply box, the button.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 's_in');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id?.startsWith('reply-')), true);
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
  assert.notEqual(outline, 'none', 'focus is visible');
  await page.keyboard.type('v1.2 "Otter"');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Send reply');
  await page.keyboard.press('Enter');
  // Nobody holds session s_in live: the relay refuses on the target's behalf.
  const phase = d.locator('[data-phase="refused"]');
  await phase.waitFor({ timeout: 30_000 });
  assert.match(await phase.innerText(), /no-route/);
  await page.screenshot({ path: join(resultsDir, '11-refused-phone.png'), fullPage: true });
  await page.close();
});

test("a form that also lists decline / cancel as options shows each once, with the inbox's labels", async () => {
  const page = await inbox();
  const d = await open(page, ids['elicit'] ?? '');
  const decline = d.getByRole('button', { name: 'Decline to answer', exact: true });
  assert.equal(await decline.count(), 1);
  assert.equal(await d.getByRole('button', { name: 'Cancel (dismiss unanswered)', exact: true }).count(), 1);
  assert.equal(await d.locator('[data-testid^="form-option-"]').count(), 2, 'no duplicate of the listed refusals');
  // Nobody holds s_elicit live, so the relay refuses the command: proof that one was sent.
  await decline.click();
  const phase = d.locator('[data-phase="refused"]');
  await phase.waitFor({ timeout: 30_000 });
  assert.match(await phase.innerText(), /no-route/);
  await page.close();
});

test('the session view is a live, filterable timeline', async () => {
  const page = await inbox();
  await page.goto(`${relay.url}/#/s/s_in`);
  const tl = page.locator('.timeline');
  await tl.waitFor();
  assert.equal(await tl.locator('.ev').count(), 5);
  await tl.getByRole('checkbox', { name: /attention/ }).uncheck();
  assert.equal(await tl.locator('.ev').count(), 2);
  await tl.getByLabel(/Filter by type/).fill('tool');
  assert.equal(await tl.locator('.ev').count(), 1);
  await tl.getByLabel(/Filter by type/).fill('');
  await tl.getByRole('checkbox', { name: /attention/ }).check();
  // The shared attr-match filter: valid narrows, invalid matches nothing (fails closed).
  await tl.getByLabel(/attr-match filter/).fill('{"type":"attention.*"}');
  assert.equal(await tl.locator('.ev').count(), 3);
  await tl.getByLabel(/attr-match filter/).fill('{"seq":1}');
  assert.equal(await tl.locator('.ev').count(), 0);
  assert.match(await tl.getByRole('status').innerText(), /invalid-filter\.forbidden-key/);
  await tl.getByLabel(/attr-match filter/).fill('');
  await postEvents(relay.url, token, [sessionEvent('writer', 's_in', 6, 'run.completed', { run: 'r1' })]);
  await tl.locator('.ev', { hasText: 'run.completed' }).waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(resultsDir, '12-session-timeline.png'), fullPage: true });
  await page.close();
});

test('a token the relay refuses sends the person back to the token screen', async () => {
  const page = await browser.newPage();
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Relay token').fill('wrong-token');
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.getByRole('alert').waitFor({ timeout: 30_000 });
  // One clear refusal (issue 14 item 5): one alert, one sentence, nothing else claiming an error.
  assert.equal(await page.getByRole('alert').count(), 1);
  assert.equal((await page.getByRole('alert').innerText()).trim(), 'The relay refused this token. Enter the token printed by aep up.');
  assert.doesNotMatch(await page.locator('body').innerText(), /unreachable|AEP_CLIENT|HTTP 401|reconnecting/i);
  assert.equal(await page.evaluate(() => localStorage.getItem('aep.inbox.token')), null);
  await page.close();
});

test('malformed payloads (envelope-valid) never break the inbox', async () => {
  const weird = [
    { kind: 'form', prompt: 42, fields: 'nope' },
    { kind: 'form', prompt: 'select without choices', fields: [{ id: 'x', type: 'select', label: 'X' }, null, 7, { id: 'y', type: 'date', label: 'Y' }] },
    { kind: 7, prompt: ['a'], options: [1, null, { id: 'ok' }], respond_via: 'control' },
    { kind: 'permission', prompt: 'p', options: 'allow' },
    { kind: 'form', prompt: 'choices not objects', fields: [{ id: 'c', type: 'select', label: 'C', choices: [1, 'a', { id: 'k' }], multi: 'yes' }] },
  ];
  const events = weird.map((data, i) => sessionEvent('fuzz', 's_fuzz', i + 1, 'attention.requested', { capture: 'redacted', data }));
  await postEvents(relay.url, token, events);
  const page = await inbox();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  for (const e of events) {
    await page.locator(`.item[data-request="${String(e['id'])}"] a`).click();
    await page.locator('#main article, #main p.bad').first().waitFor();
  }
  assert.deepEqual(errors, []);
  assert.equal(await page.locator('.inbox .item').count(), 5 + events.length);
  await page.close();
});

test('without a token (a relay in watch-only mode) the inbox reads but offers no answer', async () => {
  const open = await startRelay({ port: 0, storePath: null, staticDir: webRoot });
  try {
    const perm = permissionRequest('claude-code', 's_ro', 1);
    await postEvents(open.url, '', [perm]);
    const page = await browser.newPage();
    await page.goto(`${open.url}/`);
    await page.getByRole('button', { name: /without a token/ }).click();
    await page.locator(`.item[data-request="${String(perm['id'])}"] a`).click();
    const d = page.locator(`.detail[data-request="${String(perm['id'])}"]`);
    await d.waitFor();
    assert.match(await d.locator('.note').first().innerText(), /Read-only/);
    assert.equal(await d.locator('button[data-option="deny"]').isDisabled(), true);
    await page.close();
  } finally {
    await open.close();
  }
});
