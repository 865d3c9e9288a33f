// Runs conformance/bridges/*.json (written from AEP-0005) through the library: CloudEvents
// forward pins and inbound cases, round-trip identity over every valid stream of
// conformance/valid/, OTLP LogRecords and OCSF records at several max_capture values. The same
// fixtures go through the CLI in bridges-cli.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { canonicalJson, validateEnvelope, validateEvent } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { decodeCloudEvent, encodeCloudEvent, otlpExportRequest, toOcsfRecord, toOtlpLogRecord } from '@aep/bridges';
import type { OtlpLogRecord } from '@aep/bridges';
import { checkCloudEvent10, checkOcsfRecord, checkOtlpExportLogsRequest } from '../../packages/bridges/test/support/checkers.js';

const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../bridges/${name}`, import.meta.url), 'utf8')) as T;
type Ev = Record<string, unknown>;
interface Forward {
  id: string;
  rule: string;
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
  rule: string;
  event: Ev;
  expect: Ev | null;
  maxCapture?: CaptureLevel;
  serviceName?: string;
  diagnostics?: string[];
}
const ce = load<{ forward: Forward[]; inbound: Inbound[] }>('cloudevents.json');
const otlp = load<{ cases: Proj[] }>('otlp.json');
const ocsf = load<{ cases: Proj[] }>('ocsf.json');
const subset = load<Parameters<typeof checkOcsfRecord>[1]>('ocsf-classes.json');
const rules = load<{ rules: Record<string, { section: string; meaning: string; runner?: boolean }> }>('rules.json');

const validDir = new URL('../valid/', import.meta.url);
const validEvents: { file: string; line: number; event: Ev }[] = readdirSync(validDir)
  .filter((f) => f.endsWith('.jsonl'))
  .sort()
  .flatMap((file) =>
    readFileSync(new URL(file, validDir), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l, i) => ({ file, line: i + 1, event: JSON.parse(l) as Ev })),
  );

test('fixture ids are unique per file and the pinned cases are present', () => {
  for (const [name, list] of [
    ['forward', ce.forward],
    ['inbound', ce.inbound],
    ['otlp', otlp.cases],
    ['ocsf', ocsf.cases],
  ] as const) {
    const ids = list.map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length, name);
  }
  for (const id of ['legal-aep-extension-kept', 'plain-legal-extension-kept', 'illegal-name-dropped', 'core-colliding-names-dropped'])
    assert.ok(
      ce.inbound.some((c) => c.id === id),
      id,
    );
  assert.ok(ce.forward.some((c) => c.id === 'golden-3-pinned'));
  const levels = new Set([...otlp.cases, ...ocsf.cases].map((c) => c.maxCapture ?? 'metadata'));
  for (const l of ['none', 'metadata', 'redacted', 'full']) assert.ok(levels.has(l), `a projection at max_capture ${l}`);
});

test('every fixture event is a valid AEP event (consumer view)', () => {
  for (const c of [...ce.forward, ...otlp.cases, ...ocsf.cases]) {
    const issues = validateEvent(c.event).filter((i) => !(c.rule.endsWith('.dishonest') && i.rule === 'capture.field-above-capture'));
    assert.deepEqual(issues, [], c.id);
  }
  for (const c of ce.inbound) if (c.expect) assert.deepEqual(validateEnvelope(c.expect), [], c.id);
});

for (const c of ce.forward) {
  test(`CE forward ${c.id} (${c.rule})`, () => {
    const before = JSON.stringify(c.event);
    const r = encodeCloudEvent(c.event);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(JSON.stringify(c.event), before, 'input not mutated');
    assert.deepEqual(r.value, c.expect);
    assert.deepEqual(
      r.diagnostics.map((d) => d.rule),
      c.diagnostics,
    );
    assert.deepEqual(checkCloudEvent10(r.value), [], 'validates as CloudEvents 1.0 JSON');
    if (c.id === 'golden-3-pinned') assert.equal(JSON.stringify(r.value), JSON.stringify(c.expect), 'member order of the pinned example');
    // The inverse gives the event back, minus what the forward map dropped (with its diagnostics).
    const back = decodeCloudEvent(r.value);
    assert.ok(back.ok && back.value);
    const dropped = new Set(r.diagnostics.map((d) => d.attribute));
    assert.equal(canonicalJson(back.value), canonicalJson(Object.fromEntries(Object.entries(c.event).filter(([k]) => !dropped.has(k)))));
  });
}

for (const c of ce.inbound) {
  test(`CE inbound ${c.id} (${c.rule})`, () => {
    const r = decodeCloudEvent(c.ce);
    if (c.error) {
      assert.ok(!r.ok, 'must fail');
      assert.equal(r.issue.code, c.error);
      assert.equal(r.issue.rule, c.rule);
      assert.ok(r.issue.message.startsWith(`${c.rule}: `), r.issue.message);
      return;
    }
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.value, c.expect);
    assert.deepEqual(
      r.diagnostics.map((d) => d.rule),
      c.diagnostics ?? [],
    );
    for (const d of r.diagnostics) assert.ok(d.message.startsWith(`${d.rule}: `));
  });
}

test(`CE round trip: inverse(forward(e)) ≡ e for all ${validEvents.length} events of conformance/valid/ (canonical JSON), forward(e) is CE 1.0 JSON`, () => {
  assert.ok(validEvents.length > 50);
  for (const { file, line, event } of validEvents) {
    const f = encodeCloudEvent(event);
    assert.ok(f.ok, `${file}:${line}`);
    assert.deepEqual(f.diagnostics, [], `${file}:${line}`);
    assert.deepEqual(checkCloudEvent10(f.value), [], `${file}:${line}`);
    const b = decodeCloudEvent(JSON.parse(JSON.stringify(f.value)));
    assert.ok(b.ok && b.value, `${file}:${line}`);
    assert.deepEqual(b.diagnostics, [], `${file}:${line}`);
    assert.equal(canonicalJson(b.value), canonicalJson(event), `${file}:${line}`);
  }
});

const otlpRecords: OtlpLogRecord[] = [];
for (const c of otlp.cases) {
  test(`OTLP ${c.id} (${c.rule}, max_capture ${c.maxCapture ?? 'metadata'})`, () => {
    const before = JSON.stringify(c.event);
    const r = toOtlpLogRecord(c.event, { ...(c.maxCapture ? { maxCapture: c.maxCapture } : {}), ...(c.serviceName ? { serviceName: c.serviceName } : {}) });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(JSON.stringify(c.event), before, 'input not mutated');
    assert.deepEqual(r.value, c.expect);
    assert.deepEqual(
      r.diagnostics.map((d) => d.rule),
      c.diagnostics ?? [],
    );
    assert.equal(r.value.attributes['aep.capture'], c.event['capture'] ?? 'metadata', 'aep.capture keeps the original value');
    otlpRecords.push(r.value);
  });
}

test('OTLP: the pinned records encode as a valid OTLP/HTTP JSON ExportLogsServiceRequest', () => {
  assert.equal(otlpRecords.length, otlp.cases.length);
  const req = otlpExportRequest(otlpRecords);
  assert.deepEqual(checkOtlpExportLogsRequest(JSON.parse(JSON.stringify(req))), []);
  assert.equal(
    req.resourceLogs.reduce((n, rl) => n + rl.scopeLogs[0]!.logRecords.length, 0),
    otlpRecords.length,
  );
});

for (const c of ocsf.cases) {
  test(`OCSF ${c.id} (${c.rule}, max_capture ${c.maxCapture ?? 'metadata'})`, () => {
    const r = toOcsfRecord(c.event, c.maxCapture ? { maxCapture: c.maxCapture } : {});
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(r.value, c.expect);
    assert.deepEqual(
      r.diagnostics.map((d) => d.rule),
      c.diagnostics ?? [],
    );
    if (r.value) assert.deepEqual(checkOcsfRecord(JSON.parse(JSON.stringify(r.value)), subset), [], 'pinned OCSF class subset');
  });
}

test('bridges/rules.json lists every rule the cases use, and every listed rule has a case (or is asserted by the runner)', () => {
  const used = new Set([...ce.forward, ...ce.inbound, ...otlp.cases, ...ocsf.cases].map((c) => c.rule));
  for (const r of used) assert.ok(r in rules.rules, `rule ${r} is listed`);
  for (const [r, m] of Object.entries(rules.rules)) {
    assert.ok(used.has(r) || m.runner === true, `rule ${r} has at least one case`);
    assert.ok(m.section.length > 0 && m.meaning.length > 0, r);
  }
});
