// What an invalid Event is told (AEP-0001 §5, §8.2, §10; AEP-0002 §5, §7.1; AEP-0004 §5), pinned
// whole: the exact list of issues, each with its `rule`, JSON Pointer `path`, `message` (where +
// what + the rule's meaning) and `section`. "Clear errors naming the rule broken" is a promise of
// validateEvent/validateEnvelope; the mutation run of issue 20 (docs/testing.md) showed the
// existing tests checked rule ids only, so a wrong path, a lost message or a duplicate went
// unnoticed. Also: whatever the input (non-objects, functions, getters that throw), both
// functions answer with issues and never throw, and a validation that failed half-way does not
// corrupt the next one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RULES, validateEnvelope, validateEvent, type Issue, type RuleId } from '@aep/protocol';

const exact = (rule: RuleId, path: string, message: string): Issue => ({ rule, path, message, section: RULES[rule].section });
/** The issue of a schema or validate.ts rule: `message` = `<head>: <meaning of the rule>`. */
const iss = (rule: RuleId, path: string, head: string): Issue => exact(rule, path, `${head}: ${RULES[rule].meaning}`);

const base = { aep: '0.1', id: '01A', time: '2026-08-01T09:00:00Z', source: 'aep://h/agent/a/session/s', agent: 'a', session: 's', seq: 1 };
const ev = (type: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...base, type, ...extra });
const UNREADABLE = exact('envelope.not-object', '', 'event could not be read as a JSON object');

test('a non-object Event gets one issue at the root, named "event": envelope.not-object, whatever it carries', () => {
  const notObject = [iss('envelope.not-object', '', 'event must be object')];
  // A function or an array dressed up with Event members (capture none + data, a registered
  // type) is still not an object: no payload or capture rule may run on it.
  const dressed = { ...base, type: 'progress.status', capture: 'none', data: {} };
  for (const v of ['{"aep":"0.1"}', 42, true, null, [], Object.assign([], dressed), Object.assign(() => 0, dressed)]) {
    assert.deepEqual(validateEvent(v), notObject, typeof v);
    assert.deepEqual(validateEvent(v, { emitter: true }), notObject, typeof v);
    assert.deepEqual(validateEnvelope(v), notObject, typeof v);
  }
});

test('an Event whose members cannot be read gets one issue, never an exception (validateEvent and validateEnvelope)', () => {
  const boom = (o: Record<string, unknown>, key: string): Record<string, unknown> =>
    Object.defineProperty(o, key, {
      enumerable: true,
      get() {
        throw new Error('hostile getter');
      },
    });
  // Read by the envelope fast path: validateEnvelope itself must catch it (the relay calls it directly).
  assert.deepEqual(validateEnvelope(boom(ev('progress.status'), 'agent')), [UNREADABLE]);
  assert.deepEqual(validateEvent(boom(ev('progress.status'), 'agent')), [UNREADABLE]);
  // The fast path stops at the bad `aep` (the first key) before the getter; the schema
  // validator then reads it.
  assert.deepEqual(validateEnvelope(boom({ ...ev('progress.status'), aep: '0.2' }, 'agent')), [UNREADABLE]);
  // A getter that throws once: the fast path's read fails, the schema's succeeds. Still unreadable.
  let first = true;
  const once = Object.defineProperty(ev('progress.status'), 'agent', {
    enumerable: true,
    get() {
      if (first) {
        first = false;
        throw new Error('hostile getter');
      }
      return 'a';
    },
  });
  assert.deepEqual(validateEnvelope(once), [UNREADABLE]);
  // Read after the envelope checks (payload validation): validateEvent's own catch answers.
  assert.deepEqual(validateEvent(boom(ev('progress.status'), 'data')), [UNREADABLE]);
  const proxy = new Proxy(ev('progress.status'), {
    ownKeys() {
      throw new Error('hostile proxy');
    },
  });
  assert.deepEqual(validateEnvelope(proxy), [UNREADABLE]);
  assert.deepEqual(validateEvent(proxy), [UNREADABLE]);
});

test('missing required members: one "is missing" issue per member, path /<member>, in schema order', () => {
  const missing = (m: string) => iss('envelope.required', `/${m}`, `/${m} is missing`);
  assert.deepEqual(validateEvent({ aep: '0.1' }), ['id', 'type', 'time', 'source', 'agent'].map(missing));
  // Everything but the type (`base` has none): the fast path's own "type absent" check.
  assert.deepEqual(validateEnvelope(base), [missing('type')]);
  assert.deepEqual(validateEvent(base), [missing('type')]);
});

test('scope rules: a forbidden member "is not allowed", a missing one "is missing", each at its own path', () => {
  const agentScoped = (m: string) => iss('envelope.agent-scoped-forbidden', `/${m}`, `/${m} is not allowed`);
  const agentEv = { aep: '0.1', id: '1', type: 'agent.heartbeat', time: base.time, source: base.source, agent: 'a' };
  assert.deepEqual(validateEvent(agentEv), []);
  assert.deepEqual(validateEvent({ ...agentEv, session: 's', seq: 2, run: 'r', step: 't' }), ['session', 'seq', 'run', 'step'].map(agentScoped));
  assert.deepEqual(validateEvent(ev('control.cancel', { data: { scope: 'session' } })), [iss('envelope.seq-forbidden', '/seq', '/seq is not allowed')]);
  const { seq: _seq, ...noSeq } = base;
  assert.deepEqual(validateEvent({ ...noSeq, type: 'progress.status' }), [iss('envelope.seq-required', '/seq', '/seq is missing')]);
  const { session: _s, ...noSession } = noSeq;
  assert.deepEqual(validateEvent({ ...noSession, type: 'control.pause' }), [iss('envelope.session-required', '/session', '/session is missing')]);
});

test('one issue per rule and path: two schema failures of one member are reported once, with the first message', () => {
  // An empty source fails both minLength and format: one envelope.source issue.
  assert.deepEqual(validateEvent(ev('progress.status', { source: '' })), [iss('envelope.source', '/source', '/source must NOT have fewer than 1 characters')]);
  // Different members of one rule stay separate issues.
  assert.deepEqual(validateEvent(ev('progress.status', { seq: -1, epoch: 1.5, run: '', step: '' })), [
    iss('envelope.identifier', '/run', '/run must NOT have fewer than 1 characters'),
    iss('envelope.identifier', '/step', '/step must NOT have fewer than 1 characters'),
    iss('envelope.seq', '/seq', '/seq must be >= 0'),
    iss('envelope.epoch', '/epoch', '/epoch must be integer'),
  ]);
});

test('a bad extension attribute name is one issue at its own key, escaped as a JSON Pointer (~0, ~1)', () => {
  assert.deepEqual(validateEvent(ev('progress.status', { 'a/b~C': 'x' })), [
    iss('envelope.ext-name', '/a~1b~0C', '/a~1b~0C must match pattern "^[a-z0-9]{1,20}$"'),
  ]);
  assert.deepEqual(validateEvent(ev('progress.status', { Trace: 'x' })), [iss('envelope.ext-name', '/Trace', '/Trace must match pattern "^[a-z0-9]{1,20}$"')]);
  assert.deepEqual(validateEvent(ev('progress.status', { ext: { a: 1 } })), [iss('envelope.ext-value', '/ext', '/ext must be string,integer,boolean')]);
});

test('an Event the fast path refuses and the schema accepts is still refused, with a rule (the safe side)', () => {
  // A member present with the value `undefined` (only an in-memory object can carry one: JSON
  // has no undefined) is the one input known to split the two: the fast path refuses it, ajv
  // skips it. validateEnvelope must not return [] for something its fast path refused.
  const refused = [exact('envelope.not-object', '', 'event rejected by the envelope fast path')];
  assert.deepEqual(validateEnvelope(ev('progress.status', { run: undefined })), refused);
  assert.deepEqual(validateEvent(ev('progress.status', { run: undefined })), refused);
});

test('attention lifecycle followers and control.attention.respond without subject: the type is named in the message', () => {
  for (const type of ['attention.answered', 'attention.resolved', 'attention.timeout', 'attention.routed']) {
    const e = ev(type);
    if (type === 'attention.routed') delete e['seq'];
    assert.deepEqual(validateEvent(e), [iss('attention.subject-required', '/subject', `${type} has no subject`)], type);
    assert.deepEqual(validateEvent({ ...e, subject: '01REQ' }), [], type);
  }
  const { seq: _seq, ...respond } = ev('control.attention.respond');
  assert.deepEqual(validateEvent(respond), [iss('command.subject-required', '/subject', 'control.attention.respond has no subject')]);
  // Other types need no subject.
  assert.deepEqual(validateEvent(ev('attention.requested')), []);
});

test('capture none with data: one capture.data-at-none issue at /data, for registered, unregistered and vendor types', () => {
  const atNone = [iss('capture.data-at-none', '/data', 'data is present at capture none')];
  // Registered with a payload schema: even a member annotated redacted is not reported again.
  assert.deepEqual(validateEvent(ev('run.started', { capture: 'none', data: { prompt: 'secret' } })), atNone);
  assert.deepEqual(validateEvent(ev('session.frobbed', { capture: 'none', data: {} })), atNone);
  assert.deepEqual(validateEvent(ev('x.acme.thing.done', { capture: 'none', data: { a: 1 } })), atNone);
  // Capture none without data, and data at another capture, are fine.
  for (const type of ['run.started', 'session.frobbed', 'x.acme.thing.done']) {
    assert.deepEqual(validateEvent(ev(type, { capture: 'none' })), [], type);
    assert.deepEqual(validateEvent(ev(type, { capture: 'full', data: {} })), [], type);
  }
});

test('data that is not an object is one envelope.data-object issue; the payload schema does not run on it', () => {
  for (const data of ['text', 3, null, [{ prompt: 'x' }]]) {
    assert.deepEqual(validateEvent(ev('run.started', { data })), [iss('envelope.data-object', '/data', '/data must be object')], JSON.stringify(data));
  }
});

test('emitter mode: an unregistered core type is type.unregistered at /type, named in the message, next to other issues', () => {
  const unregistered = iss('type.unregistered', '/type', 'type "session.frobbed" is not a registered core type');
  assert.deepEqual(validateEvent(ev('session.frobbed'), { emitter: true }), [unregistered]);
  assert.deepEqual(validateEvent(ev('session.frobbed')), [], 'consumers tolerate unknown types');
  const { seq: _seq, ...noSeq } = ev('session.frobbed');
  assert.deepEqual(validateEvent(noSeq, { emitter: true }), [iss('envelope.seq-required', '/seq', '/seq is missing'), unregistered]);
  assert.deepEqual(validateEvent(ev('x.acme.thing.done'), { emitter: true }), [], 'vendor types are the emitter’s own');
  // An ill-formed name is envelope.type-name only, not also unregistered.
  assert.deepEqual(
    validateEvent(ev('Session.Frobbed'), { emitter: true }).map((i) => i.rule),
    ['envelope.type-name'],
  );
});

test('payload issues: rule by keyword, path below /data, the schema message', () => {
  assert.deepEqual(validateEvent(ev('attention.requested', { data: { kind: 'choice!', prompt: 3, options: 'x' } })), [
    iss('payload.enum', '/data/kind', '/data/kind must be equal to one of the allowed values'),
    iss('payload.type', '/data/prompt', '/data/prompt must be string'),
    iss('payload.type', '/data/options', '/data/options must be array'),
  ]);
  assert.deepEqual(validateEvent(ev('attention.requested', { data: { kind: 'form', prompt: 'p', fields: [{ id: 'a', type: 'select' }] } })), [
    iss('form.select-choices', '/data/fields/0/choices', '/data/fields/0/choices is missing'),
    iss('payload.required', '/data/fields/0/label', '/data/fields/0/label is missing'),
  ]);
});

test('capture honesty: each member above the declared capture is reported at its full path, naming both levels', () => {
  const above = (path: string, need: string, declared: string) =>
    iss('capture.field-above-capture', path, `${path} needs capture >= ${need} but the event declares ${declared}`);
  // Nested object member, default capture (metadata).
  assert.deepEqual(validateEvent(ev('run.failed', { data: { reason: 'r', error: { type: 't', message: 'm' } } })), [
    above('/data/error/message', 'redacted', 'metadata'),
  ]);
  assert.deepEqual(validateEvent(ev('run.failed', { capture: 'redacted', data: { reason: 'r', error: { type: 't', message: 'm' } } })), []);
  // A full member at redacted.
  assert.deepEqual(validateEvent(ev('tool.requested', { capture: 'redacted', data: { tool: { name: 'n' }, args: {} } })), [
    above('/data/args', 'full', 'redacted'),
  ]);
  assert.deepEqual(validateEvent(ev('tool.requested', { capture: 'full', data: { tool: { name: 'n' }, args: {} } })), []);
  // Array items: the index is part of the path; both levels above metadata are reported.
  assert.deepEqual(
    validateEvent(
      ev('resource.retrieval.returned', {
        data: {
          documents: [
            { id: 'a', content: 'x' },
            { id: 'b', content_redacted: 'y' },
          ],
        },
      }),
    ),
    [above('/data/documents/0/content', 'full', 'metadata'), above('/data/documents/1/content_redacted', 'redacted', 'metadata')],
  );
});

test('a validation that threw half-way through the capture walk does not shift the paths of the next one', () => {
  // A member that reads fine for the payload schema and throws when the capture walk reads it
  // (the walk reads last): count the reads once, then throw on the last one.
  let reads = 0;
  let throwAt = Infinity;
  const hostile = () => {
    const data: Record<string, unknown> = { reason: 'r' };
    Object.defineProperty(data, 'error', {
      enumerable: true,
      get() {
        reads++;
        if (reads >= throwAt) throw new Error('hostile getter');
        return { type: 't', message: 'm' };
      },
    });
    return ev('run.failed', { capture: 'redacted', data });
  };
  assert.deepEqual(validateEvent(hostile()), []);
  throwAt = reads;
  reads = 0;
  assert.deepEqual(validateEvent(hostile()), [UNREADABLE], 'the walk threw and was caught');
  assert.deepEqual(validateEvent(ev('run.failed', { data: { reason: 'r', error: { type: 't', message: 'm' } } })), [
    iss('capture.field-above-capture', '/data/error/message', '/data/error/message needs capture >= redacted but the event declares metadata'),
  ]);
});
