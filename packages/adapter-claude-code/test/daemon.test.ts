// The daemon's HTTP surface with its relay connection replaced by a recording uplink: bad input,
// limits, health, timeouts and the "no token" posture. (The real relay path is driver.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startDaemon } from '@aep/adapter-claude-code';
import type { Uplink } from '@aep/adapter-claude-code';
import type { CommandDecision, IncomingCommand, WireEvent } from '@aep/client';
import { approvalProof } from '@aep/protocol';

const fixture = (n: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./fixtures/hooks/${n}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

function recorder(connected = true): Uplink & { events: WireEvent[]; respond?: (c: IncomingCommand) => CommandDecision | Promise<CommandDecision> } {
  const events: WireEvent[] = [];
  let n = 0;
  const u: Uplink & { events: WireEvent[]; respond?: (c: IncomingCommand) => CommandDecision | Promise<CommandDecision> } = {
    events,
    emit: (session, type, data, attrs) => {
      const e = {
        aep: '0.1',
        id: `ev${++n}`,
        type,
        time: new Date().toISOString(),
        source: `aep://t/agent/claude-code/session/${session}`,
        agent: 'claude-code',
        session,
        seq: n,
        ...attrs,
        ...(data ? { data } : {}),
      } as WireEvent;
      events.push(e);
      return e;
    },
    connected: () => connected,
    onState: () => {},
    onCommand: (type, h) => {
      if (type === 'control.attention.respond') u.respond = h;
    },
    flush: async () => true,
    close: async () => {},
  };
  return u;
}

const SECRET = 'daemon-test-secret-7Qm2xVb9LpR4tZ8wKc3NfJ6hYd1sGa5eUo0iXq_';

/** The daemon in-process, with a known secret and no socket (the socket is channel.test.ts). */
function start(opts: Parameters<typeof startDaemon>[0]): ReturnType<typeof startDaemon> {
  return startDaemon({ secret: SECRET, socket: false, ...opts });
}

async function post(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

test('health, 404, 413 and 400 with stable codes; the daemon keeps serving', async () => {
  const lines: string[] = [];
  const d = await start({ port: 0, uplink: recorder(), limits: { maxHookBytes: 2048 }, log: (l) => lines.push(l) });
  try {
    const h = await (await fetch(`${d.url}/health`, { headers: { authorization: `Bearer ${SECRET}` } })).json();
    assert.deepEqual(h, { ok: true, connected: true, pending: 0 });
    const nf = await post(`${d.url}/elsewhere`, '{}');
    assert.equal(nf.status, 404);
    assert.equal((nf.json as Record<string, unknown>)['error'], 'AEP_CC_NOT_FOUND');
    const big = await post(`${d.url}/hook`, JSON.stringify({ ...fixture('Stop'), pad: 'x'.repeat(5000) }));
    assert.equal(big.status, 413);
    assert.equal((big.json as Record<string, unknown>)['error'], 'AEP_CC_HOOK_TOO_LARGE');
    const bad = await post(`${d.url}/hook`, '{"hook_event_name":"PreToolUse","session_id":"s"}');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, { error: 'AEP_CC_HOOK_INVALID', message: 'hook input (PreToolUse): tool_name must be a non-empty string' });
    assert.ok(lines.some((l) => l.includes('AEP_CC_HOOK_INVALID')));
    const ok = await post(`${d.url}/hooks/Stop`, JSON.stringify(fixture('Stop')));
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, {});
  } finally {
    await d.close();
  }
});

test('an answer nacked invalid keeps the request pending; a valid one releases the hook; a late one is refused', async () => {
  const u = recorder();
  const d = await start({ port: 0, uplink: u, waitMs: 20_000 });
  try {
    const held = post(`${d.url}/hooks/PermissionRequest`, JSON.stringify(fixture('PermissionRequest')));
    const deadline = Date.now() + 5_000;
    while (d.pending().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const [id] = d.pending();
    assert.ok(id);
    const cmd = (answer: unknown, cid: string): IncomingCommand => {
      const event = {
        aep: '0.1',
        id: cid,
        type: 'control.attention.respond',
        time: new Date().toISOString(),
        source: 'aep://x/agent/ui',
        agent: 'ui',
        session: u.events[0]!.session!,
        subject: id,
        data: { answer },
      } as WireEvent;
      return { event, raw: JSON.stringify(event) };
    };
    const nack = await u.respond!(cmd({ option: 'maybe' }, 'c1'));
    assert.equal(nack.status, 'rejected');
    assert.equal(nack.status === 'rejected' && nack.reason, 'invalid');
    assert.deepEqual(d.pending(), [id]);
    const wrongSubject = await u.respond!({ ...cmd({ option: 'allow' }, 'c2'), event: { ...cmd({ option: 'allow' }, 'c2').event, subject: 'nope' } });
    assert.equal(wrongSubject.status === 'rejected' && wrongSubject.reason, 'invalid');
    const unproven = await u.respond!(cmd({ option: 'allow' }, 'c2b'));
    assert.equal(unproven.status === 'rejected' && unproven.reason, 'invalid', 'an allow without approvalproof (contract C1)');
    const proven = cmd({ option: 'allow' }, 'c3');
    proven.event = { ...proven.event, approvalproof: approvalProof(id, 'git push origin main --force') } as WireEvent;
    const acc = await u.respond!(proven);
    assert.equal(acc.status, 'accepted');
    acc.after?.();
    assert.deepEqual((await held).json, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
    const types = u.events.map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['attention.answered', 'attention.resolved']);
    const answered = u.events.at(-2)!;
    assert.equal(answered.subject, id);
    assert.equal(answered.cause, 'c3');
    assert.deepEqual(answered.data, { answer: { option: 'allow' }, via: 'control', by: 'ui' });
    const late = await u.respond!(cmd({ option: 'deny' }, 'c4'));
    assert.equal(late.status === 'rejected' && late.reason, 'refused');
  } finally {
    await d.close();
  }
});

test('without a relay token, questions are recorded and handed back at once', async () => {
  // No uplink injection and no token: the daemon's own relay connection (to a dead port).
  const d = await start({ port: 0, relay: 'http://127.0.0.1:9', waitMs: 60_000 });
  try {
    const t0 = performance.now();
    const r = await post(`${d.url}/hooks/PreToolUse`, JSON.stringify(fixture('AskUserQuestion')));
    assert.deepEqual(r.json, {});
    assert.ok(performance.now() - t0 < 1_000);
    assert.deepEqual(d.pending(), []);
  } finally {
    await d.close();
  }
});

test('close() releases held hooks with no decision and records the dismissal', async () => {
  const u = recorder();
  const d = await start({ port: 0, uplink: u, waitMs: 60_000 });
  const held = post(`${d.url}/hooks/Elicitation`, JSON.stringify(fixture('Elicitation')));
  const deadline = Date.now() + 5_000;
  while (d.pending().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(d.pending().length, 1);
  const closing = d.close();
  assert.deepEqual((await held).json, {});
  await closing;
  const last = u.events.at(-1)!;
  assert.equal(last.type, 'attention.resolved');
  assert.deepEqual(last.data, { resolution: 'dismissed', latency_ms: (last.data as Record<string, number>)['latency_ms'] });
});

test('a PostToolUse for the held AskUserQuestion call dismisses it (answered elsewhere)', async () => {
  const u = recorder();
  const d = await start({ port: 0, uplink: u, waitMs: 60_000 });
  try {
    const ask = fixture('AskUserQuestion');
    const held = post(`${d.url}/hooks/PreToolUse`, JSON.stringify(ask));
    const deadline = Date.now() + 5_000;
    while (d.pending().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const [id] = d.pending();
    assert.ok(id);
    const other = await post(
      `${d.url}/hooks/PostToolUse`,
      JSON.stringify({ ...ask, hook_event_name: 'PostToolUse', tool_input: { other: 'input' }, tool_response: { answers: {} } }),
    );
    assert.deepEqual(other.json, {});
    assert.deepEqual((await held).json, {});
    assert.deepEqual(d.pending(), []);
    const resolved = u.events.find((e) => e.type === 'attention.resolved' && e.subject === id)!;
    assert.equal((resolved.data as Record<string, unknown>)['resolution'], 'dismissed');
    assert.equal(resolved.cause, id);
    const idx = (t: string) => u.events.findIndex((e) => e.type === t && (t !== 'attention.resolved' || e.subject === id));
    assert.ok(idx('attention.resolved') < idx('tool.completed'), 'the dismissal precedes tool.completed');
  } finally {
    await d.close();
  }
});
