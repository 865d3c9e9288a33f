// States a person can trust (issue 14 items 3 and 5, issue 20 web part), in headless chromium
// against a real relay (port 0) and real agents (`@aep/client`):
// - an answered request shows the recorded answer (as far as the viewer's capture shows it), who
//   answered and through which channel;
// - a request whose agent went away (contract C4, the roster's `offline` member) shows "agent
//   offline since …" and cannot be answered;
// - the read-only path is offered only when the relay allows anonymous reading, and "the relay
//   refused this token" is never said when no token was entered;
// - an emitter's rejection `detail` is shown; the inbox's own "required" message is told apart
//   from the browser's validation; decline and cancel (C2) on every form, sent as answer.option.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { CommandSender } from '@aep/client/node';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { webRoot } from '@aep/web';
import { launchBrowser, postEvents, resultsDir } from './support/browser.js';
import { formRequest } from './support/fixtures.js';
import { ensureWebBuilt } from './support/processes.js';
import { startAgent } from './support/agent.js';
import type { TestAgent } from './support/agent.js';

const token = 'states-test-token-0123456789ab';
let relay: RelayHandle;
let browser: Browser;
let agent: TestAgent;
const ev = (c: { event: unknown }) => c.event as Record<string, unknown>;

const FIELDS = (formRequest('x', 's', 1)['data'] as Record<string, unknown>)['fields'] as Record<string, unknown>[];
const META_FIELDS = (formRequest('x', 's', 1, 'metadata')['data'] as Record<string, unknown>)['fields'] as Record<string, unknown>[];

/** Raise a five-field form from the test agent; the agent records whatever it accepts. */
function raiseForm(session: string, capture: 'full' | 'metadata' = 'full'): string {
  const data = {
    kind: 'form',
    prompt: capture === 'metadata' ? 'states requests form: backup-config' : 'Configure the nightly backup',
    fields: capture === 'metadata' ? META_FIELDS : FIELDS,
    respond_via: ['control'],
  };
  return agent.conn.emit(session, 'attention.requested', data, { capture, severity: 'notice', subject: 'backup-config' }).id;
}

/** What the agent records for an accepted answer (values gated to the request's capture, AEP-0006 §5.2). */
function record(session: string, cmd: Record<string, unknown>, capture: 'full' | 'metadata'): void {
  const answer = ((cmd['data'] as Record<string, unknown>)['answer'] ?? {}) as Record<string, unknown>;
  const subject = String(cmd['subject']);
  if (answer['option'] === 'cancel') {
    agent.conn.emit(session, 'attention.resolved', { resolution: 'dismissed' }, { subject, cause: String(cmd['id']) });
    return;
  }
  let recorded = answer;
  if (capture === 'metadata' && answer['values']) {
    const v = answer['values'] as Record<string, unknown>;
    recorded = {
      values: Object.fromEntries(Object.entries(v).filter(([k, x]) => typeof x === 'number' || typeof x === 'boolean' || (k === '4' && Array.isArray(x)))),
    };
  }
  agent.conn.emit(
    session,
    'attention.answered',
    { answer: recorded, via: 'control', by: String(cmd['agent']) },
    { subject, cause: String(cmd['id']), capture },
  );
  agent.conn.emit(session, 'attention.resolved', { resolution: 'answered' }, { subject, cause: String(cmd['id']) });
}

const ids: Record<string, string> = {};
const captureOf: Record<string, 'full' | 'metadata'> = {};

before(async () => {
  ensureWebBuilt();
  relay = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
  agent = await startAgent(relay.url, token, 'states', ['control.attention.respond']);
  agent.decide('control.attention.respond', (c) => {
    const cmd = ev(c);
    const subject = String(cmd['subject']);
    const answer = ((cmd['data'] as Record<string, unknown>)['answer'] ?? {}) as Record<string, unknown>;
    // The "detail" request: the emitter refuses a bucket name that is not lowercase, with a
    // detail text and a structured issue (AEP-0004 §3).
    if (
      subject === ids['detail'] &&
      typeof (answer['values'] as Record<string, unknown> | undefined)?.['1'] === 'string' &&
      /[A-Z]/.test(String((answer['values'] as Record<string, unknown>)['1']))
    ) {
      return {
        status: 'rejected',
        reason: 'invalid',
        detail: 'bucket names must be lowercase',
        capture: 'redacted',
        issues: [{ rule: 'x.bucket-case', path: '/data/answer/values/1', message: 'lowercase only', section: 'test' }],
      };
    }
    const session = [...Object.entries(ids)].find(([, id]) => id === subject)?.[0] ?? '';
    return { status: 'accepted', after: () => record(`s_${session}`, cmd, captureOf[subject] ?? 'full') };
  });
  for (const [name, cap] of [
    ['answered', 'full'],
    ['answeredmeta', 'metadata'],
    ['oob', 'full'],
    ['detail', 'full'],
    ['decline', 'full'],
    ['cancel', 'metadata'],
  ] as const) {
    const id = raiseForm(`s_${name}`, cap);
    ids[name] = id;
    captureOf[id] = cap;
  }
  // Answered out of band (the agent's own dialog): recorded with via "oob".
  agent.conn.emit(
    's_oob',
    'attention.answered',
    { answer: { values: { 1: 'from-terminal', 3: false } }, via: 'oob', by: 'alice' },
    { subject: ids['oob'], cause: ids['oob'], capture: 'full' },
  );
  agent.conn.emit('s_oob', 'attention.resolved', { resolution: 'answered' }, { subject: ids['oob'] });
  await agent.conn.flush(10_000);
  // Answered elsewhere: by `aep respond` (the CLI's sender), before any inbox tab opened.
  const cli = await CommandSender.connect({ url: relay.url, token });
  try {
    const full = await cli.respond({
      session: 's_answered',
      requestId: ids['answered'] ?? '',
      answer: { values: { 1: 'nightly-bk', 2: 30, 3: true, 4: ['1', '3'], 5: 'cold-line' } },
      capture: 'redacted',
    });
    assert.equal(full.status, 'accepted');
    const meta = await cli.respond({
      session: 's_answeredmeta',
      requestId: ids['answeredmeta'] ?? '',
      answer: { values: { 1: 'secret-bucket', 2: 7, 4: ['2'] } },
      capture: 'redacted',
    });
    assert.equal(meta.status, 'accepted');
  } finally {
    await cli.close();
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await agent?.close();
  await relay?.close();
});

async function inbox(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Relay token').fill(token);
  await page.getByRole('button', { name: 'Open the inbox' }).click();
  await page.locator('.top .conn-live').waitFor({ timeout: 30_000 });
  return page;
}

async function request(page: Page, session: string, id: string): Promise<Locator> {
  await page.goto(`${relay.url}/#/r/${session}/${id}`);
  const d = page.locator(`.detail[data-request="${id}"]`);
  await d.waitFor({ timeout: 30_000 });
  return d;
}

test('a form answered elsewhere shows the recorded answer, who answered, and via which channel', async () => {
  const page = await inbox();
  const d = await request(page, 's_answered', ids['answered'] ?? '');
  const summary = d.getByTestId('answer-summary');
  await summary.waitFor({ timeout: 30_000 });
  assert.equal(await d.locator('form.answer-form').count(), 0, 'no empty form for an answered request');
  const rows = await summary.locator('.answer-values div').allInnerTexts();
  assert.deepEqual(
    rows.map((r) => r.replace(/\s+/g, ' ').trim()),
    ['Bucket name “nightly-bk”', 'Retention (days) 30', 'Encrypt at rest? yes', 'Weekdays Mon, Fri', 'Storage class Other: “cold-line”'],
  );
  const by = await summary.getByTestId('answered-by').innerText();
  assert.match(by, /Answered by aep-cli via control/);
  assert.match(by, /sent from aep:\/\/[^ ]+\/agent\/aep-cli/);
  assert.doesNotMatch(by, /this browser tab/);
  await page.screenshot({ path: join(resultsDir, '40-answered-elsewhere.png'), fullPage: true });
  await page.close();
});

test('at metadata the recorded answer shows what the capture keeps and says what it withholds', async () => {
  const page = await inbox();
  const d = await request(page, 's_answeredmeta', ids['answeredmeta'] ?? '');
  const rows = await d.getByTestId('answer-summary').locator('.answer-values div').allInnerTexts();
  assert.deepEqual(
    rows.map((r) => r.replace(/\s+/g, ' ').trim()),
    [
      'Question 1 not shown at capture level metadata',
      'Question 2 7',
      'Question 3 not answered',
      'Question 4 Choice 2',
      'Question 5 not shown at capture level metadata',
    ],
  );
  assert.doesNotMatch(await d.innerText(), /secret-bucket/);
  await page.close();
});

test("an answer given in the agent's own interface says so (out of band)", async () => {
  const page = await inbox();
  const d = await request(page, 's_oob', ids['oob'] ?? '');
  assert.match(await d.getByTestId('answered-by').innerText(), /Answered in the agent's own interface \(out of band\), by alice/);
  await page.close();
});

test('a rejection that carries detail shows the detail (and the issue on its field)', async () => {
  const page = await inbox();
  const d = await request(page, 's_detail', ids['detail'] ?? '');
  await d.getByLabel('Bucket name').fill('Nightly-BK');
  await d.getByRole('button', { name: 'Submit answer' }).click();
  await d.locator('[data-phase="rejected"]').waitFor({ timeout: 30_000 });
  assert.equal(await d.getByTestId('rejection-detail').textContent(), "Agent's detail: bucket names must be lowercase");
  assert.match(await d.locator('[data-field="1"] .field-issues').innerText(), /x\.bucket-case/);
  // Corrected: accepted and recorded (the request leaves the inbox).
  await d.getByLabel('Bucket name').fill('nightly-bk');
  await d.getByRole('button', { name: 'Submit answer' }).click();
  await d.locator('.outcome[data-status="resolved"]').waitFor({ timeout: 30_000 });
  assert.match(await d.getByTestId('answered-by').innerText(), /from this browser tab/);
  await page.close();
});

test('the inbox\'s own "required" message, not the browser\'s validation', async () => {
  // A form nobody holds live: the relay refuses the send (no-route), the local check is shown.
  const lone = formRequest('nobody', 's_lone', 1);
  await postEvents(relay.url, token, [lone]);
  const page = await inbox();
  const d = await request(page, 's_lone', String(lone['id']));
  const form = d.locator('form.answer-form');
  assert.equal(await form.evaluate((f) => (f as HTMLFormElement).noValidate), true, 'native validation is off');
  const bucket = d.getByLabel('Bucket name');
  assert.equal(await bucket.evaluate((i) => (i as HTMLInputElement).required), false);
  await d.getByRole('button', { name: 'Submit answer' }).click();
  await d.locator('[data-phase="refused"]').waitFor({ timeout: 30_000 });
  const issue = d.locator('[data-field="1"] .field-issues li');
  assert.equal((await issue.innerText()).replace(/\s+/g, ' ').trim(), 'This question is required: answer it before sending. form.required-missing');
  assert.match(await d.getByTestId('local-check').innerText(), /found 1 problem/);
  // The browser's own message for the same empty field, had native validation been on, is
  // something else entirely: the assertion above cannot be satisfied by it.
  const native = await bucket.evaluate((i) => {
    const el = i as HTMLInputElement;
    el.required = true;
    const m = el.validationMessage;
    el.required = false;
    return m;
  });
  assert.ok(native.length > 0 && !native.includes('answer it before sending'), `native message: ${native}`);
  await page.close();
});

for (const [name, option] of [
  ['decline', 'decline'],
  ['cancel', 'cancel'],
] as const) {
  test(`every form offers decline and cancel (C2): ${option} is sent as answer.option`, async () => {
    const page = await inbox();
    const d = await request(page, `s_${name}`, ids[name] ?? '');
    assert.equal(await d.getByRole('button', { name: 'Decline to answer', exact: true }).count(), 1);
    assert.equal(await d.getByRole('button', { name: 'Cancel (dismiss unanswered)', exact: true }).count(), 1);
    await d.getByTestId(`form-option-${option}`).click();
    const cmd = await agent.command((c) => ev(c)['subject'] === ids[name], `the ${option}`);
    assert.deepEqual((ev(cmd)['data'] as Record<string, unknown>)['answer'], { option });
    await d.locator('.outcome[data-status="resolved"]').waitFor({ timeout: 30_000 });
    if (option === 'cancel') {
      assert.match(await d.locator('.outcome').innerText(), /Resolved \(dismissed\)/);
      assert.match(await d.getByTestId('ended-by').innerText(), /by aep-inbox/);
    } else {
      assert.match(await d.getByTestId('answer-option').innerText(), /Chose Declined \(id decline, effect: deny\)/);
    }
    await page.close();
  });
}

test('a request whose agent went away shows "agent offline since …" and is not answerable (C4)', async () => {
  const gone = await startAgent(relay.url, token, 'leaver', ['control.attention.respond']);
  const id = gone.conn.emit(
    's_gone',
    'attention.requested',
    { kind: 'input', prompt: 'Still there?', respond_via: ['control'] },
    { capture: 'full', severity: 'notice' },
  ).id;
  await gone.conn.flush(10_000);
  await gone.close();
  const page = await inbox();
  const d = await request(page, 's_gone', id);
  // The real relay's C4 roster: the asker's claim has no live connection any more.
  const note = d.getByTestId('offline');
  await note.waitFor({ timeout: 30_000 });
  assert.match(await note.innerText(), /Agent offline since .+\. The agent that asked this \(leaver\) is no longer connected/);
  assert.equal(await d.getByRole('button', { name: 'Send reply' }).isDisabled(), true);
  await page.locator(`.item[data-request="${id}"][data-offline="true"]`).waitFor({ timeout: 30_000 });
  assert.match(await page.locator(`.item[data-request="${id}"]`).innerText(), /agent offline since \S/, 'the list says when the agent went away');
  // The list and the detail agree with what the relay itself says (the roster reply's `offline`).
  const probe = await CommandSender.connect({ url: relay.url, token });
  try {
    const snap = await probe.roster();
    const entry = snap?.offline?.find((o) => o.request === id);
    assert.ok(entry, 'the relay lists the request as offline (C4)');
    assert.equal(entry.agent, 'leaver');
    assert.ok(Date.parse(entry.since) <= Date.now(), `since is the time the asker went away: ${entry.since}`);
    assert.doesNotMatch(await note.innerText(), /an unknown time/, 'the note says when the agent went away');
  } finally {
    await probe.close();
  }
  await page.screenshot({ path: join(resultsDir, '41-agent-offline.png'), fullPage: true });
  await page.close();
});

test('read-only is offered only where anonymous reading is allowed; no "refused this token" without a token', async () => {
  // This relay has a token: GET /events without one is 401, so no read-only path.
  assert.equal((await fetch(`${relay.url}/events`)).status, 401);
  const page = await browser.newPage();
  await page.goto(`${relay.url}/`);
  await page.getByTestId('token-required').waitFor({ timeout: 30_000 });
  assert.equal(await page.getByRole('button', { name: /without a token/ }).count(), 0);
  // A tab that somehow holds an empty token (e.g. from a relay that used to allow anonymous
  // reading): the refusal never blames a token nobody entered.
  await page.evaluate(() => localStorage.setItem('aep.inbox.token', ''));
  await page.reload();
  const alert = page.getByRole('alert');
  await alert.waitFor({ timeout: 30_000 });
  assert.match(await alert.innerText(), /does not allow reading without a token/);
  assert.doesNotMatch(await page.locator('body').innerText(), /refused this token/);
  await page.close();
  // A relay without a token: anonymous reading is allowed, the path is offered.
  const open = await startRelay({ port: 0, storePath: null, staticDir: webRoot });
  try {
    const p = await browser.newPage();
    await p.goto(`${open.url}/`);
    await p.getByRole('button', { name: 'Continue without a token (read-only)' }).waitFor({ timeout: 30_000 });
    assert.equal(await p.getByTestId('token-required').count(), 0);
    await p.close();
  } finally {
    await open.close();
  }
});
