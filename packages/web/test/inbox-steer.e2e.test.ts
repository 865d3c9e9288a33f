// Steering from the inbox (issue 14 item 4, contract C8) in headless chromium against a real
// relay and real test agents (`@aep/client` EmitterConnection): Cancel (run or session, with
// an optional reason), Pause and Resume are sent as `control.cancel` / `control.pause` /
// `control.resume` over the inbox's WebSocket; the ack and the outcome are shown; a nack
// `unsupported` reads "this agent cannot …"; the controls are offered only for what the
// session's roster entry declares in `control.accepts`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { validateEvent } from '@aep/protocol';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { webRoot } from '@aep/web';
import { launchBrowser, resultsDir } from './support/browser.js';
import { ensureWebBuilt } from './support/processes.js';
import { startAgent } from './support/agent.js';
import type { TestAgent } from './support/agent.js';

const token = 'steer-test-token-0123456789abc';
let relay: RelayHandle;
let browser: Browser;
let steerable: TestAgent;
let half: TestAgent;
let plain: TestAgent;
let requestInSteer = '';
let requestInPlain = '';

const ev = (c: { event: unknown }) => c.event as Record<string, unknown>;

before(async () => {
  ensureWebBuilt();
  relay = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
  // An agent that honours all three and reports each outcome, cause-linked (AEP-0004 §5).
  steerable = await startAgent(relay.url, token, 'steerable', ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume']);
  const outcome = (type: string, data: Record<string, unknown>, run?: string) => (cmd: { event: unknown }) => ({
    status: 'accepted' as const,
    after: () => {
      steerable.conn.emit('s_steer', type, data, { cause: String(ev(cmd)['id']), ...(run ? { run } : {}) });
    },
  });
  steerable.decide('control.pause', outcome('progress.status', { status: 'paused' }));
  steerable.decide('control.resume', outcome('progress.status', { status: 'running' }));
  steerable.decide('control.cancel', (cmd) => {
    const run = ev(cmd)['run'];
    return typeof run === 'string' ? outcome('run.cancelled', { by: 'user' }, run)(cmd) : outcome('session.ended', { reason: 'cancelled' })(cmd);
  });
  steerable.conn.emit('s_steer', 'session.started', {});
  steerable.conn.emit('s_steer', 'run.started', {}, { run: 'r1' });
  requestInSteer = steerable.conn.emit(
    's_steer',
    'attention.requested',
    { kind: 'input', prompt: 'Which branch?', respond_via: ['control'] },
    { capture: 'full', severity: 'notice' },
  ).id;
  // An agent that declares pause but cannot honour it right now: nacks `unsupported`.
  half = await startAgent(relay.url, token, 'half', ['control.pause']);
  half.decide('control.pause', () => ({ status: 'rejected', reason: 'unsupported' }));
  half.conn.emit('s_half', 'session.started', {});
  // An agent that declares no steering command at all.
  plain = await startAgent(relay.url, token, 'plain', ['control.attention.respond']);
  requestInPlain = plain.conn.emit(
    's_plain',
    'attention.requested',
    { kind: 'input', prompt: 'Name?', respond_via: ['control'] },
    { capture: 'full', severity: 'notice' },
  ).id;
  for (const a of [steerable, half, plain]) await a.conn.flush(10_000);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  for (const a of [steerable, half, plain]) await a?.close();
  await relay?.close();
});

async function inbox(hash = ''): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Relay token').fill(token);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.locator('.top .conn-live').waitFor({ timeout: 30_000 });
  if (hash) await page.goto(`${relay.url}/${hash}`);
  return page;
}

test('pause and resume from the session view: sent as control.pause / control.resume, ack and outcome shown', async () => {
  const page = await inbox('#/s/s_steer');
  const panel = page.getByTestId('steer');
  await panel.waitFor({ timeout: 30_000 });
  await panel.getByRole('button', { name: 'Pause session' }).click();
  const result = panel.locator('.steer-result');
  await panel.locator('[data-steer-type="control.pause"][data-steer-status="accepted"]').waitFor({ timeout: 30_000 });
  assert.match(await result.innerText(), /The agent accepted: it will try to pause/);
  const pause = await steerable.command((c) => ev(c)['type'] === 'control.pause', 'control.pause');
  assert.deepEqual(ev(pause)['data'], {});
  assert.equal(ev(pause)['session'], 's_steer');
  assert.equal(ev(pause)['agent'], 'aep-inbox');
  assert.deepEqual(validateEvent(ev(pause)), [], 'a valid foreign-emitter command (no seq)');
  await panel.getByTestId('steer-outcome').waitFor({ timeout: 30_000 });
  assert.equal(await panel.getByTestId('steer-outcome').innerText(), 'progress.status');

  await panel.getByRole('button', { name: 'Resume session' }).click();
  await panel.locator('[data-steer-type="control.resume"][data-steer-status="accepted"]').waitFor({ timeout: 30_000 });
  const resume = await steerable.command((c) => ev(c)['type'] === 'control.resume', 'control.resume');
  assert.deepEqual(ev(resume)['data'], {});
  await page.screenshot({ path: join(resultsDir, '30-steer-session.png'), fullPage: true });
  await page.close();
});

test('cancel a run with a reason, then the whole session: scope, run and reason as C8 says', async () => {
  const page = await inbox('#/s/s_steer');
  const panel = page.getByTestId('steer');
  await panel.waitFor({ timeout: 30_000 });
  assert.equal(await panel.getByLabel('This run').isChecked(), true, 'the running run is the default');
  await panel.getByLabel(/Reason/).fill('wrong branch');
  await panel.getByRole('button', { name: 'Cancel run' }).click();
  await panel.locator('[data-steer-type="control.cancel"][data-steer-status="accepted"]').waitFor({ timeout: 30_000 });
  const runCancel = await steerable.command((c) => ev(c)['type'] === 'control.cancel', 'control.cancel (run)');
  assert.deepEqual(ev(runCancel)['data'], { scope: 'run', reason: 'wrong branch' });
  assert.equal(ev(runCancel)['run'], 'r1');
  assert.equal(ev(runCancel)['capture'], 'redacted', 'the reason is free text: the command claims redacted');
  await panel.getByTestId('steer-outcome').waitFor({ timeout: 30_000 });
  assert.equal(await panel.getByTestId('steer-outcome').innerText(), 'run.cancelled');
  // The run has ended: only the session scope is left.
  await panel.getByLabel('This run').waitFor({ state: 'detached', timeout: 30_000 });
  await panel.getByLabel(/Reason/).fill('');
  await panel.getByRole('button', { name: 'Cancel session' }).click();
  const sessionCancel = await steerable.command((c) => ev(c)['type'] === 'control.cancel' && ev(c)['id'] !== ev(runCancel)['id'], 'control.cancel (session)');
  assert.deepEqual(ev(sessionCancel)['data'], { scope: 'session' });
  assert.equal(ev(sessionCancel)['run'], undefined);
  assert.equal(ev(sessionCancel)['capture'], undefined, 'no free text: metadata (the default, omitted)');
  await panel.locator('[data-steer-status="accepted"]').waitFor({ timeout: 30_000 });
  await page.close();
});

test('a nack unsupported reads "this agent cannot …"', async () => {
  const page = await inbox('#/s/s_half');
  const panel = page.getByTestId('steer');
  await panel.waitFor({ timeout: 30_000 });
  assert.equal(await panel.getByRole('button', { name: 'Resume session' }).count(), 0, 'not declared, not offered');
  assert.equal(await panel.getByRole('button', { name: /Cancel/ }).count(), 0);
  await panel.getByRole('button', { name: 'Pause session' }).click();
  await panel.locator('[data-steer-status="unsupported"]').waitFor({ timeout: 30_000 });
  assert.match(await panel.locator('.steer-result').innerText(), /This agent cannot pause/);
  await page.close();
});

test('steering is offered in the request view too, and not at all for an agent that declares none', async () => {
  const page = await inbox();
  await page.locator(`.item[data-request="${requestInSteer}"] a`).click();
  const d = page.locator(`.detail[data-request="${requestInSteer}"]`);
  await d.getByTestId('steer').waitFor({ timeout: 30_000 });
  await page.locator(`.item[data-request="${requestInPlain}"] a`).click();
  const p = page.locator(`.detail[data-request="${requestInPlain}"]`);
  // The roster snapshot has arrived (the agent is shown connected) and declares no steering.
  await p.locator('[data-route="live"]').waitFor({ timeout: 30_000 });
  assert.equal(await p.getByTestId('steer').count(), 0);
  await page.close();
});
