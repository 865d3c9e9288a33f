// The event builder's identity checks and optional members (AEP-0001 §5.1: optional attributes
// at their default are omitted, never null), and the approval view's option handling (contract
// C1, docs/decisions.md "Approvals"). From the mutation run (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmitter, AepError, approvalView, approvalDigest, labelEffect, optionEffect, validateEvent } from '@aep/protocol';

const code = (c: string, re: RegExp) => (e: unknown) => e instanceof AepError && e.code === c && re.test(e.message);

test('emitter identity: source and agent must be non-empty strings, epoch an integer >= 0', () => {
  const ok = { source: 'aep://h/agent/a', agent: 'a' };
  assert.throws(() => createEmitter({ ...ok, source: '' }), code('AEP_EMITTER_OPTIONS', /^source must be a non-empty URI \(AEP-0001 §5\.1\)$/));
  assert.throws(() => createEmitter({ ...ok, source: 5 as never }), code('AEP_EMITTER_OPTIONS', /^source must be/));
  assert.throws(() => createEmitter({ ...ok, agent: '' }), code('AEP_EMITTER_OPTIONS', /^agent must be a non-empty string \(AEP-0001 §5\.1\)$/));
  assert.throws(() => createEmitter({ ...ok, agent: null as never }), code('AEP_EMITTER_OPTIONS', /^agent must be/));
  assert.throws(() => createEmitter({ ...ok, epoch: -1 }), code('AEP_EMITTER_OPTIONS', /^epoch must be an integer >= 0 \(AEP-0001 §5\.1\)$/));
  assert.throws(() => createEmitter({ ...ok, epoch: 1.5 }), code('AEP_EMITTER_OPTIONS', /^epoch must be/));
  const em = createEmitter({ ...ok, epoch: 2, session: 's' });
  assert.equal(em.build({ type: 'progress.status' }).epoch, 2, 'the default epoch is used');
});

test('optional members are copied when given and absent otherwise; capture metadata and severity info are omitted', () => {
  const em = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', capture: 'redacted' });
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const e = em.build({
    type: 'tool.completed',
    run: 'r',
    step: 'st',
    cause: 'C1',
    traceparent: tp,
    subject: 'x',
    severity: 'warning',
    data: { tool: { name: 'Bash' } },
  });
  assert.equal(e.step, 'st');
  assert.equal(e.cause, 'C1');
  assert.equal(e.traceparent, tp);
  assert.equal(e.run, 'r');
  assert.equal(e.severity, 'warning');
  assert.equal(e.capture, 'redacted', 'the emitter default capture');
  assert.deepEqual(validateEvent(e, { emitter: true }), []);
  const plain = em.build({ type: 'progress.status', capture: 'metadata', severity: 'info' });
  for (const k of ['step', 'cause', 'traceparent', 'run', 'subject', 'severity', 'capture']) assert.ok(!(k in plain), k);
  const metaDefault = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', capture: 'metadata' }).build({ type: 'progress.status' });
  assert.ok(!('capture' in metaDefault));
  // agent-scoped: no session even when the emitter has a default one, and no seq
  const hb = em.build({ type: 'agent.heartbeat' });
  assert.ok(!('session' in hb) && !('seq' in hb));
  // a foreign-emitter event (a command) keeps the session but gets no seq
  const cmd = em.build({ type: 'control.pause', subject: 'x' });
  assert.equal(cmd.session, 's');
  assert.ok(!('seq' in cmd));
});

test('an invalid event is refused naming each rule and where, and uses up no seq', () => {
  const em = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's' });
  assert.throws(
    () => em.build({ type: 'Bad.Type' }),
    (e: unknown) => e instanceof AepError && /^refusing to emit an invalid Bad\.Type event: envelope\.type-name at \/type$/.test(e.message),
  );
  assert.throws(
    () => em.build({ type: 'run.finished', run: 'r', data: { duration_ms: -1 } }),
    (e: unknown) => e instanceof AepError && /payload\.range at \/data\/duration_ms/.test(e.message),
  );
  assert.equal(em.position('s').nextSeq, 0);
  const noCheck = createEmitter({ source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', validate: false });
  assert.equal(noCheck.build({ type: 'Bad.Type' }).type, 'Bad.Type', 'validate:false builds without checking');
});

test('labelEffect: the first word after opening quotes or brackets; none -> other', () => {
  assert.equal(labelEffect('([ "Allow it'), 'allow');
  assert.equal(labelEffect('{deny}'), 'deny');
  assert.equal(labelEffect('  '), 'other');
  assert.equal(labelEffect('42 reasons'), 'other');
  assert.equal(labelEffect('!allow'), 'other');
  assert.equal(labelEffect('Maybe later'), 'other');
  assert.equal(optionEffect('  ALLOW '), 'allow');
  assert.equal(optionEffect(' Deny'), 'deny');
});

test('approvalView options: malformed entries are skipped, a missing label shows the id, the digest is reported', () => {
  const prompt = 'rm -rf /tmp/x';
  const v = approvalView({
    approvaldigest: approvalDigest(prompt),
    data: { kind: 'permission', prompt, options: [null, 'allow', { id: 7 }, { id: 'allow' }, { id: 'deny', label: 3 }, { id: 'later', label: 'Allow later' }] },
  });
  assert.deepEqual(
    v.options.map((o) => [o.id, o.label, o.effect, o.contradicts, o.offer]),
    [
      ['allow', 'allow', 'allow', false, true],
      ['deny', 'deny', 'deny', false, true],
      ['later', 'Allow later', 'other', true, true],
    ],
  );
  assert.equal(v.flagged, true);
  assert.equal(v.digest, approvalDigest(prompt));
  assert.equal(v.text, prompt);
  const none = approvalView({ data: { kind: 'question', prompt: 'p', options: [{ id: 'allow', label: 'Allow' }] } });
  assert.equal(none.required, false, 'not a permission request, no digest: no approval needed');
  assert.equal(none.options[0]!.offer, true);
  assert.equal(none.digest, undefined);
  assert.equal(none.text, undefined);
  assert.equal(none.flagged, false);
  const notList = approvalView({ data: { kind: 'permission', prompt: 'p', options: 'allow' } });
  assert.deepEqual(notList.options, []);
  assert.equal(notList.required, true);
  // A digest on a non-permission request makes it an approval too.
  const declared = approvalView({ approvaldigest: 'x', data: { kind: 'question', prompt: 'p', options: [{ id: 'allow' }, { id: 'other' }] } });
  assert.equal(declared.required, true);
  assert.deepEqual(
    declared.options.map((o) => [o.id, o.offer]),
    [
      ['allow', false],
      ['other', false],
    ],
    'only deny is offered on an incomplete approval',
  );
});
