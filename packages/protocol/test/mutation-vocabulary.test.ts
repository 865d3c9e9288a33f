// The fixed vocabularies the protocol core exports (wire names other components and other
// implementations rely on), each member checked by what it does, not only by listing it; and the
// structural fingerprint that tells redelivery from an id conflict (AEP-0001 §7.4). From the
// mutation run (docs/testing.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APPROVAL_DIGEST_ATTR,
  APPROVAL_PROOF_ATTR,
  PERMISSIVE_OPTION_IDS,
  REFUSING_EFFECT_IDS,
  REFUSING_OPTION_IDS,
  optionEffect,
  mapTextAnswer,
  FILTERABLE_ATTRIBUTES,
  NON_FILTERABLE_ATTRIBUTES,
  compileFilter,
  NDJSON_CONTENT_TYPE,
  SSE_REPLAY_EXHAUSTED,
  encodeReplayExhausted,
  AEP_VERSION,
  SUPPORTED_VERSIONS,
  AEP_VERSION_HEADER,
  SSE_CONTENT_TYPE,
  JSON_CONTENT_TYPE,
  WIRE_PATHS,
  HELLO_ROLES,
  validateElicitationContent,
  elicitationToForm,
  fingerprint,
  validateStream,
} from '@aep/protocol';

test('approval attributes and option effects: every permissive id allows, every refusing id denies, in any case', () => {
  assert.equal(APPROVAL_DIGEST_ATTR, 'approvaldigest');
  assert.equal(APPROVAL_PROOF_ATTR, 'approvalproof');
  assert.deepEqual(
    [...PERMISSIVE_OPTION_IDS],
    ['allow', 'allow_always', 'allow_session', 'always', 'approve', 'accept', 'yes', 'grant', 'permit', 'continue', 'proceed', 'ok'],
  );
  assert.deepEqual([...REFUSING_EFFECT_IDS], ['deny', 'reject', 'no', 'decline', 'refuse', 'disallow', 'block', 'cancel', 'abort', 'stop']);
  for (const id of PERMISSIVE_OPTION_IDS) assert.equal(optionEffect(id.toUpperCase()), 'allow', id);
  for (const id of REFUSING_EFFECT_IDS) assert.equal(optionEffect(` ${id} `), 'deny', id);
  assert.equal(optionEffect(''), 'other');
});

test('refusing option ids: each one is the fallback of unmatched text on a permission request', () => {
  assert.deepEqual([...REFUSING_OPTION_IDS], ['deny', 'reject', 'no', 'decline', 'refuse', 'disallow', 'block']);
  for (const id of REFUSING_OPTION_IDS) {
    const req = {
      kind: 'permission',
      options: [
        { id: 'allow', label: 'Allow' },
        { id: id.toUpperCase(), label: 'Refuse it' },
      ],
    };
    assert.deepEqual(mapTextAnswer(req, 'hmm, not sure'), { option: id.toUpperCase(), text: 'hmm, not sure' }, id);
  }
  assert.ok(!REFUSING_OPTION_IDS.includes('cancel'), 'cancel is a form refusal, not the permission fallback');
});

test('filterable attributes: each one can be filtered on (and matches by value); the others are refused', () => {
  assert.deepEqual([...FILTERABLE_ATTRIBUTES], ['id', 'type', 'subject', 'source', 'agent', 'session', 'run', 'step', 'epoch', 'cause', 'severity', 'capture']);
  assert.deepEqual([...NON_FILTERABLE_ATTRIBUTES], ['time', 'seq', 'aep', 'traceparent', 'data']);
  const values: Record<string, unknown> = {
    id: 'E1',
    type: 'tool.completed',
    subject: 's',
    source: 'aep://h',
    agent: 'a',
    session: 's1',
    run: 'r',
    step: 'st',
    epoch: 2,
    cause: 'C',
    severity: 'error',
    capture: 'full',
  };
  for (const k of FILTERABLE_ATTRIBUTES) {
    const f = compileFilter({ [k]: values[k] });
    assert.ok(f.ok, k);
    if (!f.ok) continue;
    assert.equal(f.match({ [k]: values[k] }), true, k);
    assert.equal(f.match({ [k]: k === 'epoch' ? 3 : 'zz' }), false, k);
  }
  for (const k of NON_FILTERABLE_ATTRIBUTES) {
    const f = compileFilter({ [k]: 'x' });
    assert.ok(!f.ok && f.issues[0]!.rule === 'invalid-filter.forbidden-key', k);
  }
});

test('wire names: version, header, content types, paths, hello roles, the replay-exhausted comment', () => {
  assert.equal(AEP_VERSION, '0.1');
  assert.deepEqual([...SUPPORTED_VERSIONS], ['0.1']);
  assert.equal(AEP_VERSION_HEADER, 'AEP-Version');
  assert.equal(SSE_CONTENT_TYPE, 'text/event-stream');
  assert.equal(JSON_CONTENT_TYPE, 'application/json');
  assert.equal(NDJSON_CONTENT_TYPE, 'application/x-ndjson');
  assert.deepEqual(WIRE_PATHS, { events: '/events', stream: '/stream', socket: '/socket', discovery: '/.well-known/aep' });
  assert.deepEqual([...HELLO_ROLES], ['emitter', 'consumer', 'both']);
  assert.equal(SSE_REPLAY_EXHAUSTED, 'replay-exhausted');
  assert.ok(encodeReplayExhausted('s', { epoch: 0, seq: 1 }).startsWith(`: ${SSE_REPLAY_EXHAUSTED} `));
});

test('elicitation: a schema keyword a form cannot express is refused naming it; issues cite the MCP section', () => {
  for (const kw of ['pattern', 'multipleOf', 'exclusiveMinimum', 'const', 'allOf', '$ref', 'additionalProperties', 'uniqueItems', 'maxProperties']) {
    const r = elicitationToForm(
      { message: 'm', requestedSchema: { type: 'object', properties: { p: { type: 'string', [kw]: 1 } } } },
      { agent: 'a', capture: 'full' },
    );
    assert.ok(!r.ok && r.reason === `property "p" uses "${kw}", which an AEP form cannot express`, kw);
  }
  const [issue] = validateElicitationContent({ type: 'array' }, {});
  assert.equal(issue!.section, 'MCP 2025-11-25 elicitation (requestedSchema)');
  const typed = validateElicitationContent({ type: 'object', properties: { n: { type: 'number' } } }, { n: 'x' });
  assert.ok(typed.length === 1 && typed[0]!.section.length > 0);
});

test('fingerprint: string content counts, at every position of a short string and at the sampled ones of a long string', () => {
  assert.notEqual(fingerprint({ a: 'x' }), fingerprint({ a: 'y' }));
  assert.notEqual(fingerprint('ab'), fingerprint('ba'));
  assert.notEqual(fingerprint(''), fingerprint('a'));
  assert.notEqual(fingerprint({ ab: 1 }), fingerprint({ ba: 1 }), 'keys count');
  const base32 = 'a'.repeat(32);
  for (let i = 0; i < 32; i++) {
    const changed = base32.slice(0, i) + 'b' + base32.slice(i + 1);
    assert.notEqual(fingerprint(changed), fingerprint(base32), `32 characters are hashed in full (position ${i})`);
  }
  const long = 'a'.repeat(1000);
  for (const i of [0, 7, 992, 999]) {
    const changed = long.slice(0, i) + 'b' + long.slice(i + 1);
    assert.notEqual(fingerprint(changed), fingerprint(long), `long strings: first and last 8 characters (position ${i})`);
  }
  assert.notEqual(fingerprint('a'.repeat(1001)), fingerprint(long), 'and their length');
  assert.notEqual(fingerprint(2 ** 40), fingerprint(2 ** 40 + 1), 'large integers');
  assert.notEqual(fingerprint(1.5), fingerprint(2.5), 'fractions');
  assert.notEqual(fingerprint(true), fingerprint(false));
  assert.notEqual(fingerprint(null), fingerprint({}));
  assert.notEqual(fingerprint([]), fingerprint({}));
  assert.notEqual(fingerprint([1, 2]), fingerprint([2, 1]));
  // what it is used for: a changed text in a redelivered id is a conflict
  const ev = (text: string) => ({
    aep: '0.1',
    id: 'E',
    type: 'progress.status',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/a/session/s',
    agent: 'a',
    session: 's',
    seq: 1,
    capture: 'full',
    data: { message: text },
  });
  assert.deepEqual(validateStream([ev('done'), ev('done')]), []);
  assert.deepEqual(
    validateStream([ev('done'), ev('dona')]).map((i) => i.rule),
    ['stream.id-conflict'],
  );
});
