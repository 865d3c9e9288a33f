import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmitter, AepError, AepEventError, validateEvent } from '@aep/protocol';

const opts = { source: 'aep://host/agent/bot/session/s1', agent: 'bot', session: 's1' };

test('session-scoped events get increasing seq per session, valid envelopes, defaults omitted', () => {
  const em = createEmitter(opts);
  const a = em.build({ type: 'session.started' });
  const b = em.build({ type: 'run.started', run: 'r1' });
  const c = em.build({ type: 'session.started', session: 's2' });
  assert.equal(a.seq, 0);
  assert.equal(b.seq, 1);
  assert.equal(c.seq, 0);
  for (const e of [a, b, c]) {
    assert.deepEqual(validateEvent(e, { emitter: true }), []);
    for (const k of ['epoch', 'severity', 'capture', 'subject', 'cause', 'data', 'step', 'traceparent']) assert.equal(k in e, false, k);
    for (const v of Object.values(e)) assert.notEqual(v, null);
  }
  assert.ok(a.id < b.id && b.id < c.id, 'ULIDs are monotonic');
  assert.match(a.id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
});

test('ids stay monotonic within one millisecond', () => {
  const em = createEmitter({ ...opts, now: () => 1_700_000_000_000 });
  let prev = '';
  for (let i = 0; i < 1000; i++) {
    const id = em.nextId();
    assert.ok(id > prev);
    prev = id;
  }
});

test('foreign-emitter and agent-scoped events get no seq', () => {
  const em = createEmitter(opts);
  const cmd = em.build({ type: 'control.cancel', data: { scope: 'session' } });
  assert.equal('seq' in cmd, false);
  assert.equal(cmd.session, 's1');
  const routed = em.build({ type: 'attention.routed', subject: 'REQ1' });
  assert.equal('seq' in routed, false);
  const hb = em.build({ type: 'agent.heartbeat' });
  assert.equal('session' in hb, false);
  assert.equal('seq' in hb, false);
  assert.equal(em.position('s1').nextSeq, 0, 'no seq consumed');
});

test('epoch is emitted when non-zero; setPosition refuses going back', () => {
  const em = createEmitter({ ...opts, epoch: 3 });
  const e = em.build({ type: 'session.started' });
  assert.equal(e.epoch, 3);
  assert.equal(e.seq, 0);
  em.setPosition('s1', { epoch: 4, nextSeq: 0 });
  assert.equal(em.build({ type: 'run.started' }).epoch, 4);
  assert.throws(
    () => em.setPosition('s1', { epoch: 3, nextSeq: 9 }),
    (err: unknown) => err instanceof AepError && err.code === 'AEP_POSITION_INVALID',
  );
  assert.throws(
    () => em.setPosition('s1', { epoch: 4, nextSeq: 0 }),
    (err: unknown) => err instanceof AepError && err.code === 'AEP_POSITION_INVALID',
  );
});

test('severity info and capture metadata are omitted; others kept', () => {
  const em = createEmitter(opts);
  const a = em.build({ type: 'progress.status', severity: 'info', capture: 'metadata' });
  assert.equal('severity' in a, false);
  assert.equal('capture' in a, false);
  const b = em.build({ type: 'progress.status', severity: 'notice', capture: 'redacted', data: { message: 'hi' } });
  assert.equal(b.severity, 'notice');
  assert.equal(b.capture, 'redacted');
});

for (const [name, ext, why] of [
  ['collides with a core name', { seq: 1 }, /collides/],
  ['has an underscore', { acme_region: 'x' }, /ill-formed/],
  ['is too long', { abcdefghijklmnopqrstu: 'x' }, /ill-formed/],
  ['has upper case', { Acme: 'x' }, /ill-formed/],
  ['is an object', { acmeobj: {} }, /string, integer or boolean/],
  ['is null', { acmenull: null }, /null/],
  ['is an array', { acmearr: [] }, /array/],
  ['is a non-integer number', { acmefloat: 1.5 }, /non-integer/],
] as const) {
  test(`an extension attribute that ${name} is refused with AEP_EXT_INVALID and nothing is emitted`, () => {
    const em = createEmitter(opts);
    assert.throws(
      () => em.build({ type: 'session.started', extensions: ext as never }),
      (err: unknown) => err instanceof AepError && err.code === 'AEP_EXT_INVALID' && why.test(err.message),
    );
    assert.equal(em.position('s1').nextSeq, 0);
    assert.throws(
      () => createEmitter({ ...opts, extensions: ext as never }),
      (err: unknown) => err instanceof AepError && err.code === 'AEP_EXT_INVALID',
    );
  });
}

test('legal extension attributes are carried; a second source for one name is refused', () => {
  const em = createEmitter({ ...opts, extensions: { acmeregion: 'eu', acmeshard: 3 } });
  const e = em.build({ type: 'session.started', extensions: { acmeflag: true } });
  assert.equal(e['acmeregion'], 'eu');
  assert.equal(e['acmeshard'], 3);
  assert.equal(e['acmeflag'], true);
  assert.throws(
    () => em.build({ type: 'session.started', extensions: { acmeregion: 'us' } }),
    (err: unknown) => err instanceof AepError && err.code === 'AEP_EXT_INVALID',
  );
});

test('an event that would be invalid is refused with its issues, and no seq is used', () => {
  const em = createEmitter(opts);
  assert.throws(
    () => em.build({ type: 'tool.requested', data: {} }),
    (err: unknown) => err instanceof AepEventError && err.code === 'AEP_EVENT_INVALID' && err.issues.some((i) => i.rule === 'payload.required'),
  );
  assert.throws(
    () => em.build({ type: 'progress.made_up' }),
    (err: unknown) => err instanceof AepEventError && err.issues.some((i) => i.rule === 'type.unregistered'),
  );
  assert.throws(
    () => em.build({ type: 'run.started', data: { prompt: 'secret' } }),
    (err: unknown) => err instanceof AepEventError && err.issues.some((i) => i.rule === 'capture.field-above-capture'),
  );
  assert.equal(em.position('s1').nextSeq, 0);
  assert.equal(em.build({ type: 'x.acme.thing.happened' }).seq, 0);
});
