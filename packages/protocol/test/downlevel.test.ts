// downlevel details beyond the conformance corpus: identity, purity, structural sharing, the
// annotation-driven mechanism on a small fixture tree (createDownleveler), errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downlevel, createDownleveler, AepError } from '@aep/protocol';
import type { CaptureTree } from '@aep/protocol';

const base = { aep: '0.1', id: 'i', time: 't', source: 's', agent: 'bot', session: 's', seq: 1 };

test('the same object is returned at or above the event level', () => {
  const e = { ...base, type: 'run.started', capture: 'redacted', data: { trigger: 'user', prompt: 'p' } };
  assert.equal(downlevel(e, 'redacted'), e);
  assert.equal(downlevel(e, 'full'), e);
  const plain = { ...base, type: 'run.started', data: { trigger: 'user' } };
  assert.equal(downlevel(plain, 'metadata'), plain);
  assert.equal(downlevel(plain, 'redacted'), plain);
});

test('non-objects are returned as is; an unknown ceiling throws AEP_CAPTURE_UNKNOWN', () => {
  assert.equal(downlevel(5 as unknown, 'none'), 5);
  assert.equal(downlevel(null as unknown, 'none'), null);
  assert.throws(
    () => downlevel({ ...base, type: 'run.started' }, 'secret' as never),
    (e: unknown) => e instanceof AepError && e.code === 'AEP_CAPTURE_UNKNOWN',
  );
});

test('the input is frozen-safe and unchanged sub-objects are shared', () => {
  const tool = Object.freeze({ name: 'Bash' });
  const data = Object.freeze({ tool, result: 'x', duration_ms: 3 });
  const e = Object.freeze({ ...base, type: 'tool.completed', capture: 'full', data });
  const out = downlevel(e, 'metadata') as Record<string, unknown> & { data: Record<string, unknown> };
  assert.deepEqual(out.data, { tool: { name: 'Bash' }, duration_ms: 3 });
  assert.equal(out.data['tool'], tool, 'unchanged sub-object shared, not copied');
});

test('key order is kept; capture stays in place or is appended when absent', () => {
  const e = { ...base, type: 'run.started', capture: 'full', severity: 'info', data: { prompt: 'p', trigger: 'user' } };
  assert.deepEqual(Object.keys(downlevel(e, 'metadata')), Object.keys(e));
  const noCap = { ...base, type: 'run.started', data: { trigger: 'user' } };
  assert.deepEqual(Object.keys(downlevel(noCap, 'none')), [...Object.keys(base), 'type', 'capture']);
});

test('annotation-driven: a fixture tree, not a per-type table, decides', () => {
  const trees: Record<string, CaptureTree> = {
    'x.test.thing.happened': {
      level: 'metadata',
      properties: {
        keep: { level: 'metadata' },
        text: { level: 'redacted' },
        deep: { level: 'metadata', properties: { inner: { level: 'full' }, ok: { level: 'metadata' } } },
        list: { level: 'metadata', items: { level: 'metadata', properties: { id: { level: 'metadata' }, label: { level: 'metadata', exception: 'label' } } } },
        ask: { level: 'metadata', exception: 'prompt' },
        vals: { level: 'metadata', exception: 'values' },
      },
    },
  };
  const dl = createDownleveler(trees);
  const e = {
    ...base,
    type: 'x.test.thing.happened',
    subject: 'subj',
    capture: 'redacted',
    data: {
      kind: 'k',
      keep: 1,
      text: 't',
      deep: { inner: 'i', ok: 2 },
      list: [{ id: 7, label: 'L' }, { label: 'M' }],
      ask: 'real',
      vals: { a: 'x', b: 2 },
      extra: 'e',
    },
  };
  assert.deepEqual(dl(e, 'metadata'), {
    ...e,
    capture: 'metadata',
    data: { kind: 'k', keep: 1, deep: { ok: 2 }, list: [{ id: 7, label: '7' }, { label: '2' }], ask: 'bot requests k: subj', vals: { b: 2 }, extra: 'e' },
  });
  const { data: _data, ...envelope } = e;
  assert.deepEqual(
    dl({ ...e, type: 'x.other.thing.happened' }, 'metadata'),
    { ...envelope, type: 'x.other.thing.happened', capture: 'metadata' },
    'a type without a tree: data removed',
  );
});

test('a capture named like an Object.prototype member is not a level: treated as full', () => {
  const e = { ...base, type: 'run.started', capture: 'constructor', data: { trigger: 'user', prompt: 'p' } };
  assert.deepEqual(downlevel(e, 'redacted'), { ...e, capture: 'metadata', data: { trigger: 'user' } });
  assert.equal(downlevel(e, 'full'), e, 'a full ceiling forwards it as is');
});

test('data that is not an object on a typed event is removed (conservative)', () => {
  const e = { ...base, type: 'run.started', capture: 'full', data: 'text' };
  assert.equal('data' in (downlevel(e, 'metadata') as object), false);
});

test('the __proto__ key inside data survives as an own key without touching prototypes', () => {
  const e = JSON.parse('{"aep":"0.1","type":"tool.completed","capture":"full","data":{"__proto__":{"x":1},"result":"r"}}') as Record<string, unknown>;
  const out = downlevel(e, 'metadata') as { data: Record<string, unknown> };
  assert.equal(JSON.stringify(out.data), '{"__proto__":{"x":1}}');
  assert.equal(Object.getPrototypeOf(out.data), Object.prototype);
});
