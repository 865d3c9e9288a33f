// `aep ocsf` as a black box: records or null per line, bad lines named, --max-capture.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';

const base = { aep: '0.1', time: '2026-08-01T09:00:00Z', source: 'aep://h2:99/agent/bot/session/s', agent: 'bot', session: 's' };

test('--help documents the classes, the null lines and the exit codes', async () => {
  const r = await runAep(['ocsf', '--help']);
  assert.equal(r.code, 0);
  for (const s of ['--max-capture <level>', '3002', '1007', '2004', 'null', 'security_control', 'Exit codes', 'Examples:']) assert.ok(r.stdout.includes(s), s);
});

test('records, null for types without a class, null + a named rule for bad lines; exit 1', async () => {
  const lines = [
    JSON.stringify({
      ...base,
      id: 'a1',
      type: 'tool.denied',
      subject: 'Bash',
      seq: 1,
      severity: 'warning',
      data: { tool: { name: 'Bash', call_id: 'c1' }, by: 'policy' },
    }),
    JSON.stringify({ ...base, id: 'a2', type: 'progress.status', seq: 2, data: { phase: 'x' } }),
    JSON.stringify({ ...base, id: 'a3', type: 'attention.requested', seq: 3, capture: 'redacted', data: { kind: 'permission', prompt: 'CANARY-P' } }),
    '{"aep":"0.1"}',
  ];
  const r = await runAep(['ocsf'], lines.join('\n') + '\n');
  assert.equal(r.code, 1);
  const out = r.stdout.trim().split('\n');
  const denied = JSON.parse(out[0]!) as Record<string, unknown>;
  assert.equal(denied['type_uid'], 100701);
  assert.equal(denied['disposition_id'], 2);
  assert.deepEqual((denied['metadata'] as Record<string, unknown>)['profiles'], ['security_control']);
  assert.deepEqual(denied['device'], { type_id: 0, hostname: 'h2' });
  assert.equal(out[1], 'null');
  const finding = JSON.parse(out[2]!) as Record<string, unknown>;
  assert.deepEqual(finding['finding_info'], { uid: 'a3', title: 'attention.requested' });
  assert.equal((finding['unmapped'] as Record<string, unknown>)['data'], undefined, 'redacted above the default max: envelope only');
  assert.equal(out[3], 'null');
  assert.match(r.stderr, /aep ocsf: stdin:4: AEP_BRIDGE_EVENT_INVALID: envelope\.required: /);
  assert.doesNotMatch(r.stdout + r.stderr, /CANARY/);
  const up = await runAep(['ocsf', '--max-capture', 'redacted'], lines[2] + '\n');
  assert.equal(((JSON.parse(up.stdout) as Record<string, unknown>)['unmapped'] as Record<string, unknown>)['data'] !== undefined, true);
  const bad = await runAep(['ocsf', '--max-capture', 'everything'], '');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_BAD_CEILING/);
});
