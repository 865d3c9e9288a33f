// Survivors of the issue 20 mutation run on downlevel.ts (docs/testing.md), killed: what a
// mechanical hop writes in place of a [metadata*] member below `redacted` (AEP-0001 §8.2 step 7)
// when the sender left the facts out: the synthesized prompt's default agent and kind, the
// label of an item without a usable id (its 1-based position, the first item included; a label
// outside any list is removed, never given a made-up position), the message of an unknown
// ceiling, and that unchanged arrays and answer values are shared, not copied (as unchanged
// objects are, downlevel.test.ts: a relay down-levels every event once per consumer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downlevel, createDownleveler, AepError } from '@aep/protocol';
import type { CaptureTree } from '@aep/protocol';

const base = { aep: '0.1', id: 'i', time: 't', source: 's', session: 's', seq: 1 };

test('an unknown ceiling throws AEP_CAPTURE_UNKNOWN naming the ceiling and the four levels', () => {
  assert.throws(
    () => downlevel({ ...base, type: 'run.started' }, 'max' as never),
    (e: unknown) =>
      e instanceof AepError &&
      e.code === 'AEP_CAPTURE_UNKNOWN' &&
      e.message.includes('unknown capture ceiling "max"') &&
      e.message.includes('none, metadata, redacted or full'),
  );
});

test('the synthesized prompt says "agent" without an agent and "attention" without a kind', () => {
  const ask = (extra: Record<string, unknown>, data: Record<string, unknown>) =>
    (
      downlevel({ ...base, type: 'attention.requested', capture: 'full', ...extra, data: { prompt: 'Delete /srv/db?', ...data } }, 'metadata') as {
        data: { prompt: string };
      }
    ).data.prompt;
  assert.equal(ask({}, { kind: 'permission' }), 'agent requests permission');
  assert.equal(ask({ agent: 7 }, { kind: 'permission' }), 'agent requests permission', 'a non-string agent');
  assert.equal(ask({ agent: 'bot', subject: 'r1' }, {}), 'bot requests attention: r1');
  assert.equal(ask({ agent: 'bot' }, { kind: 3 }), 'bot requests attention', 'a non-string kind');
  assert.equal(ask({ agent: 'bot' }, { kind: 'choice' }), 'bot requests choice');
});

test('below redacted, an option without a usable id is labelled with its 1-based position, the first one too', () => {
  const e = {
    ...base,
    agent: 'bot',
    type: 'attention.requested',
    capture: 'redacted',
    data: {
      kind: 'choice',
      prompt: 'Pick',
      options: [
        { label: 'Ship to Alice' },
        { id: Number.NaN, label: 'b' },
        { id: Number.POSITIVE_INFINITY, label: 'c' },
        { id: 7, label: 'd' },
        { id: 'x', label: 'e' },
      ],
    },
  };
  const out = downlevel(e, 'metadata') as { data: { options: { label: string }[] } };
  assert.deepEqual(
    out.data.options.map((o) => o.label),
    ['1', '2', '3', '7', 'x'],
  );
});

test('a label outside any list without an id is removed below redacted, at the top of data and nested', () => {
  const label: CaptureTree = { level: 'metadata', exception: 'label' };
  const trees: Record<string, CaptureTree> = {
    'x.test.labelled': {
      level: 'metadata',
      properties: {
        label,
        nested: { level: 'metadata', properties: { label, id: { level: 'metadata' } } },
        named: { level: 'metadata', properties: { label, id: { level: 'metadata' } } },
      },
    },
  };
  const dl = createDownleveler(trees);
  const e = {
    ...base,
    agent: 'bot',
    type: 'x.test.labelled',
    capture: 'full',
    data: { label: 'top secret', nested: { label: 'nested secret' }, named: { id: 'n1', label: 'named secret' } },
  };
  for (const ceiling of ['metadata', 'redacted'] as const) {
    assert.deepEqual(dl(e, ceiling), { ...e, capture: 'metadata', data: { nested: {}, named: { id: 'n1', label: 'n1' } } }, ceiling);
  }
});

test('unchanged arrays and all-structural answer values are shared with the input, like unchanged objects', () => {
  const respondVia = ['web', 'terminal'];
  const req = { ...base, agent: 'bot', type: 'attention.requested', capture: 'full', data: { kind: 'input', prompt: 'p', respond_via: respondVia } };
  const outReq = downlevel(req, 'metadata') as { data: { respond_via: unknown; prompt: string } };
  assert.equal(outReq.data.prompt, 'bot requests input');
  assert.equal(outReq.data.respond_via, respondVia, 'an array with nothing to remove is not copied');
  const values = { n: 3, ok: true };
  const ans = { ...base, agent: 'bot', type: 'attention.answered', capture: 'full', subject: 'r', data: { answer: { text: 'secret words', values } } };
  const outAns = downlevel(ans, 'metadata') as { data: { answer: Record<string, unknown> } };
  assert.deepEqual(outAns.data.answer, { values: { n: 3, ok: true } });
  assert.equal(outAns.data.answer['values'], values, 'values that are all numbers and booleans are not copied');
});
