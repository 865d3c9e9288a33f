// The envelope fast path (packages/protocol/src/envelope.ts) says "valid" exactly when the
// envelope schema does (AEP-0001 §5, §5.2, §6): every member it checks is refused when it breaks
// its rule, however close to valid (an empty identifier, `data: null`, a valid traceparent with
// text around it), and the envelope classes of AEP-0001 §5.2 / the command set of AEP-0004 §2
// match only whole type names. Pinned through validateEnvelope (a fast path that wrongly says
// "valid" answers [] there), scopeClass and isCommandType. Found by the issue 20 mutation run
// (docs/testing.md); the property test of property-validate.test.ts draws values too far from
// these edges to notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RULES, isCommandType, scopeClass, validateEnvelope, validateEvent, type Issue, type RuleId } from '@aep/protocol';
import { MINIMAL_EVENT } from '../../../test/support/envelope.js';

const iss = (rule: RuleId, path: string, head: string): Issue => ({ rule, path, message: `${head}: ${RULES[rule].meaning}`, section: RULES[rule].section });

const base = MINIMAL_EVENT;
const TRACEPARENT = `00-${'4bf92f3577b34da6a3ce929d0e0e4736'}-${'00f067aa0ba902b7'}-01`;

test('a valid traceparent with anything before or after it is refused (envelope.traceparent)', () => {
  assert.deepEqual(validateEnvelope({ ...base, traceparent: TRACEPARENT }), []);
  for (const tp of [`x${TRACEPARENT}`, `${TRACEPARENT}x`, ` ${TRACEPARENT}`, `${TRACEPARENT}\n`, `${TRACEPARENT}-01`, `00-${TRACEPARENT}`]) {
    const head = `/traceparent must match pattern "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"`;
    assert.deepEqual(validateEnvelope({ ...base, traceparent: tp }), [iss('envelope.traceparent', '/traceparent', head)], JSON.stringify(tp));
  }
});

test('every identifier member is a non-empty string: "" is refused with its rule at its path', () => {
  const tooShort = (rule: RuleId, m: string) => iss(rule, `/${m}`, `/${m} must NOT have fewer than 1 characters`);
  assert.deepEqual(validateEnvelope({ ...base, id: '' }), [tooShort('envelope.id', 'id')]);
  assert.deepEqual(validateEnvelope({ ...base, agent: '' }), [tooShort('envelope.agent', 'agent')]);
  for (const m of ['subject', 'session', 'run', 'step', 'cause']) {
    assert.deepEqual(validateEnvelope({ ...base, [m]: 'x' }), [], m);
    assert.deepEqual(validateEnvelope({ ...base, [m]: '' }), [tooShort('envelope.identifier', m)], m);
    // An extension attribute may be any string or integer; these members may not.
    assert.deepEqual(validateEnvelope({ ...base, [m]: 7 }), [iss('envelope.identifier', `/${m}`, `/${m} must be string`)], m);
  }
});

test('data is an object: null, an array, a string are refused (envelope.data-object)', () => {
  assert.deepEqual(validateEnvelope({ ...base, data: {} }), []);
  for (const data of [null, [], 'x', 1]) {
    assert.deepEqual(validateEnvelope({ ...base, data }), [iss('envelope.data-object', '/data', '/data must be object')], JSON.stringify(data));
  }
});

test('an Event without a type is refused, whatever else it has', () => {
  const { type: _type, ...noType } = base;
  assert.deepEqual(validateEnvelope(noType), [iss('envelope.required', '/type', '/type is missing')]);
  assert.deepEqual(validateEnvelope({ ...noType, type: 7 }), [iss('envelope.type-name', '/type', '/type must be string')]);
});

test('agent-scoped events carry none of session, seq, run, step: each one alone is refused', () => {
  const agentEv = { aep: '0.1', id: '1', type: 'agent.heartbeat', time: base.time, source: base.source, agent: 'a' };
  assert.deepEqual(validateEnvelope(agentEv), []);
  const values: Record<string, unknown> = { session: 's', seq: 0, run: 'r', step: 't' };
  for (const [m, v] of Object.entries(values)) {
    assert.deepEqual(
      validateEnvelope({ ...agentEv, [m]: v }),
      [iss('envelope.agent-scoped-forbidden', `/${m}`, `/${m} is not allowed`)],
      `agent.heartbeat with ${m}`,
    );
  }
});

test('the foreign (seq-less) class is whole type names only: "<category>.control.cancel" is an ordinary session event', () => {
  for (const type of ['run.control.cancel', 'session.control.pause', 'tool.attention.routed', 'state.control.attention.respond']) {
    assert.equal(scopeClass(type), 'session', type);
    assert.deepEqual(validateEnvelope({ ...base, type }), [], `${type} with seq`);
    const { seq: _seq, ...noSeq } = base;
    assert.deepEqual(validateEnvelope({ ...noSeq, type }), [iss('envelope.seq-required', '/seq', '/seq is missing')], `${type} without seq`);
  }
  for (const type of ['control.cancel', 'control.attention.respond', 'attention.routed', 'x.acme.control.stop'])
    assert.equal(scopeClass(type), 'foreign', type);
  assert.equal(scopeClass('agent.heartbeat'), 'agent');
  // A name that is not a valid type is still classified (its class decides nothing: it is refused).
  assert.equal(scopeClass('Control.Cancel'), 'session');
  assert.equal(scopeClass('agent.'), 'agent');
});

test('isCommandType: exactly the four core commands and x.{vendor}.control.*, never a name that only contains or starts with one', () => {
  for (const type of ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume', 'x.acme.control.stop']) {
    assert.equal(isCommandType(type), true, type);
  }
  for (const type of [
    'run.control.cancel',
    'session.control.pause',
    'x.control.resume',
    'control.cancelled',
    'control.paused',
    'control.resume.now',
    'control.attention.responded',
    'control.accepted',
    'control.rejected',
    'xx.acme.control.stop',
    'x.acme.control.',
  ]) {
    assert.equal(isCommandType(type), false, type);
  }
  // The same names through validateEvent: a non-command control-looking type needs seq, a command must not carry it.
  assert.deepEqual(validateEvent({ ...base, type: 'control.cancel', data: { scope: 'session' } }), [
    iss('envelope.seq-forbidden', '/seq', '/seq is not allowed'),
  ]);
});
