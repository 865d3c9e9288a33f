// Epoch times from RFC 3339 text with exact integer arithmetic (AEP-0005 §3.2 [pin]): fractions
// of any precision, offsets, leap seconds, the lowercase/space forms the envelope accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { rfc3339ToEpochNanos, rfc3339ToEpochTime, unixNanoString, epochMillis } from '@aep/bridges';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);

test('pinned values: milliseconds, nanoseconds, beyond nanoseconds, offsets, forms', () => {
  const cases: [string, bigint][] = [
    ['2026-07-03T10:15:04.221Z', 1783073704221000000n],
    ['1970-01-01T00:00:00Z', 0n],
    ['1970-01-01T00:00:00.000000001Z', 1n],
    ['2026-08-01 09:00:00.000000001z', 1785574800000000001n],
    ['2026-08-01t11:00:00.123456789987+02:00', 1785574800123456789n],
    ['2026-08-01T03:30:00-05:30', 1785574800000000000n],
    ['2026-08-01T09:00:00-00:00', 1785574800000000000n],
    ['2026-08-01T09:00:00.5+01:00', 1785571200500000000n],
    ['2000-02-29T23:59:59.999999999+23:59', 951782459999999999n],
    ['1969-12-31T23:59:59.9999999999Z', -1n],
    ['2016-12-31T23:59:60Z', 1483228800000000000n],
    ['9999-12-31T23:59:59Z', 253402300799000000000n],
  ];
  for (const [text, ns] of cases) assert.equal(rfc3339ToEpochNanos(text), ns, text);
});

test('not RFC 3339 with an offset: null, never a guess', () => {
  for (const t of [
    '2026-08-01T09:00:00',
    '2026-08-01',
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-08-01T09:00:00.Z',
    '2026-08-01T24:00:00Z',
    '2026-08-01T09:00:00+2:00',
    ' 2026-08-01T09:00:00Z',
    '',
  ]) {
    assert.equal(rfc3339ToEpochNanos(t), null, t);
  }
  assert.equal(rfc3339ToEpochNanos(42 as unknown as string), null);
});

test('property: equals Date.parse for millisecond times, extended exactly by extra fraction digits', () => {
  const date = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
  fc.assert(
    fc.property(date, fc.stringMatching(/^[0-9]{0,15}$/), fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), (d, extra, off) => {
      const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
      const ms = BigInt(d.getTime());
      const extraNs = BigInt(extra.slice(0, 6).padEnd(6, '0'));
      assert.equal(rfc3339ToEpochNanos(iso.slice(0, 23) + extra + 'Z'), ms * 1_000_000n + extraNs);
      // The same instant written in another offset.
      const local = new Date(d.getTime() + off * 60_000).toISOString();
      const sign = off < 0 ? '-' : '+';
      const a = Math.abs(off);
      const text = `${local.slice(0, 23)}${extra}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
      if (local.startsWith('+') || local.startsWith('-')) return; // outside 4-digit years
      assert.equal(rfc3339ToEpochNanos(text), ms * 1_000_000n + extraNs, text);
    }),
    { numRuns: RUNS },
  );
});

test('uint64 range for time_unix_nano; epoch milliseconds floor', () => {
  assert.equal(unixNanoString(0n), '0');
  assert.equal(unixNanoString(-1n), null);
  assert.equal(unixNanoString(1n << 64n), null);
  assert.equal(unixNanoString((1n << 64n) - 1n), '18446744073709551615');
  assert.equal(epochMillis(1783073704221999999n), 1783073704221);
  assert.equal(epochMillis(-1n), -1);
  assert.equal(epochMillis(-1_000_000n), -1);
  assert.equal(epochMillis(-1_000_001n), -2);
});

test('the integer (seconds, nanos) path equals the bigint path for time_unix_nano and epoch milliseconds', () => {
  assert.equal(unixNanoString({ seconds: 0, nanos: 5 }), '5');
  assert.equal(unixNanoString({ seconds: 1, nanos: 5 }), '1000000005');
  assert.equal(unixNanoString({ seconds: 18446744073, nanos: 709551615 }), '18446744073709551615');
  assert.equal(unixNanoString({ seconds: 18446744073, nanos: 709551616 }), null);
  assert.equal(unixNanoString({ seconds: -1, nanos: 999_999_999 }), null);
  assert.equal(epochMillis({ seconds: -1, nanos: 999_999_999 }), -1);
  const date = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
  fc.assert(
    fc.property(date, fc.stringMatching(/^[0-9]{1,15}$/), (d, frac) => {
      const text = `${d.toISOString().slice(0, 19)}.${frac}Z`;
      const t = rfc3339ToEpochTime(text)!;
      const n = rfc3339ToEpochNanos(text)!;
      assert.equal(unixNanoString(t), unixNanoString(n));
      assert.equal(epochMillis(t), epochMillis(n));
    }),
    { numRuns: RUNS },
  );
});
