// buildAttentionRequestData / synthesizePrompt (AEP-0003 §9.2, AEP-0006 §5.1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAttentionRequestData, synthesizePrompt, REDACTED_SECRET } from '@aep/protocol';
import type { AttentionRequestInput } from '@aep/protocol';

test('synthesizePrompt: "{agent} requests {kind}: {subject}", no ": {subject}" without one', () => {
  assert.equal(synthesizePrompt('ops-bot', 'form', 'backup-config'), 'ops-bot requests form: backup-config');
  assert.equal(synthesizePrompt('ops-bot', 'form'), 'ops-bot requests form');
  assert.equal(synthesizePrompt('ops-bot', 'form', ''), 'ops-bot requests form');
});

const input: AttentionRequestInput = {
  kind: 'form',
  prompt: 'Answer these (password=hunter22)',
  fields: [
    {
      id: 'q1',
      type: 'select',
      label: 'Which?',
      required: true,
      multi: false,
      other: true,
      choices: [
        { id: 'a', label: 'Alpha' },
        { id: 'b', label: 'Beta' },
      ],
    },
    { id: 'q2', type: 'number', label: 'How many?', min: 0, max: 9 },
  ],
  expires_at: '2026-08-01T10:00:00Z',
  respond_via: ['control'],
  context: { secret: 'x' },
};

test('a caller-supplied structural synthesis is used at metadata', () => {
  const d = buildAttentionRequestData(input, 'metadata', { agent: 'claude-code', synthesize: (i) => `claude-code asks ${i.fields?.length ?? 0} questions` });
  assert.equal(d?.prompt, 'claude-code asks 2 questions');
});

test('metadata keeps every structural member and replaces every label', () => {
  const d = buildAttentionRequestData(input, 'metadata', { agent: 'a', placeholder: 'index' });
  assert.deepEqual(d, {
    kind: 'form',
    prompt: 'a requests form',
    fields: [
      {
        id: 'q1',
        type: 'select',
        label: '1',
        required: true,
        multi: false,
        other: true,
        choices: [
          { id: 'a', label: '1' },
          { id: 'b', label: '2' },
        ],
      },
      { id: 'q2', type: 'number', label: '2', min: 0, max: 9 },
    ],
    expires_at: '2026-08-01T10:00:00Z',
    respond_via: ['control'],
  });
});

test('redacted runs the pipeline on prompt and labels and drops context; full keeps context', () => {
  const r = buildAttentionRequestData(input, 'redacted');
  assert.equal(r?.prompt, `Answer these (password=${REDACTED_SECRET}`);
  assert.equal(r?.context, undefined);
  const f = buildAttentionRequestData(input, 'full');
  assert.equal(f?.prompt, input.prompt);
  assert.deepEqual(f?.context, { secret: 'x' });
});

test('none gives no data; the input is never mutated; unknown members are not copied', () => {
  assert.equal(buildAttentionRequestData(input, 'none'), undefined);
  const snapshot = JSON.stringify(input);
  const withExtra = { ...input, smuggled: 'text' } as AttentionRequestInput;
  const d = buildAttentionRequestData(withExtra, 'metadata') as unknown as Record<string, unknown>;
  assert.equal(d['smuggled'], undefined);
  assert.equal(JSON.stringify(input), snapshot);
});
