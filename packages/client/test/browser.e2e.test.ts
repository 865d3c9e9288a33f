// The browser-safe core in a real browser (issue 13 item 3): headless Chromium loads the
// compiled `@aep/client` root entry (and `@aep/protocol`'s), served by a real relay under its
// strict CSP, and uses it against that relay: SSE and WebSocket subscriptions (the browser's own
// WebSocket, token as access_token), a command round trip with a Node emitter, pause/resume
// (contract C8), the roster, and a wrong token reported as refused (HTTP 401), never as
// unreachable (issue 14). Run after `npm run build` (it serves dist/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { AttentionEngine, EmitterConnection } from '@aep/client/node';
import { repoRoot, startRelayProcess } from '../../../test/support/cli.js';
import { launchChromium as launchBrowser } from '../../../test/support/browser.js';

const TOKEN = 'test-token-browser';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let browser: Browser;
let dir: string;

/** Copies the compiled .js files of a package, resolving `@aep/protocol` the way a bundler would. */
function copyJs(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => statSync(src).isDirectory() || src.endsWith('.js') });
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else writeFileSync(p, readFileSync(p, 'utf8').replace(/from '@aep\/protocol'/g, "from '/protocol/index.js'"));
    }
  };
  walk(to);
}

/** What the page runs (plain browser JavaScript, served by the relay like any inbox script). */
const RUN_JS = `
import { subscribe, CommandSender } from '/client/index.js';
const until = async (pred) => { for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 20)); };
export async function run({ token, requestId }) {
  const url = location.origin;
  const sse = [];
  const ws = [];
  const a = subscribe({ url, token, filter: { session: 's-browser' }, from: 'all' }, (e) => sse.push(e.type));
  const b = subscribe({ url, token, filter: { session: 's-browser' }, from: 'all', transport: 'ws' }, (e) => ws.push(e.type));
  await Promise.all([a.ready, b.ready]);
  await until(() => sse.includes('attention.requested') && ws.includes('attention.requested'));
  const sender = await CommandSender.connect({ url, token, agent: 'browser-inbox', ackWindowMs: 5000 });
  const respond = (await sender.respond({ session: 's-browser', requestId, answer: { values: { '1': 'nightly' } } })).status;
  const pause = (await sender.pause({ session: 's-browser' })).status;
  const resume = await sender.resume({ session: 's-browser' });
  const roster = await sender.roster();
  await until(() => sse.includes('attention.resolved') && ws.includes('attention.resolved'));
  await sender.close();
  a.close();
  b.close();
  let refusedSender = { message: 'connected' };
  try { await CommandSender.connect({ url, token: 'wrong-token' }); } catch (e) { refusedSender = { message: e.message, code: e.code, status: e.status }; }
  let refusedStream = {};
  try { await subscribe({ url, token: 'wrong-token', reconnect: { initialMs: 10, maxMs: 20 } }, () => {}).done; } catch (e) { refusedStream = { code: e.code, status: e.status }; }
  return {
    sse, ws, respond, pause, resume: { status: resume.status, reason: resume.reason },
    rosterSessions: ((roster && roster.entries) || []).map((e) => e.session), refusedSender, refusedStream,
  };
}
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'aep-client-browser-'));
  copyJs(join(repoRoot, 'packages', 'client', 'dist'), join(dir, 'client'));
  copyJs(join(repoRoot, 'packages', 'protocol', 'dist'), join(dir, 'protocol'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><meta charset="utf-8"><title>aep client core</title>\n');
  writeFileSync(join(dir, 'run.js'), RUN_JS);
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--static', dir]);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await relay?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface PageResult {
  sse: string[];
  ws: string[];
  respond: string;
  pause: string;
  resume: { status: string; reason?: string };
  rosterSessions: string[];
  refusedSender: { code?: string; status?: number; message: string };
  refusedStream: { code?: string; status?: number };
}

test('the core loads in Chromium and subscribes, answers, steers and reports a wrong token as refused', async () => {
  const conn = await EmitterConnection.connect({
    url: relay.url,
    token: TOKEN,
    agent: 'browser-target',
    capture: 'redacted',
    control: { accepts: ['control.attention.respond', 'control.pause'] },
  });
  const engine = new AttentionEngine(conn);
  let paused = 0;
  conn.onCommand('control.pause', () => ({
    status: 'accepted',
    after: () => {
      paused++;
    },
  }));
  conn.emit('s-browser', 'session.started', {});
  const p = engine.requestAttention({
    session: 's-browser',
    kind: 'form',
    prompt: 'Name the bucket',
    fields: [{ id: '1', type: 'string', label: 'Bucket', required: true }],
  });
  const page = await browser.newPage();
  try {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${relay.url}/index.html`);
    // A string, not a function: tsx would rewrite a function's source with its own helpers.
    const result = (await page.evaluate(`import('/run.js').then((m) => m.run(${JSON.stringify({ token: TOKEN, requestId: p.id })}))`)) as PageResult;
    assert.deepEqual(errors, []);
    for (const t of ['session.started', 'attention.requested', 'control.accepted', 'attention.answered', 'attention.resolved']) {
      assert.ok(result.sse.includes(t), `SSE saw ${t}: ${result.sse.join(',')}`);
      assert.ok(result.ws.includes(t), `WS saw ${t}: ${result.ws.join(',')}`);
    }
    assert.equal(result.respond, 'accepted');
    const outcome = await p;
    assert.ok(outcome.status === 'answered');
    assert.deepEqual(outcome.answer.values, { '1': 'nightly' });
    assert.equal(result.pause, 'accepted');
    assert.equal(paused, 1, 'the target acted on control.pause');
    assert.ok(['refused', 'rejected'].includes(result.resume.status) && result.resume.reason === 'unsupported', JSON.stringify(result.resume));
    assert.ok(result.rosterSessions.includes('s-browser'), `roster: ${result.rosterSessions.join(',')}`);
    assert.equal(result.refusedSender.code, 'AEP_CLIENT_REFUSED', result.refusedSender.message);
    assert.equal(result.refusedSender.status, 401);
    assert.match(result.refusedSender.message, /HTTP 401/);
    assert.ok(!result.refusedSender.message.includes('wrong-token'), 'the token is never in a message');
    assert.deepEqual(result.refusedStream, { code: 'AEP_CLIENT_REFUSED', status: 401 });
  } finally {
    await page.close();
    await engine.shutdown();
    await conn.close();
  }
});
