// `aep otlp` offline as a black box: one line out per line in (null for a bad line, with a
// rule-naming stderr line that never quotes the input), exit codes 0/1/2, the max_capture rule,
// and --wire output that satisfies the OTLP/HTTP JSON encoding rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAep } from '../../../test/support/cli.js';
import { checkOtlpExportLogsRequest, fromKeyValues } from '../../bridges/test/support/checkers.js';

const ev = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    aep: '0.1',
    id: `01K0CLIOTLP0000000000000${String(i).padStart(2, '0')}`,
    type: 'tool.completed',
    subject: 'Bash',
    time: '2026-08-01T09:00:00.123456789+02:00',
    source: 'aep://h1/agent/bot/session/s',
    agent: 'bot',
    session: 's',
    seq: i,
    data: { tool: { name: 'Bash', call_id: `c${i}` }, status: 'success', 'gen_ai.usage.output_tokens': 7 },
    ...extra,
  });
const redacted = JSON.stringify({
  aep: '0.1',
  id: '01K0CLIOTLPRED',
  type: 'run.started',
  time: '2026-08-01T09:00:00Z',
  source: 'aep://h1/agent/bot/session/s',
  agent: 'bot',
  session: 's',
  seq: 40,
  capture: 'redacted',
  data: { trigger: 'user', prompt: 'CANARY-PROMPT' },
});

test('--help documents offline and live options, the exit codes and examples', async () => {
  const r = await runAep(['otlp', '--help']);
  assert.equal(r.code, 0);
  for (const s of [
    '--max-capture <level>',
    '--endpoint <url>',
    '--service-name',
    '--wire',
    '--capture <level>',
    '--state <path>',
    '--batch-size',
    '--max-queue',
    '--header',
    'Exit codes',
    'Examples:',
    '/v1/logs',
  ])
    assert.ok(r.stdout.includes(s), s);
});

test('one record per line; bad lines give null and a rule-naming stderr line; the rest still map; exit 1', async () => {
  const input =
    [
      ev(1),
      'not json CANARY-A',
      '',
      JSON.stringify({ aep: '0.1', id: 'x', type: 'tool.completed', time: 'CANARY-B', source: 'aep://h', agent: 'a', session: 's', seq: 1 }),
      '[1]',
      ev(2),
    ].join('\n') + '\n';
  const r = await runAep(['otlp'], input);
  assert.equal(r.code, 1);
  const lines = r.stdout.split('\n');
  assert.equal(lines.length, 7);
  const a = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(a['time_unix_nano'], '1785567600123456789');
  assert.deepEqual(a['body'], { tool: { name: 'Bash', call_id: 'c1' }, status: 'success' });
  assert.equal((a['attributes'] as Record<string, unknown>)['gen_ai.usage.output_tokens'], 7);
  assert.deepEqual([lines[1], lines[2], lines[3], lines[4]], ['null', '', 'null', 'null']);
  assert.equal((JSON.parse(lines[5]!) as { attributes: Record<string, unknown> }).attributes['aep.sequence'], 2);
  assert.match(r.stderr, /aep otlp: stdin:2: AEP_CLI_BAD_JSON: /);
  assert.match(r.stderr, /aep otlp: stdin:4: AEP_BRIDGE_EVENT_INVALID: envelope\.time: /);
  assert.match(r.stderr, /aep otlp: stdin:5: AEP_BRIDGE_EVENT_INVALID: envelope\.not-object: /);
  assert.match(r.stderr, /3 of 6 lines could not be mapped/);
  assert.doesNotMatch(r.stdout + r.stderr, /CANARY/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('max_capture: a redacted event exports no payload at the default, its payload at --max-capture redacted', async () => {
  const d = await runAep(['otlp'], redacted + '\n');
  assert.equal(d.code, 0, d.stderr);
  const rec = JSON.parse(d.stdout) as Record<string, unknown>;
  assert.equal(rec['body'], undefined);
  assert.equal((rec['attributes'] as Record<string, unknown>)['aep.capture'], 'redacted');
  assert.doesNotMatch(d.stdout + d.stderr, /CANARY/);
  const up = await runAep(['otlp', '--max-capture', 'redacted'], redacted + '\n');
  assert.deepEqual((JSON.parse(up.stdout) as Record<string, unknown>)['body'], { trigger: 'user', prompt: 'CANARY-PROMPT' });
  const bad = await runAep(['otlp', '--max-capture', 'secret'], redacted + '\n');
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /AEP_CLI_BAD_CEILING/);
});

test('--wire: each line is an ExportLogsServiceRequest obeying the OTLP/HTTP JSON encoding', async () => {
  const r = await runAep(
    ['otlp', '--wire', '--service-name', 'svc'],
    [ev(1, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }), ev(2)].join('\n') + '\n',
  );
  assert.equal(r.code, 0, r.stderr);
  for (const line of r.stdout.trim().split('\n')) {
    const req = JSON.parse(line) as { resourceLogs: { resource: { attributes: unknown }; scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] };
    assert.deepEqual(checkOtlpExportLogsRequest(req), []);
    assert.deepEqual(fromKeyValues(req.resourceLogs[0]!.resource.attributes), { 'service.name': 'svc' });
    const lr = req.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    assert.equal(lr['timeUnixNano'], '1785567600123456789');
    assert.equal(lr['eventName'], 'dev.aep.tool.completed');
  }
  const first = JSON.parse(r.stdout.split('\n')[0]!) as { resourceLogs: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] };
  assert.equal(first.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!['traceId'], '4bf92f3577b34da6a3ce929d0e0e4736');
});

test('files in order with "-"; an unreadable file is exit 2; live options misused are usage errors', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-otlp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.jsonl'), ev(1) + '\r\n');
  const r = await runAep(['otlp', join(dir, 'a.jsonl'), '-'], ev(2) + '\n');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { attributes: Record<string, unknown> }).attributes['aep.sequence']),
    [1, 2],
  );
  const missing = await runAep(['otlp', join(dir, 'missing.jsonl')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /AEP_CLI_UNREADABLE/);
  const live = await runAep(['otlp', '--endpoint', 'http://127.0.0.1:1', join(dir, 'a.jsonl')]);
  assert.equal(live.code, 2);
  assert.match(live.stderr, /AEP_CLI_USAGE: live mode/);
  const badUrl = await runAep(['otlp', '--endpoint', 'ftp://x']);
  assert.equal(badUrl.code, 2);
  assert.match(badUrl.stderr, /AEP_CLI_BAD_OPTION: --endpoint must be an http\(s\) URL/);
  const badFilter = await runAep(['otlp', '--endpoint', 'http://127.0.0.1:1', '--filter', '{"seq":1}']);
  assert.equal(badFilter.code, 2);
  assert.match(badFilter.stderr, /AEP_CLI_BAD_FILTER/);
  const badState = join(dir, 'state.json');
  writeFileSync(badState, 'not a state file');
  const st = await runAep(['otlp', '--endpoint', 'http://127.0.0.1:1', '--relay', 'http://127.0.0.1:1', '--state', badState]);
  assert.equal(st.code, 2);
  assert.match(st.stderr, /AEP_BRIDGE_STATE: the state file .* is not a bridge state file/);
});

test('many lines and a huge one: no crash, one line per line', async () => {
  const huge = JSON.stringify({
    aep: '0.1',
    id: 'h',
    type: 'tool.completed',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h',
    agent: 'a',
    session: 's',
    seq: 0,
    capture: 'full',
    data: { tool: { name: 'x' }, result: 'r'.repeat(4_000_000) },
  });
  const many = Array.from({ length: 3000 }, (_, i) => ev(i % 100)).join('\n');
  const r = await runAep(['otlp'], `${huge}\n${many}\n`);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines.length, 3002);
  assert.equal((JSON.parse(lines[0]!) as Record<string, unknown>)['body'], undefined, 'full above the default max: no body');
});
