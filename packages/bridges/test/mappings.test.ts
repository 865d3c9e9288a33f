// Behaviours of the pure mappings beyond the conformance fixtures: garbage never throws, options
// are checked, inputs are never mutated, the OTLP JSON encoding of every JSON value, the URI host,
// hostile keys, and the capture rule of both projections over generated events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { captureRank, CAPTURE_LEVELS } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { decodeCloudEvent, encodeCloudEvent, toOcsfRecord, toOtlpLogRecord, otlpAnyValue, otlpExportRequest, uriHost, BRIDGE_RULES } from '@aep/bridges';
import { checkOtlpExportLogsRequest, fromAnyValue } from './support/checkers.js';
import { validEvent } from './support/events.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);

test('any JSON input: every mapping answers with a result, never throws; issues name a rule of BRIDGE_RULES', () => {
  const input = fc.oneof(
    fc.jsonValue(),
    fc.dictionary(
      fc.constantFrom('aep', 'id', 'type', 'time', 'source', 'agent', 'data', 'capture', 'severity', 'specversion', '__proto__', 'traceparent'),
      fc.jsonValue(),
    ),
  );
  fc.assert(
    fc.property(input, (v) => {
      for (const r of [encodeCloudEvent(v), decodeCloudEvent(v), toOtlpLogRecord(v), toOcsfRecord(v)]) {
        if (!r.ok) {
          assert.ok(r.issue.rule in BRIDGE_RULES, r.issue.rule);
          assert.ok(r.issue.code.startsWith('AEP_BRIDGE_'));
          assert.ok(r.issue.message.startsWith(`${r.issue.rule}: `));
        } else {
          for (const d of r.diagnostics) assert.ok(d.rule in BRIDGE_RULES, d.rule);
        }
      }
    }),
    { numRuns: RUNS },
  );
});

test('an unknown max_capture is refused with AEP_BRIDGE_OPTION, naming the levels', () => {
  const e = { aep: '0.1', id: 'x', type: 'tool.completed', time: '2026-08-01T09:00:00Z', source: 'aep://h', agent: 'a', session: 's', seq: 0 };
  for (const r of [toOtlpLogRecord(e, { maxCapture: 'secret' as CaptureLevel }), toOcsfRecord(e, { maxCapture: 'all' as CaptureLevel })]) {
    assert.ok(!r.ok);
    assert.equal(r.issue.code, 'AEP_BRIDGE_OPTION');
    assert.match(r.issue.message, /none, metadata, redacted, full/);
  }
});

test('unusable events: the rule is named, values are never quoted', () => {
  const base = { aep: '0.1', id: 'x', type: 'tool.completed', time: '2026-08-01T09:00:00Z', source: 'aep://h', agent: 'a', session: 's', seq: 0 };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...base, time: 'CANARY yesterday' }, 'event.time'],
    [{ ...base, agent: '' }, 'event.required'],
    [{ ...base, severity: 'CANARY' }, 'event.severity'],
    [{ ...base, capture: 'CANARY' }, 'event.capture'],
    [{ ...base, data: 'CANARY' }, 'event.data'],
  ];
  for (const [e, rule] of cases) {
    for (const r of [toOtlpLogRecord(e), toOcsfRecord(e)]) {
      assert.ok(!r.ok);
      assert.equal(r.issue.rule, rule);
      assert.equal(r.issue.code, 'AEP_BRIDGE_EVENT_INVALID');
      assert.doesNotMatch(r.issue.message, /CANARY/);
    }
  }
  const r = encodeCloudEvent({ id: 'x' });
  assert.ok(!r.ok && r.issue.rule === 'event.required');
});

test('inputs are never mutated (generated events, every mapping, every max_capture)', () => {
  fc.assert(
    fc.property(validEvent(), fc.constantFrom(...CAPTURE_LEVELS), (e, max) => {
      const before = JSON.stringify(e);
      encodeCloudEvent(e);
      toOtlpLogRecord(e, { maxCapture: max });
      toOcsfRecord(e, { maxCapture: max });
      assert.equal(JSON.stringify(e), before);
    }),
    { numRuns: Math.min(RUNS, 300) },
  );
});

test('capture rule over generated events: a payload leaves only when capture <= max_capture, wholesale', () => {
  fc.assert(
    fc.property(validEvent(), fc.constantFrom(...CAPTURE_LEVELS), (e, max: CaptureLevel) => {
      const have = (e['capture'] as CaptureLevel | undefined) ?? 'metadata';
      const data = e['data'] as Record<string, unknown> | undefined;
      const survives = data !== undefined && have !== 'none' && captureRank(have) <= captureRank(max);
      const o = toOtlpLogRecord(e, { maxCapture: max });
      assert.ok(o.ok);
      assert.equal(o.value.attributes['aep.capture'], have);
      const hoisted = Object.keys(o.value.attributes).filter((k) => k.startsWith('gen_ai.'));
      if (!survives) {
        assert.equal(o.value.body, undefined);
        assert.deepEqual(hoisted, []);
      } else {
        const rest = Object.fromEntries(Object.entries(data).filter(([k]) => !k.startsWith('gen_ai.')));
        assert.deepEqual(o.value.body, Object.keys(rest).length ? rest : undefined);
        assert.deepEqual(
          hoisted,
          Object.keys(data).filter((k) => k.startsWith('gen_ai.')),
        );
      }
      const c = toOcsfRecord(e, { maxCapture: max });
      assert.ok(c.ok);
      if (c.value) {
        assert.equal(c.value.unmapped.data, survives && Object.keys(data).length > 0 ? data : undefined);
        assert.equal(c.value.type_uid, c.value.class_uid * 100 + c.value.activity_id);
        assert.deepEqual(
          Object.keys(c.value.unmapped.aep).sort(),
          Object.keys(e)
            .filter((k) => k !== 'data')
            .sort(),
        );
      }
    }),
    { numRuns: RUNS },
  );
});

test('OTLP AnyValue encoding of every JSON value round-trips through the checker', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (body) => {
      const v = otlpAnyValue(body);
      const req = {
        resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 's' }, logRecords: [{ timeUnixNano: '1', body: v, attributes: [] }] }] }],
      };
      assert.deepEqual(checkOtlpExportLogsRequest(JSON.parse(JSON.stringify(req))), []);
      // Decoding gives the value back, except that -0 is an integer 0 on the wire.
      assert.deepEqual(JSON.parse(JSON.stringify(fromAnyValue(JSON.parse(JSON.stringify(v))))), JSON.parse(JSON.stringify(body)));
    }),
    { numRuns: RUNS },
  );
  assert.deepEqual(otlpAnyValue(3), { intValue: '3' });
  assert.deepEqual(otlpAnyValue(-12), { intValue: '-12' });
  assert.deepEqual(otlpAnyValue(2.5), { doubleValue: 2.5 });
  assert.deepEqual(otlpAnyValue(1e300), { doubleValue: 1e300 });
  assert.deepEqual(otlpAnyValue(2 ** 62), { intValue: '4611686018427387904' });
  assert.deepEqual(otlpAnyValue(null), {});
  assert.deepEqual(otlpAnyValue([true, 'x']), { arrayValue: { values: [{ boolValue: true }, { stringValue: 'x' }] } });
  assert.deepEqual(otlpAnyValue({ a: { b: 1 } }), {
    kvlistValue: { values: [{ key: 'a', value: { kvlistValue: { values: [{ key: 'b', value: { intValue: '1' } }] } } }] },
  });
});

test('OTLP export request groups by service.name, keeps order, and passes the encoding checker for generated events', () => {
  fc.assert(
    fc.property(fc.array(validEvent(), { minLength: 1, maxLength: 8 }), fc.constantFrom(...CAPTURE_LEVELS), (events, max) => {
      const recs = events.map((e) => {
        const r = toOtlpLogRecord(e, { maxCapture: max });
        assert.ok(r.ok);
        return r.value;
      });
      const req = otlpExportRequest(recs);
      assert.deepEqual(checkOtlpExportLogsRequest(JSON.parse(JSON.stringify(req))), []);
      const names = [...new Set(recs.map((r) => r.resource['service.name']))];
      assert.deepEqual(
        req.resourceLogs.map((rl) => rl.resource.attributes[0]!.value),
        names.map((n) => ({ stringValue: n })),
      );
      const ids = req.resourceLogs.flatMap((rl) =>
        rl.scopeLogs[0]!.logRecords.map((r) => fromAnyValue(r.attributes.find((a) => a.key === 'aep.event_id')!.value)),
      );
      assert.deepEqual(
        ids,
        names.flatMap((n) => recs.filter((r) => r.resource['service.name'] === n).map((r) => r.attributes['aep.event_id'])),
      );
    }),
    { numRuns: Math.min(RUNS, 300) },
  );
});

test('trace fields from traceparent; a malformed one gives a diagnostic and no trace fields', () => {
  const e = {
    aep: '0.1',
    id: 'x',
    type: 'agent.heartbeat',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03',
  };
  const ok = toOtlpLogRecord(e);
  assert.ok(ok.ok);
  assert.deepEqual([ok.value.trace_id, ok.value.span_id, ok.value.flags], ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', 3]);
  const bad = toOtlpLogRecord({ ...e, traceparent: '00-XYZ' });
  assert.ok(bad.ok);
  assert.equal(bad.value.trace_id, undefined);
  assert.deepEqual(
    bad.diagnostics.map((d) => d.rule),
    ['otlp.traceparent'],
  );
});

test('times outside uint64 nanoseconds: time_unix_nano "0" with a diagnostic; OCSF keeps the millisecond time', () => {
  const e = {
    aep: '0.1',
    id: 'x',
    type: 'session.started',
    time: '1969-07-20T20:17:40Z',
    source: 'aep://h/agent/a/session/s',
    agent: 'a',
    session: 's',
    seq: 0,
  };
  const r = toOtlpLogRecord(e);
  assert.ok(r.ok);
  assert.equal(r.value.time_unix_nano, '0');
  assert.deepEqual(
    r.diagnostics.map((d) => d.rule),
    ['otlp.time-range'],
  );
  const late = toOtlpLogRecord({ ...e, time: '2600-01-01T00:00:00Z' });
  assert.ok(late.ok && late.value.time_unix_nano === '0');
  const o = toOcsfRecord(e);
  assert.ok(o.ok && o.value);
  assert.equal(o.value.time, Date.parse('1969-07-20T20:17:40Z'));
});

test('uriHost: the authority host, never userinfo or port; null without an authority', () => {
  const cases: [string, string | null][] = [
    ['aep://host-a/agent/x', 'host-a'],
    ['aep://host-a', 'host-a'],
    ['aep://u:secret@host-b:9000/x', 'host-b'],
    ['https://[::1]:8787/events', '::1'],
    ['aep://h?x=1', 'h'],
    ['urn:aep:agent:bot', null],
    ['file:///tmp/x', null],
    ['aep:/no/authority', null],
    ['not a uri', null],
  ];
  for (const [u, h] of cases) assert.equal(uriHost(u), h, u);
});

test('hostile member names (__proto__, constructor) are carried as plain data, never reach a prototype', () => {
  const raw =
    '{"aep":"0.1","id":"x","type":"x.acme.deploy.started","time":"2026-08-01T09:00:00Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":0,"constructor":"c","data":{"__proto__":{"polluted":true},"gen_ai.x":1}}';
  const e = JSON.parse(raw) as Record<string, unknown>;
  const o = toOtlpLogRecord(e);
  assert.ok(o.ok && o.value.body);
  assert.ok(Object.prototype.hasOwnProperty.call(o.value.body, '__proto__'));
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  const c = encodeCloudEvent(e);
  assert.ok(c.ok);
  assert.equal(c.value['constructor'], 'c');
  const d = decodeCloudEvent(JSON.parse(JSON.stringify(c.value)));
  assert.ok(d.ok && d.value);
  assert.equal(d.value['constructor'], 'c');
  const ce = JSON.parse('{"specversion":"1.0","id":"x","source":"aep://h","type":"dev.aep.agent.heartbeat","__proto__":"p"}') as unknown;
  const r = decodeCloudEvent(ce);
  assert.ok(r.ok && r.value);
  assert.deepEqual(
    r.diagnostics.map((x) => x.rule),
    ['ce.illegal-name'],
  );
});
