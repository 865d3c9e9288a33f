// The wire-format checkers the conformance runner and the live receivers rely on must fail on
// each violation they exist for (a checker that cannot fail proves nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkCloudEvent10, checkOcsfRecord, checkOtlpExportLogsRequest } from './support/checkers.js';

const ce = { specversion: '1.0', id: 'x', source: 'aep://h', type: 'dev.aep.tool.completed', time: '2026-08-01T09:00:00Z', aepsequence: 3, data: {} };

test('CloudEvents 1.0 checker: a good event passes, each planted violation is caught', () => {
  assert.deepEqual(checkCloudEvent10(ce), []);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ ...ce, specversion: '0.3' }, /specversion/],
    [{ ...ce, id: '' }, /id is REQUIRED/],
    [{ ...ce, time: '2026-08-01 09:00' }, /RFC 3339/],
    [{ ...ce, aep_bad: 'x' }, /not \[a-z0-9\]/],
    [{ ...ce, aepsequence: 2 ** 31 }, /32-bit Integer/],
    [{ ...ce, acmeobj: { a: 1 } }, /not a String, Integer or Boolean/],
    [{ ...ce, acmenull: null }, /is null/],
    [{ ...ce, data_base64: 'AA==' }, /mutually exclusive/],
    [{ ...ce, traceparent: '00-x' }, /traceparent/],
  ];
  for (const [v, re] of bad) assert.match(checkCloudEvent10(v).join('\n'), re, JSON.stringify(v));
});

const rec = {
  timeUnixNano: '1783073704221000000',
  severityNumber: 9,
  severityText: 'INFO',
  eventName: 'dev.aep.x',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  flags: 1,
  attributes: [{ key: 'a', value: { intValue: '3' } }],
  body: { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } },
};
const req = (r: Record<string, unknown>) => ({
  resourceLogs: [
    { resource: { attributes: [{ key: 'service.name', value: { stringValue: 's' } }] }, scopeLogs: [{ scope: { name: 'x', version: '1' }, logRecords: [r] }] },
  ],
});

test('OTLP JSON checker: a good request passes, each planted encoding violation is caught', () => {
  assert.deepEqual(checkOtlpExportLogsRequest(req(rec)), []);
  const bad: [unknown, RegExp][] = [
    [req({ ...rec, time_unix_nano: '1' }), /lowerCamelCase/],
    [req({ ...rec, timeUnixNano: 1783073704221000000 }), /timeUnixNano must be a fixed64 as a decimal string/],
    [req({ ...rec, traceId: 'S/kvNXezTaajzpKdDg5HNg==' }), /traceId must be 32 hex/],
    [req({ ...rec, spanId: '00f067aa' }), /spanId must be 16 hex/],
    [req({ ...rec, severityNumber: '9' }), /severityNumber must be an integer/],
    [req({ ...rec, attributes: [{ key: 'a', value: { intValue: 3 } }] }), /intValue must be an int64 as a decimal string/],
    [req({ ...rec, attributes: [{ key: 'a', value: 'plain' }] }), /AnyValue must be an object/],
    [req({ ...rec, attributes: { a: 1 } }), /must be an array of KeyValue/],
    [req({ ...rec, body: { stringValue: 'x', intValue: '1' } }), /more than one member/],
    [req({ ...rec, body: { kvlistValue: [{ key: 'k' }] } }), /kvlistValue must be/],
    [req({ ...rec, body: { boolValue: 'true' } }), /boolValue must be a boolean/],
    [{ resourceLogs: [{ scopeLogs: [{ logRecords: {} }] }] }, /logRecords must be an array/],
    [{ resource_logs: [] }, /unknown member resource_logs/],
    [{ logRecords: [rec] }, /resourceLogs must be an array/],
  ];
  for (const [v, re] of bad) assert.match(checkOtlpExportLogsRequest(v).join('\n'), re, JSON.stringify(v).slice(0, 120));
});

test('OCSF subset checker: derived type_uid, enums, profile-gated disposition, unknown members', () => {
  const subset = JSON.parse(readFileSync(new URL('../../../conformance/bridges/ocsf-classes.json', import.meta.url), 'utf8')) as Parameters<
    typeof checkOcsfRecord
  >[1];
  const good = {
    class_uid: 2004,
    category_uid: 2,
    activity_id: 3,
    type_uid: 200403,
    severity_id: 1,
    time: 1,
    message: 'attention.timeout',
    disposition_id: 16,
    metadata: { version: '1.8.0', uid: 'x', product: { name: 'a' }, profiles: ['security_control'] },
    finding_info: { uid: 'r', title: 't' },
    unmapped: { aep: {} },
  };
  assert.deepEqual(checkOcsfRecord(good, subset), []);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ ...good, type_uid: 200401 }, /type_uid/],
    [{ ...good, activity_id: 9, type_uid: 200409 }, /activity_id/],
    [{ ...good, metadata: { ...good.metadata, profiles: [] } }, /security_control/],
    [{ ...good, status_id: 17 }, /status_id/],
    [{ ...good, category_uid: 1 }, /category_uid/],
    [{ ...good, process: { name: 'x' } }, /member process/],
    [{ ...good, finding_info: { uid: 'r', title: 't', extra: 1 } }, /finding_info.extra/],
    [{ ...good, time: 1.5 }, /epoch milliseconds/],
    [Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'finding_info')), /required finding_info/],
  ];
  for (const [v, re] of bad) assert.match(checkOcsfRecord(v, subset).join('\n'), re, JSON.stringify(v).slice(0, 120));
});
