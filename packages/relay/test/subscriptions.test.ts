// Subscriptions beyond the checker probes: multiplexing, ceilings on WS, unsubscribe, replay
// filters, agent-scoped and seq-less Events, version selection (AEP-0003 §4, §5, §6, §7).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, ev, http, post, sleep, sse, ulid } from './helpers.js';

describe('subscriptions', () => {
  let relay: RelayHandle;
  let base: string;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null });
    base = relay.url;
  });
  after(async () => {
    await relay.close();
  });

  it('hello picks the first supported version from the client preference list', async () => {
    const c = await WsClient.open(base);
    c.send({ type: 'hello', versions: ['1.0', '0.1'], role: 'both' });
    const h = await c.waitFor((f) => f['type'] === 'hello');
    assert.deepEqual(h['versions'], ['0.1']);
    assert.equal(h['role'], 'both');
    assert.deepEqual((h['capabilities'] as Record<string, unknown>)['roster'], {});
    c.close();
  });

  it('several subscriptions on one socket: an Event matching two is delivered once, at the most permissive ceiling', async () => {
    const S = `mux-${ulid()}`;
    const c = await WsClient.open(base);
    await c.hello();
    c.send({ type: 'subscribe', id: 'meta', filter: { session: S }, capture: 'metadata' });
    c.send({ type: 'subscribe', id: 'runs', filter: { type: 'run.*' } });
    await c.waitFor((f) => f['id'] === 'runs' && f['type'] === 'subscribed');
    const e = ev('run.started', S, 0, { capture: 'redacted', run: 'r', data: { trigger: 'user', prompt: 'secret-ish text' } });
    await post(base, e);
    const e2 = ev('progress.status', S, 1, { capture: 'redacted' });
    await post(base, e2);
    await c.waitFor((f) => f['id'] === e2['id']);
    await sleep(50);
    const got = c.frames.filter((f) => f['id'] === e['id']);
    assert.equal(got.length, 1);
    assert.equal(
      c.texts.find((t) => t.includes(String(e['id']))),
      JSON.stringify(e),
      'no ceiling on "runs": raw bytes',
    );
    // Only "meta" matches e2: down-levelled to metadata.
    assert.equal(c.frames.find((f) => f['id'] === e2['id'])!['capture'], 'metadata');
    // Unsubscribe "runs": the run Event now comes through "meta" only, down-levelled.
    c.send({ type: 'unsubscribe', id: 'runs' });
    await c.waitFor((f) => f['type'] === 'unsubscribed' && f['id'] === 'runs');
    const e3 = ev('run.started', S, 2, { capture: 'redacted', run: 'r2', data: { trigger: 'user', prompt: 'secret-ish text' } });
    await post(base, e3);
    const d3 = await c.waitFor((f) => f['id'] === e3['id']);
    assert.equal(d3['capture'], 'metadata');
    assert.equal((d3['data'] as Record<string, unknown>)['prompt'], undefined);
    c.close();
  });

  it('a WS subscribe with capture=none drops data; an invalid capture is refused in-band', async () => {
    const S = `none-${ulid()}`;
    const c = await WsClient.open(base);
    await c.hello();
    c.send({ type: 'subscribe', id: 'bad', capture: 'everything' });
    assert.equal((await c.waitFor((f) => f['id'] === 'bad'))['code'], 'invalid-filter');
    c.send({ type: 'subscribe', id: 'n', filter: { session: S }, capture: 'none' });
    await c.waitFor((f) => f['id'] === 'n' && f['type'] === 'subscribed');
    const e = ev('tool.completed', S, 0, { data: { tool: { name: 'x' }, status: 'success' } });
    await post(base, e);
    const d = await c.waitFor((f) => f['id'] === e['id']);
    assert.equal(d['capture'], 'none');
    assert.equal('data' in d, false);
    c.close();
  });

  it('filters and ceilings apply to replay exactly as to live delivery', async () => {
    const S = `rf-${ulid()}`;
    await post(base, [
      ev('session.started', S, 0),
      ev('run.started', S, 1, { capture: 'redacted', run: 'r', data: { trigger: 'user', prompt: 'p' } }),
      ev('progress.status', S, 2, { severity: 'debug' }),
      ev('attention.requested', S, 3, {
        severity: 'notice',
        subject: 'q1',
        capture: 'redacted',
        data: { kind: 'question', prompt: 'What?', options: [{ id: 'a', label: 'Alpha' }] },
      }),
    ]);
    const f = encodeURIComponent(JSON.stringify({ session: S, severity: { gte: 'info' } }));
    const r = await http(`${base}/stream?live=0&filter=${f}&capture=metadata`);
    const evs = r.body
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
    assert.deepEqual(
      evs.map((e) => e['seq']),
      [0, 1, 3],
    );
    for (const e of evs) assert.ok(e['capture'] === undefined || e['capture'] === 'metadata');
    assert.ok(!r.body.includes('What?') && !r.body.includes('Alpha'), 'free text above the ceiling never leaves');
    const ws = await WsClient.open(base);
    await ws.hello();
    ws.send({ type: 'subscribe', id: 'r', filter: { session: S, type: 'attention.*' }, from: [{ session: S, seq: 0 }], capture: 'metadata' });
    const a = await ws.waitFor((x) => x['type'] === 'attention.requested');
    assert.match(String((a['data'] as Record<string, unknown>)['prompt']), /^aep-live-check requests question: q1$/);
    ws.close();
  });

  it('agent-scoped and seq-less Events are delivered live without an SSE id and kept for full replays', async () => {
    const agentName = `ag-${ulid()}`;
    const s = sse(base, `filter=${encodeURIComponent(JSON.stringify({ agent: agentName }))}`);
    await s.status;
    await sleep(50);
    const a = { aep: '0.1', id: ulid(), type: 'agent.heartbeat', time: new Date().toISOString(), source: `aep://x/agent/${agentName}`, agent: agentName };
    const routed = {
      aep: '0.1',
      id: ulid(),
      type: 'attention.routed',
      time: new Date().toISOString(),
      source: `aep://x/agent/${agentName}`,
      agent: agentName,
      session: 'routed-s',
      subject: 'q',
      data: { to: ['x'] },
    };
    assert.equal((await post(base, [a, routed])).status, 202);
    await s.waitFor((m) => m.filter((x) => x.data).length >= 2);
    s.close();
    assert.ok(s.messages.filter((m) => m.data).every((m) => m.id === undefined));
    const all = await http(`${base}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ agent: agentName }))}`);
    assert.equal(all.body.split('\n').filter((l) => l.startsWith('data: ')).length, 2);
  });

  it('an emitter-role connection may not subscribe (in-band unauthorized) and stays usable', async () => {
    const c = await WsClient.open(base);
    await c.hello('emitter');
    c.send({ type: 'subscribe', id: 'e' });
    const e = await c.waitFor((f) => f['id'] === 'e');
    assert.equal(e['code'], 'unauthorized');
    c.send(ev('session.started', `em-${ulid()}`, 0));
    c.send({ type: 'ping', t: 'x' });
    assert.equal((await c.waitFor((f) => f['type'] === 'pong'))['t'], 'x');
    c.close();
  });
});
