// Escalation timing (pure): properties of planSends and quiet hours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { inWindow, isQuiet, planSends, quietEnd } from '../src/index.js';
import type { QuietWindow } from '../src/index.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 200);
const T0 = Date.UTC(2026, 6, 6, 12, 0); // a Monday, 12:00 UTC

const windowArb = fc
  .record({
    from: fc.integer({ min: 0, max: 1439 }),
    to: fc.integer({ min: 0, max: 1439 }),
    days: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 6 }), { nil: undefined }),
    tz: fc.constantFrom(undefined, 'UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'),
  })
  .filter((w) => w.from !== w.to)
  .map((w) => {
    const q: QuietWindow = { from: w.from, to: w.to };
    if (w.days) q.days = w.days;
    if (w.tz) q.tz = w.tz;
    return q;
  });

test('no planned send falls inside quiet hours when the rule respects them; sends are strictly increasing and never early', () => {
  fc.assert(
    fc.property(
      fc.array(windowArb, { maxLength: 2 }),
      fc.integer({ min: 0, max: 3 * 3600 }),
      fc.option(fc.integer({ min: 10, max: 7200 }), { nil: undefined }),
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 0, max: 7 * 86_400 }),
      (quiet, after, repeat, maxRepeats, offset) => {
        const since = T0 + offset * 1000;
        const plan = planSends(
          { afterMs: after * 1000, ...(repeat !== undefined ? { repeatMs: repeat * 1000 } : {}), maxRepeats, escalation: false, quiet: true },
          since,
          quiet,
        );
        assert.ok(plan.length >= 1 && plan.length <= (repeat === undefined ? 1 : maxRepeats + 1));
        let last = -Infinity;
        for (const p of plan) {
          assert.ok(p.at >= p.due, 'quiet hours only ever delay');
          assert.ok(p.at >= since + after * 1000);
          assert.ok(p.at > last);
          last = p.at;
          // quietEnd gives up (sends rather than never) only when 8 days are quiet without a gap.
          if (isQuiet(p.at, quiet)) assert.equal(quietEnd(p.due, quiet), p.due, `send at ${new Date(p.at).toISOString()} is inside ${JSON.stringify(quiet)}`);
        }
        assert.equal(plan[0]!.reason, 'first');
      },
    ),
    { numRuns: RUNS },
  );
});

test('a rule with quiet:false ignores quiet hours; an escalation is sent once', () => {
  const quiet: QuietWindow[] = [{ from: 0, to: 1439, tz: 'UTC' }];
  const plan = planSends({ afterMs: 0, repeatMs: 60_000, maxRepeats: 2, escalation: false, quiet: false }, T0, quiet);
  assert.deepEqual(
    plan.map((p) => p.at - T0),
    [0, 60_000, 120_000],
  );
  assert.deepEqual(
    plan.map((p) => p.reason),
    ['first', 'reminder', 'reminder'],
  );
  const esc = planSends({ afterMs: 900_000, repeatMs: 60_000, maxRepeats: 5, escalation: true, quiet: true }, T0, []);
  assert.deepEqual(
    esc.map((p) => [p.at - T0, p.reason]),
    [[900_000, 'escalation']],
  );
});

test('overnight quiet hours: due at 23:10 goes out at 07:00 next morning; reminders inside collapse into one', () => {
  const quiet: QuietWindow[] = [{ from: 22 * 60, to: 7 * 60, tz: 'UTC' }];
  const since = Date.UTC(2026, 6, 6, 23, 10);
  assert.equal(inWindow(since, quiet[0]!), true);
  assert.equal(quietEnd(since, quiet), Date.UTC(2026, 6, 7, 7, 0));
  const plan = planSends({ afterMs: 0, repeatMs: 3_600_000, maxRepeats: 3, escalation: false, quiet: true }, since, quiet);
  assert.deepEqual(
    plan.map((p) => new Date(p.at).toISOString()),
    ['2026-07-07T07:00:00.000Z'],
  );
  // days: the window belongs to the day it starts on (Monday night = into Tuesday morning).
  const monNight: QuietWindow = { from: 22 * 60, to: 7 * 60, tz: 'UTC', days: [1] };
  assert.equal(inWindow(Date.UTC(2026, 6, 7, 6, 0), monNight), true, 'Tuesday 06:00 is inside Monday night');
  assert.equal(inWindow(Date.UTC(2026, 6, 8, 6, 0), monNight), false, 'Wednesday 06:00 is not');
});
