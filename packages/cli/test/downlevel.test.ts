// `aep downlevel` as a black box: one line out per line in, byte-identical echo of unchanged
// events, coded error lines for bad lines (never quoting them), exit codes 0/1/2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep } from '../../../test/support/cli.js';

const probe =
  '{"aep":"0.1","id":"01K0","type":"run.started","time":"2026-08-01T09:00:00Z","source":"aep://x","agent":"a","session":"s","seq":0,"capture":"redacted","data":{"trigger":"user","prompt":"CANARY"}}';
const passing = '{ "aep": "0.1", "type": "run.started", "capture": "metadata", "data": {"trigger": "user"} }';

test('--help documents the ceiling, the error lines and the exit codes', async () => {
  const r = await runAep(['downlevel', '--help']);
  assert.equal(r.code, 0);
  for (const s of ['--ceiling <level>', 'none | metadata | redacted | full', 'AEP_CLI_BAD_JSON', 'Exit codes']) assert.ok(r.stdout.includes(s), s);
});

test('rewrites above the ceiling, echoes the rest byte for byte (spacing kept)', async () => {
  const r = await runAep(['downlevel', '--ceiling', 'metadata'], `${probe}\n${passing}\n`);
  assert.equal(r.code, 0, r.stderr);
  const [a, b, end] = r.stdout.split('\n');
  assert.deepEqual(JSON.parse(a!), { ...JSON.parse(probe), capture: 'metadata', data: { trigger: 'user' } });
  assert.equal(b, passing);
  assert.equal(end, '');
  assert.ok(!r.stdout.includes('CANARY'));
});

test('bad lines become coded error lines in place, the run continues, exit 1; the line is never quoted', async () => {
  const input = [probe, 'not json CANARY2', '', '[1,2]', '"CANARY3"', probe].join('\n') + '\n';
  const r = await runAep(['downlevel', '--ceiling', 'none'], input);
  assert.equal(r.code, 1);
  const lines = r.stdout.split('\n');
  assert.equal(lines.length, 7, 'one line out per line in (+ final newline)');
  const err1 = JSON.parse(lines[1]!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(err1), ['error', 'file', 'line', 'message']);
  assert.equal(err1['error'], 'AEP_CLI_BAD_JSON');
  assert.equal(err1['line'], 2);
  assert.equal(lines[2], '', 'blank line gives blank line');
  assert.equal((JSON.parse(lines[3]!) as Record<string, unknown>)['error'], 'AEP_CLI_NOT_AN_OBJECT');
  assert.equal((JSON.parse(lines[4]!) as Record<string, unknown>)['error'], 'AEP_CLI_NOT_AN_OBJECT');
  assert.equal((JSON.parse(lines[5]!) as Record<string, unknown>)['capture'], 'none');
  assert.ok(!r.stdout.includes('CANARY'), 'no content of failed lines in the output');
  assert.match(r.stderr, /AEP_CLI_BAD_JSON: 3 of 6 lines/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('an unknown ceiling is a usage error (exit 2) naming the levels; a missing one too', async () => {
  const r = await runAep(['downlevel', '--ceiling', 'secret'], probe + '\n');
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /AEP_CLI_BAD_CEILING: unknown capture level "secret": expected one of none, metadata, redacted, full/);
  const m = await runAep(['downlevel'], probe + '\n');
  assert.equal(m.code, 2);
});

test('reads files in order; an unreadable file is exit 2 AEP_CLI_UNREADABLE', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-dl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.jsonl'), probe + '\r\n' + passing + '\r\n');
  const r = await runAep(['downlevel', '--ceiling', 'full', join(dir, 'a.jsonl'), '-'], passing + '\n');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.split('\n'), [probe, passing, passing, '']);
  const bad = await runAep(['downlevel', '--ceiling', 'full', join(dir, 'missing.jsonl')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_UNREADABLE: cannot read input: ENOENT/);
});

test('huge values and many lines: no crash, one line per line', async () => {
  const huge = JSON.stringify({
    aep: '0.1',
    type: 'tool.completed',
    capture: 'full',
    data: { tool: { name: 'x' }, result: 'r'.repeat(8_000_000), duration_ms: 1 },
  });
  const many = Array.from({ length: 5000 }, () => probe).join('\n');
  const r = await runAep(['downlevel', '--ceiling', 'metadata'], `${huge}\n${many}\n`);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines.length, 5002);
  assert.deepEqual(JSON.parse(lines[0]!), { aep: '0.1', type: 'tool.completed', capture: 'metadata', data: { tool: { name: 'x' }, duration_ms: 1 } });
});
