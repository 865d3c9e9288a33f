// Runs conformance/bridges/*.json through the `aep` command as a black box: `aep ce encode`,
// `aep ce decode`, `aep otlp`, `aep ocsf` (one run per group of cases: one output line per input
// line, in order, `null` for no record / a bad line, a rule-naming stderr line per bad line), and
// the round trip over every valid stream of conformance/valid/ through two CLI runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { canonicalJson } from '@aep/protocol';
import { runAep } from '../../test/support/cli.js';

const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../bridges/${name}`, import.meta.url), 'utf8')) as T;
type Ev = Record<string, unknown>;
interface Forward {
  id: string;
  event: Ev;
  expect: Ev;
  diagnostics: string[];
}
interface Inbound {
  id: string;
  rule: string;
  ce: unknown;
  expect?: Ev | null;
  diagnostics?: string[];
  error?: string;
}
interface Proj {
  id: string;
  event: Ev;
  expect: Ev | null;
  maxCapture?: string;
  serviceName?: string;
  diagnostics?: string[];
}
const ce = load<{ forward: Forward[]; inbound: Inbound[] }>('cloudevents.json');
const otlp = load<{ cases: Proj[] }>('otlp.json');
const ocsf = load<{ cases: Proj[] }>('ocsf.json');

function outLines(stdout: string, n: number): string[] {
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', 'output ends with a newline');
  assert.equal(lines.length, n, 'one line out per line in');
  return lines;
}

test('aep ce encode: every forward pin, warnings for the dropped attributes', async () => {
  const r = await runAep(['ce', 'encode'], ce.forward.map((c) => JSON.stringify(c.event)).join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
  const lines = outLines(r.stdout, ce.forward.length);
  ce.forward.forEach((c, i) => {
    assert.deepEqual(JSON.parse(lines[i]!), c.expect, c.id);
    const warned = r.stderr
      .split('\n')
      .filter((l) => l.startsWith(`aep ce encode: stdin:${i + 1}: warning: `))
      .map((l) => /warning: ([a-z.-]+):/.exec(l)![1]);
    assert.deepEqual(warned, c.diagnostics, c.id);
  });
  const golden = ce.forward.findIndex((c) => c.id === 'golden-3-pinned');
  assert.equal(lines[golden], JSON.stringify(ce.forward[golden]!.expect), 'golden #3 byte for byte, member order included');
});

test('aep ce decode: every inbound case in one run (errors and foreign types give null, exit 1)', async () => {
  const r = await runAep(['ce', 'decode'], ce.inbound.map((c) => JSON.stringify(c.ce)).join('\n') + '\n');
  assert.equal(r.code, 1, 'some cases are bad lines');
  const lines = outLines(r.stdout, ce.inbound.length);
  const stderr = r.stderr.split('\n');
  ce.inbound.forEach((c, i) => {
    const mine = stderr.filter((l) => l.startsWith(`aep ce decode: stdin:${i + 1}: `));
    if (c.error) {
      assert.equal(lines[i], 'null', c.id);
      assert.ok(
        mine.some((l) => l.includes(`${c.error}: ${c.rule}: `)),
        `${c.id}: ${mine.join(' | ')}`,
      );
      return;
    }
    assert.deepEqual(JSON.parse(lines[i]!), c.expect ?? null, c.id);
    const warned = mine.filter((l) => l.includes(': warning: ')).map((l) => /warning: ([a-z.-]+):/.exec(l)![1]);
    assert.deepEqual(warned, c.diagnostics ?? [], c.id);
  });
  const bad = ce.inbound.filter((c) => c.error).length;
  assert.match(r.stderr, new RegExp(`${bad} of ${ce.inbound.length} lines could not be mapped`));
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

test('round trip through the CLI: ce decode (ce encode (valid streams)) equals the input, line for line', async () => {
  const dir = new URL('../valid/', import.meta.url);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => fileURLToPath(new URL(f, dir)));
  const input = files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== ''),
  );
  const enc = await runAep(['ce', 'encode', ...files]);
  assert.equal(enc.code, 0, enc.stderr);
  assert.equal(enc.stderr, '');
  const dec = await runAep(['ce', 'decode'], enc.stdout);
  assert.equal(dec.code, 0, dec.stderr);
  assert.equal(dec.stderr, '');
  const out = outLines(dec.stdout, input.length);
  input.forEach((l, i) => assert.equal(canonicalJson(JSON.parse(out[i]!)), canonicalJson(JSON.parse(l)), `line ${i + 1}`));
});

async function projections(cmd: 'otlp' | 'ocsf', cases: Proj[]): Promise<void> {
  const groups = new Map<string, Proj[]>();
  for (const c of cases) {
    const k = JSON.stringify([c.maxCapture ?? null, c.serviceName ?? null]);
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  for (const [k, group] of groups) {
    const [max, service] = JSON.parse(k) as [string | null, string | null];
    const args = [cmd, ...(max ? ['--max-capture', max] : []), ...(service ? ['--service-name', service] : [])];
    const r = await runAep(args, group.map((c) => JSON.stringify(c.event)).join('\n') + '\n');
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    const lines = outLines(r.stdout, group.length);
    group.forEach((c, i) => {
      assert.deepEqual(JSON.parse(lines[i]!), c.expect, c.id);
      // capture.above-max is the designed behaviour, not worth a warning; the others are.
      const warned = r.stderr
        .split('\n')
        .filter((l) => l.startsWith(`aep ${cmd}: stdin:${i + 1}: warning: `))
        .map((l) => /warning: ([a-z.-]+):/.exec(l)![1]);
      assert.deepEqual(
        warned,
        (c.diagnostics ?? []).filter((d) => d !== 'capture.above-max'),
        c.id,
      );
    });
  }
}

test('aep otlp: every pinned LogRecord, one run per max_capture / service name', async () => {
  await projections('otlp', otlp.cases);
});
test('aep ocsf: every pinned record (and null for no record), one run per max_capture', async () => {
  await projections('ocsf', ocsf.cases);
});
