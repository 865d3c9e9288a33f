// The policy file (issue 18 item 2): schema-checked, every error naming the line and the path;
// what can never be written is refused with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalDigest } from '@aep/protocol';
import { DelegateError, parsePolicy } from '@aep/delegate';

function refusal(text: string): DelegateError {
  try {
    parsePolicy(text, { file: 'p.yaml' });
  } catch (err) {
    assert.ok(err instanceof DelegateError, String(err));
    assert.equal(err.code, 'AEP_DELEGATE_POLICY');
    return err;
  }
  assert.fail(`accepted: ${text}`);
}

test('a full example parses: tiers, approval_text as its digest, durations, time windows, grants', () => {
  const p = parsePolicy(
    `
version: 1
timezone: UTC
rate_limit: {max: 10, per: 1m}
kill_switch: /tmp/STOP
grants: {default_ttl: 8h, max_ttl: 7d}
rules:
  - id: allow-npm-test
    match: {agent: claude-code, kind: permission, tool: Bash, approval_text: "npm test"}
    decision: {option: allow}
  - id: deny-rm
    match: {tool: Bash, digest: "${approvalDigest('rm -rf /')}"}
    decision: deny
  - id: prod-asks
    match: {session: "prod-*"}
    decision: ask
  - id: pm
    match:
      kind: form
      fields: {manager: {type: select, choices: [npm, pnpm, yarn]}}
      time: {days: [mon, tue, wed, thu, fri], from: "09:00", to: "17:30"}
      pending: {min: 30s}
    decision: {values: {manager: pnpm}}
    shadow: true
    rate_limit: {max: 3, per: 1h}
`,
    { file: 'p.yaml' },
  );
  assert.deepEqual(
    p.rules.map((r) => [r.id, r.tier]),
    [
      ['allow-npm-test', 'allow'],
      ['deny-rm', 'deny'],
      ['prod-asks', 'ask'],
      ['pm', 'allow'],
    ],
  );
  assert.deepEqual(p.rules[0]!.match.digest, [approvalDigest('npm test')]);
  assert.equal(p.rules[0]!.approvalText, 'npm test');
  assert.deepEqual(p.rules[3]!.match.time, { days: [1, 2, 3, 4, 5], from: 540, to: 1050 });
  assert.deepEqual(p.rules[3]!.match.pending, { min: 30_000 });
  assert.deepEqual(p.rules[3]!.rateLimit, { max: 3, perMs: 3_600_000 });
  assert.equal(p.rules[3]!.shadow, true);
  assert.deepEqual(p.grants, { defaultTtlMs: 8 * 3_600_000, maxTtlMs: 7 * 86_400_000 });
  assert.deepEqual(p.rateLimit, { max: 10, perMs: 60_000 });
  assert.equal(p.rules[1]!.line, 11, 'the line of the rule (the template starts with a newline)');
  assert.match(p.hash, /^[0-9a-f]{32}$/);
});

test('JSON policies parse the same', () => {
  const p = parsePolicy(JSON.stringify({ version: 1, rules: [{ id: 'd', match: { tool: 'Bash' }, decision: 'deny' }] }), { file: 'p.json' });
  assert.equal(p.rules[0]!.tier, 'deny');
  assert.match(refusal('{"version": 1, "rules": [{"id": "d", "decision": "nope"}]}').message, /^p\.yaml:1: rules\[0\]\.decision: must be deny, ask/);
});

test('errors name the line and the path', () => {
  const cases: [string, RegExp][] = [
    ['version: 2\n', /^p\.yaml:1: version: is required and must be 1/],
    [
      'version: 1\nrules:\n  - id: a\n    decision: deny\n  - id: b\n    match:\n      tool: 7\n    decision: deny\n',
      /^p\.yaml:7: rules\[1\]\.match\.tool: must be a string/,
    ],
    ['version: 1\nrules:\n  - id: Bad Id\n    decision: deny\n', /^p\.yaml:3: rules\[0\]\.id: is required: 1-64 characters/],
    ['version: 1\nrules:\n  - id: a\n    decision: deny\n  - id: a\n    decision: deny\n', /^p\.yaml:5: rules\[1\]\.id: "a" is used by an earlier rule/],
    ['version: 1\nrules:\n  - id: a\n    match: {kind: perm}\n    decision: deny\n', /^p\.yaml:4: rules\[0\]\.match\.kind: must be one of permission/],
    ['version: 1\nrules:\n  - id: a\n    match: {digest: 1234}\n    decision: deny\n', /^p\.yaml:4: rules\[0\]\.match\.digest: must be an approvaldigest/],
    [
      'version: 1\nrules:\n  - id: a\n    match: {pending: {min: soon}}\n    decision: deny\n',
      /^p\.yaml:4: rules\[0\]\.match\.pending\.min: must be a duration/,
    ],
    [
      'version: 1\nrules:\n  - id: a\n    match:\n      time: {from: "25:00"}\n    decision: deny\n',
      /^p\.yaml:5: rules\[0\]\.match\.time\.from: must be a time of day/,
    ],
    ['version: 1\nrate_limit: {max: 5}\n', /^p\.yaml:2: rate_limit\.per: is required/],
    ['version: 1\ngrants: {max_ttl: 0}\n', /^p\.yaml:2: grants\.max_ttl: must be longer than 0 \(grants always expire\)/],
    ['version: 1\nrules:\n  - id: grant-x\n    decision: deny\n', /rules\[0\]\.id: must not start with "grant-"/],
    ['version: 1\nrules: [\n', /^p\.yaml:\d+: not valid YAML or JSON/],
    ['version: 1\nversion: 1\n', /^p\.yaml:2: not valid YAML or JSON/],
    ['version: 1\nx: &a 1\ny: *a\n', /^p\.yaml:3: y: YAML aliases are not allowed/],
    ['version: 1\ntimezone: Mars/Olympus\n', /^p\.yaml:2: timezone: must be local, UTC or an IANA zone/],
    ['version: 1\nengine: cedar\n', /^p\.yaml:1: cedar: engine cedar needs `cedar: FILE`/],
  ];
  for (const [text, re] of cases) assert.match(refusal(text).message, re, text);
  const e = refusal('version: 1\nrules:\n  - id: a\n    match:\n      tool: 7\n    decision: deny\n');
  assert.deepEqual([e.line, e.path], [5, 'rules[0].match.tool']);
});

test('a rule can never match free text: prompt, label, text and friends are refused with the reason', () => {
  for (const key of ['prompt', 'label', 'text', 'message', 'context', 'contains', 'regex']) {
    const e = refusal(`version: 1\nrules:\n  - id: a\n    match:\n      ${key}: "rm -rf"\n    decision: deny\n`);
    assert.match(e.message, new RegExp(`^p\\.yaml:5: rules\\[0\\]\\.match\\.${key}: a rule can never see or match free text`), key);
  }
  assert.match(
    refusal('version: 1\nrules:\n  - id: a\n    match:\n      fields: {"1": {label: Bucket}}\n    decision: ask\n').message,
    /fields\.1\.label: a rule can never see or match free text/,
  );
  assert.match(
    refusal('version: 1\nrules:\n  - id: a\n    decision: {option: deny, text: "because"}\n').message,
    /decision\.text: a delegate never sends text/,
  );
  assert.match(
    refusal('version: 1\nrules:\n  - id: a\n    match: {kind: form}\n    decision: {values: {"1": {nested: 1}}}\n').message,
    /decision\.values\.1: must be a number, a boolean, a choice id/,
  );
});

test('a permission request is allowed only with the exact approval text; tool-wide rules can deny or ask', () => {
  const e = refusal('version: 1\nrules:\n  - id: all-bash\n    match: {tool: Bash}\n    decision: {option: allow}\n');
  assert.match(
    e.message,
    /^p\.yaml:5: rules\[0\]\.decision: option "allow" does not refuse.*exact approval text.*Tool-name-wide rules can deny or ask, never allow/,
  );
  assert.match(
    refusal('version: 1\nrules:\n  - id: x\n    match: {tool: Bash, kind: [permission, input]}\n    decision: {option: allow_once}\n').message,
    /does not refuse/,
  );
  // Fine: deny and ask tool-wide; allow with the text; an option on a non-permission kind.
  parsePolicy(
    'version: 1\nrules:\n  - id: a\n    match: {tool: Bash}\n    decision: deny\n  - id: b\n    match: {tool: Bash}\n    decision: ask\n  - id: c\n    match: {tool: Bash, approval_text: "npm test"}\n    decision: {option: allow}\n  - id: d\n    match: {kind: input}\n    decision: {option: yes}\n',
  );
});

test('kind auth is never answered; values answer forms only', () => {
  assert.match(refusal('version: 1\nrules:\n  - id: a\n    match: {kind: auth}\n    decision: deny\n').message, /a delegate never answers kind auth/);
  parsePolicy('version: 1\nrules:\n  - id: a\n    match: {kind: auth}\n    decision: ask\n');
  assert.match(
    refusal('version: 1\nrules:\n  - id: a\n    match: {kind: input}\n    decision: {values: {"1": 2}}\n').message,
    /values answer a form: match.kind must include form/,
  );
});

test('an option that refuses is a deny rule; ids written as numbers are read as ids', () => {
  const p = parsePolicy(
    'version: 1\nrules:\n  - id: a\n    match: {kind: form, fields: {"1": {choices: [1, 2]}}}\n    decision: {option: decline}\n  - id: b\n    match: {kind: input, options: [1, 2]}\n    decision: {option: 2}\n',
  );
  assert.equal(p.rules[0]!.tier, 'deny');
  assert.deepEqual(p.rules[0]!.match.fields?.['1']?.choices, ['1', '2']);
  assert.deepEqual(p.rules[1]!.decision, { type: 'option', option: '2' });
});

test('keys such as __proto__ and toString are ordinary ids, never prototypes', () => {
  const p = parsePolicy(
    'version: 1\nrules:\n  - id: a\n    match: {kind: form, fields: {__proto__: {type: number}, toString: {type: boolean}}}\n    decision: {values: {__proto__: 1, toString: true}}\n',
  );
  const r = p.rules[0]!;
  assert.deepEqual(Object.keys(r.match.fields ?? {}), ['__proto__', 'toString']);
  assert.deepEqual(r.decision.type === 'values' && Object.keys(r.decision.values), ['__proto__', 'toString']);
  assert.equal(Object.getPrototypeOf(r.match.fields), Object.prototype);
});
