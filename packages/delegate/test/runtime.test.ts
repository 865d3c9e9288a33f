// The delegate at run time, in process (startDelegate) against a real relay (startRelay) and a
// real emitter: rate limits (a runaway agent cannot make it answer forever), file modes of its
// state, and values never answering an approval request.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';
import { AttentionEngine, EmitterConnection, subscribe } from '@aep/client/node';
import type { AttentionOutcome, AttentionPromise, Subscription, WireEvent } from '@aep/client';
import { parsePolicy, startDelegate } from '@aep/delegate';
import type { DecisionRecord, DelegateHandle } from '@aep/delegate';

const token = 'runtime-test-token-0123456789';
let relay: RelayHandle;
let conn: EmitterConnection;
let engine: AttentionEngine;
let sub: Subscription;
const events: WireEvent[] = [];

before(async () => {
  relay = await startRelay({ port: 0, storePath: null, token });
  sub = subscribe({ url: relay.url, token, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  conn = await EmitterConnection.connect({ url: relay.url, token, agent: 'bot', capture: 'full', control: { accepts: ['control.attention.respond'] } });
  engine = new AttentionEngine(conn, { capture: 'full' });
  conn.emit('rt', 'session.started', {});
});

after(async () => {
  await engine?.shutdown();
  await conn?.close();
  sub?.close();
  await relay?.close();
});

async function until<T>(find: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function settled(p: AttentionPromise): Promise<AttentionOutcome> {
  let o: AttentionOutcome | undefined;
  void p.then((x) => {
    o = x;
  });
  return until(() => o, `request ${p.id} to settle`);
}

async function withDelegate(yaml: string, fn: (d: DelegateHandle, records: DecisionRecord[], dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-delegate-rt-'));
  const records: DecisionRecord[] = [];
  const d = await startDelegate({
    url: relay.url,
    token,
    policy: parsePolicy(yaml),
    stateDir: join(dir, 'state'),
    session: `d-${Math.random().toString(36).slice(2, 8)}`,
    onDecision: (r) => records.push(r),
  });
  try {
    await fn(d, records, join(dir, 'state'));
  } finally {
    await d.close();
  }
}

const input = () =>
  engine.requestAttention({
    session: 'rt',
    kind: 'input',
    prompt: 'again?',
    options: [
      { id: 'yes', label: 'Yes' },
      { id: 'no', label: 'No' },
    ],
  });

test("rate limits: past the limit a runaway agent's requests go to a person", async () => {
  await withDelegate(
    'version: 1\nrate_limit: {max: 2, per: 1h}\nrules:\n  - {id: yes, match: {agent: bot, kind: input}, decision: {option: "yes"}}\n',
    async (d, records) => {
      const a = input();
      const b = input();
      assert.equal((await settled(a)).status, 'answered');
      assert.equal((await settled(b)).status, 'answered');
      const c = input();
      const r = await until(() => records.find((x) => x.request === c.id), 'the third decision');
      assert.deepEqual([r.outcome, r.rule, r.answer], ['rate-limited', 'yes', { option: 'yes' }]);
      const routed = await until(() => events.find((e) => e.type === 'attention.routed' && e.subject === c.id), 'routed');
      assert.deepEqual(routed.data, { to: 'person', via: 'rate-limited' });
      assert.ok(engine.pending().includes(c.id));
      assert.equal(d.stats().rateLimited, 1);
      engine.dismiss(c.id);
    },
  );
  // A rule's own limit.
  await withDelegate(
    'version: 1\nrules:\n  - {id: yes-once, match: {agent: bot, kind: input}, decision: {option: "yes"}, rate_limit: {max: 1, per: 1h}}\n',
    async (_d, records) => {
      const a = input();
      assert.equal((await settled(a)).status, 'answered');
      const b = input();
      assert.equal((await until(() => records.find((x) => x.request === b.id), 'decision')).outcome, 'rate-limited');
      engine.dismiss(b.id);
    },
  );
});

test('the state directory is 0700 and its files 0600 (the grants file holds approval texts)', async () => {
  await withDelegate('version: 1\nrules: []\n', async (d, _records, dir) => {
    const p = engine.requestAttention({
      session: 'rt',
      kind: 'permission',
      subject: 'Bash',
      approvalText: 'ls -la',
      options: [
        { id: 'allow', label: 'A' },
        { id: 'deny', label: 'D' },
      ],
    });
    await until(() => events.find((e) => e.type === 'attention.routed' && e.subject === p.id), 'routed');
    const { CommandSender } = await import('@aep/client/node');
    const { approvalDigest, createEmitter } = await import('@aep/protocol');
    const s = await CommandSender.connect({ url: relay.url, token, agent: 'person' });
    const cmd = createEmitter({ source: 'aep://h/agent/person', agent: 'person' }).build({
      type: 'x.aep.control.grant',
      session: d.session,
      capture: 'full',
      data: { agent: 'bot', tool: 'Bash', digest: approvalDigest('ls -la'), text: 'ls -la', ttl: '1h' },
    }) as unknown as WireEvent;
    assert.equal((await s.send(cmd)).status, 'accepted');
    await s.close();
    assert.equal((await settled(p)).status, 'answered', 'the pending request is answered by the new grant');
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    for (const f of ['grants.json', 'decisions.jsonl']) assert.equal(statSync(join(dir, f)).mode & 0o777, 0o600, f);
    assert.equal(d.grants().length, 1);
  });
});

test('values never answer an approval request, even a permission request that carries fields', async () => {
  await withDelegate('version: 1\nrules:\n  - {id: v, match: {agent: bot}, decision: {values: {n: 1}}}\n', async (_d, records) => {
    const p = engine.requestAttention({
      session: 'rt',
      kind: 'permission',
      subject: 'Bash',
      approvalText: 'make',
      options: [
        { id: 'allow', label: 'A' },
        { id: 'deny', label: 'D' },
      ],
      fields: [{ id: 'n', type: 'number', label: 'n' }],
    });
    const r = await until(() => records.find((x) => x.request === p.id), 'decision');
    assert.equal(r.outcome, 'no-match');
    assert.match(r.trace.at(-1)!.why, /never answered with values/);
    engine.dismiss(p.id);
  });
});
