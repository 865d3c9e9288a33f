// `aep form validate|gate|map-text|request` as a black box: stdin document, JSON output, exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';

const fields = [
  { id: '1', type: 'string', label: 'Bucket', required: true },
  { id: '2', type: 'number', label: 'Days', min: 1, max: 365 },
  {
    id: '4',
    type: 'select',
    label: 'Days',
    multi: true,
    choices: [
      { id: '1', label: 'Mon' },
      { id: '3', label: 'Fri' },
    ],
  },
];

test('every subcommand has --help with its options and exit codes', async () => {
  for (const [sub, opts] of [
    ['validate', ['--must-only', 'Exit codes']],
    ['gate', ['--ceiling <level>', 'Exit codes']],
    ['map-text', ['--refusing-option', '--permission-unmatched', '--other-unmatched', 'Exit codes']],
    ['request', ['--capture <level>', '--agent', '--subject', '--placeholder', '--home', 'Exit codes']],
  ] as const) {
    const r = await runAep(['form', sub, '--help']);
    assert.equal(r.code, 0, sub);
    for (const o of opts) assert.ok(r.stdout.includes(o), `${sub} ${o}`);
  }
});

test('validate: exit 0 when valid, 1 with issues naming the rule; --must-only skips hardening', async () => {
  const ok = await runAep(['form', 'validate'], JSON.stringify({ fields, values: { 1: 'bk', 2: 30, 4: ['1', '3'] } }));
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout), { valid: true, issues: [] });
  const bad = await runAep(['form', 'validate'], JSON.stringify({ fields, values: { 2: 400, 4: ['7'] } }));
  assert.equal(bad.code, 1);
  const out = JSON.parse(bad.stdout) as { valid: boolean; issues: { rule: string }[] };
  assert.equal(out.valid, false);
  assert.deepEqual(out.issues.map((i) => i.rule).sort(), ['form.choice-forged', 'form.out-of-range', 'form.required-missing']);
  const must = await runAep(['form', 'validate', '--must-only'], JSON.stringify({ fields, values: { 1: 'x', 2: 400 } }));
  assert.equal(must.code, 0, must.stdout);
});

test('gate prints the gated values; an unknown ceiling is exit 2', async () => {
  const r = await runAep(['form', 'gate', '--ceiling', 'metadata'], JSON.stringify({ fields, values: { 1: 'bk', 2: 30, 4: ['1'], 9: 1 } }));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '{"2":30,"4":["1"]}\n');
  const bad = await runAep(['form', 'gate', '--ceiling', 'top'], JSON.stringify({ fields, values: {} }));
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_BAD_CEILING/);
});

test('malformed stdin: not JSON, not an object, fields not an array — exit 2 with a code, no stack', async () => {
  for (const [input, code] of [
    ['{x', 'AEP_CLI_BAD_JSON'],
    ['[]', 'AEP_CLI_BAD_INPUT'],
    ['{"fields":{},"values":{}}', 'AEP_CLI_BAD_INPUT'],
    ['', 'AEP_CLI_BAD_JSON'],
  ] as const) {
    for (const sub of [['validate'], ['gate', '--ceiling', 'full']]) {
      const r = await runAep(['form', ...sub], input);
      assert.equal(r.code, 2, `${sub[0]} ${input}`);
      assert.ok(r.stderr.includes(code), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  }
});

test('validate: values that are not an object is an invalid answer (exit 1)', async () => {
  const r = await runAep(['form', 'validate'], JSON.stringify({ fields, values: 'x' }));
  assert.equal(r.code, 1);
  assert.equal((JSON.parse(r.stdout) as { issues: { rule: string }[] }).issues[0]?.rule, 'form.values-not-object');
});

test('map-text: never permissive; invalid is exit 1; bad options exit 2', async () => {
  const request = {
    kind: 'permission',
    prompt: 'p',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
  };
  const r = await runAep(['form', 'map-text'], JSON.stringify({ request, text: 'sure thing' }));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { option: 'deny', text: 'sure thing' });
  const n = await runAep(['form', 'map-text', '--permission-unmatched', 'invalid'], JSON.stringify({ request, text: 'sure thing' }));
  assert.equal(n.code, 1);
  assert.deepEqual(JSON.parse(n.stdout), { invalid: true });
  const bad = await runAep(['form', 'map-text', '--permission-unmatched', 'grant'], JSON.stringify({ request, text: 'x' }));
  assert.equal(bad.code, 2);
  const noText = await runAep(['form', 'map-text'], JSON.stringify({ request }));
  assert.equal(noText.code, 2);
});

test('request: metadata synthesizes the prompt; none prints null', async () => {
  const input = { kind: 'form', prompt: 'Real question', fields };
  const r = await runAep(['form', 'request', '--capture', 'metadata', '--agent', 'ops-bot', '--subject', 'cfg'], JSON.stringify(input));
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { prompt: string; fields: { label: string }[] };
  assert.equal(d.prompt, 'ops-bot requests form: cfg');
  assert.deepEqual(
    d.fields.map((f) => f.label),
    ['1', '2', '4'],
  );
  const none = await runAep(['form', 'request', '--capture', 'none'], JSON.stringify(input));
  assert.equal(none.stdout, 'null\n');
  const bad = await runAep(['form', 'request', '--capture', 'metadata'], JSON.stringify({ kind: 'form' }));
  assert.equal(bad.code, 2);
});
