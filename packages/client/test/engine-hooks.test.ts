// The engine's extension points used by the Claude Code adapter and the MCP bridge (prebuilt
// data, options on a form, the validate hook, lifecycle capture, any AttentionPort), driven
// through the command handler it registers on a recording port (no socket needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CaptureLevel } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { AttentionPort, CommandDecision, CommandHandler, FieldSpec, WireEvent } from '@aep/client';

const FIELDS: FieldSpec[] = [{ id: '1', type: 'string', label: 'Bucket name', required: true }];
const DECLINE = [
  { id: 'decline', label: 'Decline' },
  { id: 'cancel', label: 'Cancel' },
];

function port(ceiling: CaptureLevel, failOn?: string) {
  const emitted: WireEvent[] = [];
  let handler: CommandHandler | undefined;
  let n = 0;
  const p: AttentionPort = {
    ceiling,
    options: { agent: 'hook-agent' },
    emit: (session, type, data, attrs = {}) => {
      if (type === failOn) throw new Error('emitter closed');
      const e = {
        aep: '0.1',
        id: `e${++n}`,
        type,
        time: '2026-01-01T00:00:00Z',
        source: 'aep://h/agent/hook-agent',
        agent: 'hook-agent',
        session,
        ...attrs,
        ...(data ? { data } : {}),
      } as WireEvent;
      emitted.push(e);
      return e;
    },
    onCommand: (_type, h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  let c = 0;
  const respond = async (subject: string, answer: unknown): Promise<CommandDecision> => {
    const event = {
      aep: '0.1',
      id: `c${++c}`,
      type: 'control.attention.respond',
      subject,
      time: '2026-01-01T00:00:00Z',
      source: 'aep://x/agent/ui',
      agent: 'ui',
      session: 's',
      data: { answer },
    } as WireEvent;
    return handler!({ event, raw: JSON.stringify(event) });
  };
  return { port: p, emitted, respond, types: () => emitted.map((e) => e.type) };
}

const rules = (d: CommandDecision) => (d.status === 'rejected' ? (d.issues ?? []).map((i) => i.rule) : []);

test('a form with declared options: answered by option, by text naming one, or by values (values win); other text is nacked', async () => {
  const { port: p, respond, emitted } = port('redacted');
  const engine = new AttentionEngine(p);
  const ask = () => engine.requestAttention({ session: 's', kind: 'form', prompt: 'Configure', fields: FIELDS, options: DECLINE });
  const a = ask();
  assert.deepEqual(rules(await respond(a.id, { text: 'whatever' })), ['control.respond.unmatched-text']);
  assert.deepEqual(rules(await respond(a.id, {})), ['control.respond.answer-shape']);
  assert.deepEqual(rules(await respond(a.id, { option: 'later' })), ['control.respond.unknown-option']);
  const ok = await respond(a.id, { text: 'DECLINE' });
  assert.equal(ok.status, 'accepted');
  ok.after?.();
  assert.deepEqual((await a).status === 'answered' && (await a).answer, { option: 'decline' });
  const b = ask();
  const both = await respond(b.id, { option: 'cancel', values: { 1: 'bkt' } });
  both.after?.();
  assert.deepEqual((await b).status === 'answered' && (await b).answer, { values: { 1: 'bkt' } });
  const c = engine.requestAttention({ session: 's', kind: 'form', prompt: 'Configure', fields: FIELDS });
  assert.deepEqual(rules(await respond(c.id, { option: 'later' })), ['control.respond.unknown-option']);
  assert.deepEqual(rules(await respond(c.id, {})), ['control.respond.answer-shape'], 'a form is answered with values, or decline/cancel');
  const declined = await respond(c.id, { option: 'decline' });
  assert.equal(declined.status, 'accepted', 'every form accepts decline without declaring it (C2)');
  declined.after?.();
  assert.deepEqual(await c, {
    status: 'answered',
    requestId: c.id,
    answer: { option: 'decline' },
    via: 'control',
    by: 'ui',
    commandId: 'c8',
    refusal: 'decline',
  });
  assert.equal(emitted.filter((e) => e.type === 'attention.answered').length, 3);
  await engine.shutdown();
});

test('an async validate hook: concurrent answers decide once (the second is refused); a throwing hook nacks invalid', async () => {
  const { port: p, respond, types } = port('full');
  const engine = new AttentionEngine(p);
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let calls = 0;
  const a = engine.requestAttention({
    session: 's',
    kind: 'permission',
    prompt: 'Allow?',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
    validate: async () => {
      calls++;
      await gate;
      return [];
    },
  });
  const first = respond(a.id, { option: 'allow' });
  const second = respond(a.id, { option: 'deny' });
  release();
  const [d1, d2] = await Promise.all([first, second]);
  assert.equal(calls, 2);
  assert.equal(d1.status, 'accepted');
  assert.equal(d2.status === 'rejected' && d2.reason, 'refused');
  d1.after?.();
  assert.deepEqual((await a).status === 'answered' && (await a).answer, { option: 'allow' });
  assert.deepEqual(
    types().filter((t) => t !== 'attention.requested'),
    ['attention.answered', 'attention.resolved'],
  );
  const b = engine.requestAttention({
    session: 's',
    kind: 'input',
    prompt: 'Name?',
    validate: () => {
      throw new Error('boom');
    },
  });
  const bad = await respond(b.id, { text: 'x' });
  assert.equal(bad.status === 'rejected' && bad.reason, 'invalid');
  assert.deepEqual(rules(bad), ['control.respond.validate-failed']);
  assert.deepEqual(engine.pending(), [b.id]);
  assert.equal(engine.answerOutOfBand(b.id, { text: 'x' }).ok, false);
  const c = engine.requestAttention({ session: 's', kind: 'input', prompt: 'Name?', validate: async () => [] });
  assert.deepEqual(
    engine.answerOutOfBand(c.id, { text: 'x' }).issues.map((i) => i.rule),
    ['control.respond.validate-failed'],
    'oob answers need a synchronous hook',
  );
  await engine.shutdown();
});

test('prebuilt data is sent as is (none at capture none); follow-ups carry the run and their lifecycle capture', async () => {
  const { port: p, respond, emitted } = port('full');
  const engine = new AttentionEngine(p, { lifecycleCapture: (type) => (type === 'attention.answered' ? 'none' : 'redacted'), now: () => 1_000 });
  const data = { kind: 'permission', prompt: 'hook-agent asks permission', options: [{ id: 'allow', label: 'allow' }] };
  const a = engine.requestAttention({ session: 's', kind: 'permission', data, run: 'r1', capture: 'metadata', options: [{ id: 'allow', label: 'Allow' }] });
  const ok = await respond(a.id, { option: 'allow' });
  ok.after?.();
  await a;
  const [req, answered, resolved] = emitted;
  assert.deepEqual(req?.data, data);
  assert.equal(req?.run, 'r1');
  assert.equal(answered?.capture, 'none');
  assert.equal(answered?.data, undefined, 'no data at none');
  assert.equal(answered?.run, 'r1');
  assert.deepEqual([resolved?.capture, resolved?.run, resolved?.data], ['redacted', 'r1', { resolution: 'answered', latency_ms: 0 }]);
  const b = engine.requestAttention({ session: 's', kind: 'permission', data, capture: 'none', options: [{ id: 'allow', label: 'Allow' }] });
  assert.equal(b.event.data, undefined);
  await engine.shutdown();
});

test('a follow-up that cannot be emitted is logged and the request still settles', async () => {
  const { port: p, respond } = port('full', 'attention.answered');
  const lines: string[] = [];
  const engine = new AttentionEngine(p, { log: (l) => lines.push(l) });
  const a = engine.requestAttention({ session: 's', kind: 'input', prompt: 'Name?' });
  const ok = await respond(a.id, { text: 'Ann' });
  ok.after?.();
  assert.equal((await a).status, 'answered');
  assert.ok(
    lines.some((l) => l.includes('attention.answered')),
    lines.join('\n'),
  );
  const { port: q } = port('full', 'attention.timeout');
  const engine2 = new AttentionEngine(q, { log: (l) => lines.push(l) });
  const t = engine2.requestAttention({ session: 's', kind: 'input', prompt: 'Name?', expiresInMs: 5 });
  assert.equal((await t).status, 'timeout');
  await engine.shutdown();
  await engine2.shutdown();
});
