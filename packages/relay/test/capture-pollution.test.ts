// Capture gating walks an Event's members with `for...in` (issue 19: no `Object.keys` array per
// object). `for...in` also visits inherited enumerable members, so every walk checks that a
// member is the object's own. The attack this pins: a process whose Object.prototype was polluted
// (a dependency, an earlier prototype-pollution bug) must not see the polluting member treated
// as part of an Event: not copied into what a consumer receives, not making an honest Event look
// changed, not failing the integer check of every Event (docs/security.md T-inherited-members).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkEvent } from '../src/ingest.js';
import { dropUnannotated, gateFor, makeHonest, rawRank } from '../src/capture.js';

const events: Array<Record<string, unknown>> = [
  {
    aep: '0.1',
    id: 'P1',
    type: 'attention.requested',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/a/session/s',
    agent: 'a',
    session: 's',
    seq: 1,
    capture: 'redacted',
    data: { kind: 'input', prompt: 'token sk-live-0123456789abcdef0123 here', extra: 'unannotated' },
  },
  {
    aep: '0.1',
    id: 'P2',
    type: 'progress.status',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/a/session/s',
    agent: 'a',
    session: 's',
    seq: 2,
    capture: 'metadata',
    data: { message: 'hello', percent: 5 },
  },
];

/** Everything the gating functions return for `e`, as JSON (own members only, as consumers get them). */
function gated(e: Record<string, unknown>): string {
  const honest = makeHonest(e);
  return JSON.stringify({
    honestIsSame: honest === e,
    honest,
    dropped: dropUnannotated(honest),
    droppedIsSame: dropUnannotated(honest) === honest,
    rawRank: rawRank(honest),
    gated: (['none', 'metadata', 'redacted', 'full'] as const).map((c) => gateFor(honest, c)),
    check: checkEvent(e, false),
  });
}

describe('capture gating with a polluted Object.prototype', () => {
  it('inherited enumerable members are never taken for members of an Event or its data', () => {
    const clean = events.map((e) => gated(structuredClone(e)));
    const proto = Object.prototype as Record<string, unknown>;
    // An enumerable inherited string (would be copied into gated output) and an unsafe integer
    // (would fail every Event's integer check) in one polluting write each.
    Object.defineProperty(proto, 'pollutedx', { value: 'inherited secret', enumerable: true, configurable: true, writable: true });
    Object.defineProperty(proto, 'pollutedn', { value: 1e300, enumerable: true, configurable: true, writable: true });
    let polluted: string[];
    try {
      polluted = events.map((e) => gated(structuredClone(e)));
    } finally {
      delete proto['pollutedx'];
      delete proto['pollutedn'];
    }
    assert.deepEqual(polluted, clean);
    for (const text of polluted) assert.ok(!text.includes('inherited secret'), text);
  });
});
