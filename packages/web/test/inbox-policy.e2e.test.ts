// Issue 18 item 4 in headless chromium: "Always allow this" from the inbox (the person's own
// allow with the approval proof, then a grant to the live delegate for this agent, tool and exact
// input), the grant answering the next identical request by itself, and the policy view listing
// it and revoking it. A real relay, a real delegate (@aep/delegate) and a real emitter whose
// attention engine checks the proof.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { approvalDigest } from '@aep/protocol';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { webRoot } from '@aep/web';
import { AttentionEngine, EmitterConnection, subscribe } from '@aep/client/node';
import type { AttentionOutcome, AttentionPromise, Subscription, WireEvent } from '@aep/client';
import { parsePolicy, startDelegate } from '@aep/delegate';
import type { DelegateHandle } from '@aep/delegate';
import { launchBrowser, resultsDir } from './support/browser.js';
import { ensureWebBuilt } from './support/processes.js';

const token = 'policy-test-token-0123456789abc';
let relay: RelayHandle;
let browser: Browser;
let conn: EmitterConnection;
let engine: AttentionEngine;
let delegate: DelegateHandle;
let sub: Subscription;
const events: WireEvent[] = [];
const OPTIONS = [
  { id: 'allow', label: 'Allow' },
  { id: 'deny', label: 'Deny' },
];

before(async () => {
  ensureWebBuilt();
  relay = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
  sub = subscribe({ url: relay.url, token, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  conn = await EmitterConnection.connect({ url: relay.url, token, agent: 'claude-code', capture: 'full', control: { accepts: ['control.attention.respond'] } });
  engine = new AttentionEngine(conn, { capture: 'full' });
  conn.emit('cc-web', 'session.started', {});
  delegate = await startDelegate({
    url: relay.url,
    token,
    stateDir: mkdtempSync(join(tmpdir(), 'aep-web-delegate-')),
    policy: parsePolicy('version: 1\ngrants: {max_ttl: 1d}\nrules: []\n'),
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await delegate?.close();
  await engine?.shutdown();
  await conn?.close();
  sub?.close();
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

function ask(text: string, capture: 'full' | 'metadata' = 'full'): AttentionPromise {
  return engine.requestAttention({ session: 'cc-web', kind: 'permission', subject: 'Bash', approvalText: text, options: OPTIONS, capture });
}

async function until<T>(find: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function outcomeOf(p: AttentionPromise): () => AttentionOutcome | undefined {
  let o: AttentionOutcome | undefined;
  void p.then((x) => {
    o = x;
  });
  return () => o;
}

test('"Always allow this": allowed by the person, then the next identical request is allowed by the grant; revoked in the policy view', async () => {
  const first = ask('make deploy');
  const firstDone = outcomeOf(first);
  const page = await inbox(`#/r/cc-web/${first.id}`);
  const box = page.getByTestId('always-allow');
  await box.waitFor({ timeout: 30_000 });
  await box.getByLabel('Always allow this exact input for').selectOption('1h');
  await page.screenshot({ path: join(resultsDir, '40-always-allow.png'), fullPage: true });
  await box.getByTestId('always-allow-button').click();
  await page.locator('[data-testid="always-allow-status"][data-status="done"]').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('always-allow-status').innerText(), /Allowed, and granted for 1 hour/);
  // The person's own allow (with the proof the engine checked), recorded as answered by the inbox.
  const o1 = await until(firstDone, 'the first request to settle');
  assert.deepEqual(o1.status === 'answered' && [o1.answer, o1.by, o1.rule], [{ option: 'allow' }, 'aep-inbox', undefined]);
  const granted = await until(() => events.find((e) => e.type === 'x.aep.policy.granted'), 'the grant');
  const g = granted.data as Record<string, unknown>;
  assert.deepEqual([g['agent'], g['tool'], g['digest'], g['request'], g['by']], ['claude-code', 'Bash', approvalDigest('make deploy'), first.id, 'aep-inbox']);
  const cmd = events.find((e) => e.type === 'x.aep.control.grant')!;
  assert.equal(cmd.capture, 'full', 'the grant carries the text: sent at capture full');

  // The next identical request: the delegate allows it by the grant, no person involved.
  const second = ask('make deploy');
  const o2 = await until(outcomeOf(second), 'the second request to settle');
  assert.deepEqual(o2.status === 'answered' && [o2.answer, o2.by, o2.rule], [{ option: 'allow' }, 'aep-delegate', g['grant']]);
  const resolved = await until(() => events.find((e) => e.type === 'attention.resolved' && e.subject === second.id), 'resolved');
  assert.equal((resolved.data as Record<string, unknown>)['resolution'], 'auto');

  // The policy view shows the grant by its structure and revokes it.
  await page.goto(`${relay.url}/#/policy`);
  const row = page.locator(`[data-testid="policy-view"] tr[data-grant="${String(g['grant'])}"]`);
  await row.waitFor({ timeout: 30_000 });
  assert.match(await row.innerText(), new RegExp(`claude-code\\s+Bash\\s+${approvalDigest('make deploy')}`));
  assert.ok(!(await page.getByTestId('policy-view').innerText()).includes('make deploy'), 'the text itself is not shown there');
  await page.screenshot({ path: join(resultsDir, '41-policy-view.png'), fullPage: true });
  await row.getByTestId('revoke').click();
  await page.getByTestId('policy-note').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('policy-note').innerText(), /^Revoked grant-/);
  await row.waitFor({ state: 'detached', timeout: 30_000 });
  await until(() => events.find((e) => e.type === 'x.aep.policy.revoked'), 'revoked');
  // After the revocation the same input asks the person again.
  const third = ask('make deploy');
  await until(() => events.find((e) => e.type === 'attention.routed' && e.subject === third.id), 'the delegate to consider it');
  assert.ok(engine.pending().includes(third.id), 'pending: a person answers it');
  engine.dismiss(third.id);
  await page.close();
});

test('"Always allow this" is not offered where Allow is not (an incomplete copy), and waits for every line to be shown', async () => {
  const blind = ask('make publish', 'metadata');
  const page = await inbox(`#/r/cc-web/${blind.id}`);
  await page.getByTestId('approval-incomplete').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByTestId('always-allow').count(), 0);
  const long = ask(Array.from({ length: 20 }, (_, i) => `echo step ${i}`).join('\n'));
  await page.goto(`${relay.url}/#/r/cc-web/${long.id}`);
  const button = page.getByTestId('always-allow-button');
  await button.waitFor({ timeout: 30_000 });
  assert.equal(await button.isDisabled(), true, 'hidden lines are not seen: no grant before they are shown');
  await page.getByTestId('show-all').click();
  await page.waitForFunction(() => !(document.querySelector('[data-testid="always-allow-button"]') as HTMLButtonElement | null)?.disabled, undefined, {
    timeout: 30_000,
  });
  engine.dismiss(blind.id);
  engine.dismiss(long.id);
  await page.close();
});
