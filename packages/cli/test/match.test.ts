// `aep match` as a black box: one {"match":…} line per input line, fail-closed filters (exit 2
// naming the rule), coded error lines for non-JSON lines (exit 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';

test('--help documents the filter, the fail-closed rule and the exit codes', async () => {
  const r = await runAep(['match', '--help']);
  assert.equal(r.code, 0);
  for (const s of ['--filter <json>', 'invalid-filter', 'Exit codes', 'severity info']) assert.ok(r.stdout.includes(s), s);
});

test('one verdict per line, defaults applied, non-envelopes allowed', async () => {
  const lines = [
    '{"type":"attention.requested","severity":"notice"}',
    '{"type":"attention.requested"}',
    '{}',
    '42',
    '',
    '{"type":"error.raised","severity":"error"}',
  ];
  const r = await runAep(['match', '--filter', '{"type":["attention.*","error.*"],"severity":{"gte":"notice"}}'], lines.join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\n'), ['{"match":true}', '{"match":false}', '{"match":false}', '{"match":false}', '', '{"match":true}', '']);
});

test('non-JSON lines give AEP_CLI_BAD_JSON lines in place and exit 1', async () => {
  const r = await runAep(['match', '--filter', '{}'], '{}\n{oops SECRETTEXT\n{}\n');
  assert.equal(r.code, 1);
  const out = r.stdout.trimEnd().split('\n');
  assert.equal(out.length, 3);
  assert.equal((JSON.parse(out[1]!) as { error: string }).error, 'AEP_CLI_BAD_JSON');
  assert.ok(!r.stdout.includes('SECRETTEXT'));
  assert.equal(out[2], '{"match":true}');
});

test('a forbidden key, a glob, or non-JSON filter: exit 2 naming the rule, nothing printed', async () => {
  for (const [filter, rule] of [
    ['{"seq":5}', 'invalid-filter.forbidden-key'],
    ['{"data":{}}', 'invalid-filter.forbidden-key'],
    ['{"agent":"claude*"}', 'invalid-filter.wildcard'],
    ['{"type":"*"}', 'invalid-filter.bare-star'],
    ['[]', 'invalid-filter.not-object'],
    ['{nope', 'AEP_CLI_BAD_FILTER'],
  ] as const) {
    const r = await runAep(['match', '--filter', filter], '{}\n');
    assert.equal(r.code, 2, filter);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.includes(rule), `${filter}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});

test('a missing --filter is a usage error', async () => {
  const r = await runAep(['match'], '{}\n');
  assert.equal(r.code, 2);
});
