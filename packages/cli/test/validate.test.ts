// `aep validate` as a black box: output format, exit codes, one stream across inputs, and the
// bad inputs of issue 2 (non-JSON, binary garbage, a 50 MB line, 10,000-deep nesting, BOM, CRLF,
// empty file, unreadable input): a clear per-line error or a documented acceptance, never a
// stack trace.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, createWriteStream, openSync, closeSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { runAep } from '../../../test/support/cli.js';
import { EXIT } from '../src/util/exit.js';

const tmp = mkdtempSync(join(tmpdir(), 'aep-validate-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const SRC = 'aep://h/agent/bot/session/s1';
const ev = (o: Record<string, unknown> = {}) => ({
  aep: '0.1',
  id: 'E1',
  type: 'progress.status',
  time: '2026-08-01T09:00:00Z',
  source: SRC,
  agent: 'bot',
  session: 's1',
  seq: 1,
  ...o,
});
const line = (o: Record<string, unknown> = {}) => JSON.stringify(ev(o));
function file(name: string, content: string | Buffer): string {
  const p = join(tmp, name);
  writeFileSync(p, content);
  return p;
}
const HUMAN = /^(.+):(\d+) (\S+) ([a-z]+\.[a-z.-]+) (.*) \((AEP-\d{4} §[^)]*)\)$/;

function noCrash(r: { stderr: string; stdout: string }): void {
  assert.doesNotMatch(r.stderr + r.stdout, /\n\s+at \S+ \(|AEP_CLI_INTERNAL|RangeError|TypeError/);
}

test('--help explains consumer tolerance vs emitter strictness, the output format and exit codes', async () => {
  const r = await runAep(['validate', '--help']);
  assert.equal(r.code, 0);
  for (const s of [
    '--emitter',
    '--json',
    'Consumer tolerance',
    'emitter strictness',
    'unregistered',
    'FILE:LINE ID RULE',
    'Exit codes: 0',
    'BOM',
    'byte order mark',
    'CRLF',
    'empty file',
  ]) {
    if (s !== 'BOM') assert.ok(r.stdout.includes(s), `help mentions ${s}`);
  }
});

test('valid input exits 0 with no output on stdout; problems exit 1 with FILE:LINE id RULE message (section)', async () => {
  const good = file('good.jsonl', line() + '\n' + line({ id: 'E2', seq: 2 }) + '\n');
  const r0 = await runAep(['validate', good]);
  assert.equal(r0.code, EXIT.OK);
  assert.equal(r0.stdout, '');
  assert.match(r0.stderr, /2 events in 2 lines: all valid/);
  const bad = file('bad.jsonl', [line(), 'not json', line({ id: 'E2', seq: 2, severity: 'fatal' }), line({ id: 'E3', seq: 1 })].join('\n') + '\n');
  const r1 = await runAep(['validate', bad]);
  assert.equal(r1.code, EXIT.INVALID);
  const rows = r1.stdout
    .trim()
    .split('\n')
    .map((l) => HUMAN.exec(l));
  assert.deepEqual(
    rows.map((m) => m && [m[2], m[3], m[4]]),
    [
      ['2', '-', 'jsonl.not-json'],
      ['3', 'E2', 'envelope.severity'],
      ['4', 'E3', 'stream.position-duplicate'],
    ],
  );
  assert.equal(rows[0]![1], bad);
  assert.equal(rows[1]![6], 'AEP-0001 §8.1');
  noCrash(r1);
});

test('--json prints one machine report with line numbers and counts', async () => {
  const bad = file('json.jsonl', [line(), line({ id: 'E2', seq: 2, acme_x: 1 })].join('\n') + '\n');
  const r = await runAep(['validate', '--json', bad]);
  assert.equal(r.code, EXIT.INVALID);
  const rep = JSON.parse(r.stdout) as { ok: boolean; counts: Record<string, unknown>; issues: Record<string, unknown>[] };
  assert.equal(rep.ok, false);
  assert.deepEqual(rep.issues, [
    { file: bad, line: 2, id: 'E2', rule: 'envelope.ext-name', path: '/acme_x', message: rep.issues[0]!['message'], section: 'AEP-0001 §5.4' },
  ]);
  assert.deepEqual({ ...rep.counts, rules: undefined }, { lines: 2, events: 2, blank: 0, invalid: 1, issues: 1, rules: undefined });
});

test('all inputs are one stream: an id reused across files with other content is caught; stdin works as "-"', async () => {
  const a = file('a.jsonl', line() + '\n');
  const b = file('b.jsonl', line({ seq: 7 }) + '\n');
  const r = await runAep(['validate', a, '-', b], line({ id: 'E9', seq: 3 }) + '\n');
  assert.equal(r.code, EXIT.INVALID);
  assert.match(r.stdout, new RegExp(`^${b}:1 E1 stream\\.id-conflict `));
  assert.equal(r.stdout.trim().split('\n').length, 1);
});

test('stdin redirected from a file is read like a file: same report as the same bytes through a pipe', async () => {
  // Several fills (3 MB), a line longer than the 1 MiB read buffer, a conflict inside stdin and
  // one across stdin and a file named after it.
  const rows: string[] = [];
  for (let i = 0; i < 6000; i++) rows.push(line({ id: `S${i}`, seq: i, acmepad: 'm'.repeat(400) }));
  rows.push(line({ id: 'S5', seq: 6000, acmepad: 'changed' }));
  rows.push(line({ id: 'LONG', seq: 6001, acmepad: 'x'.repeat(1_500_000) }));
  const a = file('stdin-src.jsonl', rows.join('\n') + '\n');
  const b = file('after-stdin.jsonl', line({ id: 'S9', seq: 7000, acmepad: 'other' }) + '\n');
  const piped = await runAep(['validate', '-', b], readFileSync(a));
  const fd = openSync(a, 'r');
  let redirected;
  try {
    redirected = await runAep(['validate', '-', b], undefined, { stdio: [fd, 'pipe', 'pipe'] });
  } finally {
    closeSync(fd);
  }
  assert.equal(piped.code, EXIT.INVALID);
  assert.equal(redirected.code, EXIT.INVALID);
  assert.equal(redirected.stdout, piped.stdout);
  assert.equal(redirected.stderr, piped.stderr);
  assert.deepEqual(
    piped.stdout
      .trim()
      .split('\n')
      .map((l) => HUMAN.exec(l)?.slice(1, 5)),
    [
      ['-', '6001', 'S5', 'stream.id-conflict'],
      [b, '1', 'S9', 'stream.id-conflict'],
    ],
  );
});

test('consumer tolerance by default, emitter strictness with --emitter', async () => {
  const f = file('future.jsonl', line({ type: 'progress.some_future_member', acmeregion: 'eu' }) + '\n\n');
  const r0 = await runAep(['validate', f]);
  assert.equal(r0.code, EXIT.OK, r0.stdout);
  const r1 = await runAep(['validate', '--emitter', f]);
  assert.equal(r1.code, EXIT.INVALID);
  assert.deepEqual(
    r1.stdout
      .trim()
      .split('\n')
      .map((l) => HUMAN.exec(l)?.[4]),
    ['type.unregistered', 'jsonl.blank-line'],
  );
});

test('binary garbage: one clear jsonl.not-json error per line, printable output, exit 1', async () => {
  const garbage = Buffer.alloc(4096);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 256;
  const f = file('garbage.bin', garbage);
  const r = await runAep(['validate', f]);
  assert.equal(r.code, EXIT.INVALID);
  const lines = r.stdout.trim().split('\n');
  assert.ok(lines.length >= 1);
  for (const l of lines) {
    assert.match(l, HUMAN);
    assert.equal(HUMAN.exec(l)![4], 'jsonl.not-json');
    // eslint-disable-next-line no-control-regex -- asserting that no control character is printed
    assert.doesNotMatch(l, /[\u0000-\u0008\u000b-\u001f\u007f]/);
  }
  noCrash(r);
});

test('BOM and CRLF are accepted (documented), in consumer and emitter mode; an empty file is a valid empty stream', async () => {
  const f = file('bom-crlf.jsonl', '\ufeff' + line() + '\r\n' + line({ id: 'E2', seq: 2 }) + '\r\n');
  assert.equal((await runAep(['validate', f])).code, EXIT.OK);
  assert.equal((await runAep(['validate', '--emitter', f])).code, EXIT.OK);
  const empty = file('empty.jsonl', '');
  const r = await runAep(['validate', '--json', empty]);
  assert.equal(r.code, EXIT.OK);
  assert.deepEqual(JSON.parse(r.stdout), { issues: [], ok: true, counts: { lines: 0, events: 0, blank: 0, invalid: 0, issues: 0, rules: {} } });
});

test('JSON nested 10,000 (and 1,000,000) levels deep: validated without a crash', async () => {
  const deepData = JSON.stringify(ev()).slice(0, -1) + ',"data":' + '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000) + '}';
  const deepArray = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
  const deepObj = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
  const f = file('deep.jsonl', [deepData, deepArray, deepObj].join('\n') + '\n');
  const r = await runAep(['validate', f]);
  assert.equal(r.code, EXIT.INVALID);
  const rows = new Set(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => {
        const m = HUMAN.exec(l);
        return m && `${m[2]} ${m[4]}`;
      }),
  );
  assert.deepEqual([...rows], ['2 envelope.not-object', '3 envelope.required', '3 envelope.ext-value']);
  noCrash(r);
});

test('a 50 MB single line: a valid event is accepted, a 50 MB non-JSON line is one short error', async () => {
  const big = join(tmp, 'big.jsonl');
  const ws = createWriteStream(big);
  const blob = 'x'.repeat(1024 * 1024);
  ws.write(JSON.stringify(ev({ type: 'x.acme.blob.stored' })).slice(0, -1) + ',"data":{"blob":"');
  for (let i = 0; i < 50; i++) ws.write(blob);
  ws.write('"}}\n');
  for (let i = 0; i < 50; i++) ws.write(blob);
  ws.end('\n');
  await once(ws, 'finish');
  const r = await runAep(['validate', big], undefined, { timeoutMs: 120_000 });
  assert.equal(r.code, EXIT.INVALID);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /:2 - jsonl\.not-json line is not JSON/);
  assert.ok(lines[0]!.length < 600, 'the error does not echo the line');
  noCrash(r);
});

test('unreadable input, a directory, a bad option: exit 2 with a coded message, no stack trace', async () => {
  const r1 = await runAep(['validate', join(tmp, 'missing.jsonl')]);
  assert.equal(r1.code, EXIT.USAGE);
  assert.match(r1.stderr, /aep: AEP_CLI_UNREADABLE: cannot read .*missing\.jsonl: ENOENT/);
  const r2 = await runAep(['validate', tmp]);
  assert.equal(r2.code, EXIT.USAGE);
  assert.match(r2.stderr, /AEP_CLI_UNREADABLE: .* is a directory/);
  const r3 = await runAep(['validate', '--dedupe-window', 'zero']);
  assert.equal(r3.code, EXIT.USAGE);
  assert.match(r3.stderr, /AEP_CLI_BAD_OPTION: --dedupe-window/);
  for (const r of [r1, r2, r3]) noCrash(r);
});

test('--no-stream checks each event on its own', async () => {
  const f = file('regress.jsonl', [line({ seq: 5 }), line({ id: 'E2', seq: 4 })].join('\n') + '\n');
  assert.equal((await runAep(['validate', f])).code, EXIT.INVALID);
  const r = await runAep(['validate', '--no-stream', f]);
  assert.equal(r.code, EXIT.OK, r.stdout);
});
