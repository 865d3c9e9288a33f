// Body parsing of POST /events at unit level (issue 20, the mutation run's relay ingest target:
// ingest.ts): the bytes kept per Event (replay is byte-identical, AEP-0003 §5), blank and
// whitespace-only NDJSON lines, CRLF, line numbers, the batch cap at its boundary, every refusal
// with its status, code, detail and line, and the exact-integer rule. The HTTP path around it
// (202 only after the commit) is pinned end to end in promises.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Issue } from '@aep/protocol';
import { checkEvent, issuesDetail, parseBody } from '../src/ingest.js';

let n = 0;
function ev(extra: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  return {
    aep: '0.1',
    id: `01J00000000000000000000${String(n).padStart(3, '0')}`,
    type: 'progress.status',
    time: '2026-01-01T00:00:00Z',
    source: 'aep://t/agent/a/session/s',
    agent: 'a',
    session: 's',
    seq: n,
    ...extra,
  };
}
const b = (s: string) => Buffer.from(s, 'utf8');
type Ok = { ok: true; events: Array<{ event: Record<string, unknown>; raw: string; bytes: number }> };
type Fail = { ok: false; err: { status: number; body: Record<string, unknown> } };
function ok(r: unknown): Ok['events'] {
  assert.equal((r as Ok).ok, true, JSON.stringify(r));
  return (r as Ok).events;
}
function fail(r: unknown): Fail['err'] {
  assert.equal((r as Fail).ok, false, JSON.stringify(r).slice(0, 300));
  return (r as Fail).err;
}

describe('NDJSON bodies', () => {
  it('each line is stored as received with its byte length; CRLF, a missing last newline and multi-byte text', () => {
    const a = JSON.stringify(ev({ data: { message: 'héllo ✓' } }));
    const c = JSON.stringify(ev());
    const d = JSON.stringify(ev());
    const out = ok(parseBody(b(`${a}\r\n${c}\n${d}`), true, 10));
    assert.deepEqual(
      out.map((e) => e.raw),
      [a, c, d],
    );
    assert.deepEqual(
      out.map((e) => e.bytes),
      [Buffer.byteLength(a), c.length, d.length],
    );
    assert.deepEqual(out[0]!.event, JSON.parse(a));
  });

  it('a line with surrounding JSON whitespace is stored trimmed (its bytes those of the trimmed text)', () => {
    const a = JSON.stringify(ev({ data: { message: 'é' } }));
    const c = JSON.stringify(ev());
    const out = ok(parseBody(b(` ${a}\t\r\n\t${c}  \n`), true, 10));
    assert.deepEqual(
      out.map((e) => e.raw),
      [a, c],
    );
    assert.deepEqual(
      out.map((e) => e.bytes),
      [Buffer.byteLength(a), c.length],
    );
    const spaced = ok(parseBody(b(`${a} `), true, 10));
    assert.equal(spaced[0]!.raw, a);
    const lead = ok(parseBody(b(` ${c}`), true, 10));
    assert.equal(lead[0]!.raw, c);
  });

  it('a line with an interior CR (JSON whitespace) is re-serialized: a stored line never holds a line break', () => {
    const e = ev();
    const text = JSON.stringify(e);
    const withCr = text.replace('"seq":', '"seq":\r');
    for (const body of [withCr, `${withCr}\n`, `${withCr}\r\n`, ` ${withCr}`]) {
      const out = ok(parseBody(b(body), true, 10));
      assert.equal(out[0]!.raw, text, JSON.stringify(body));
      assert.equal(out[0]!.bytes, Buffer.byteLength(text));
    }
  });

  it('blank and whitespace-only lines are skipped, whatever the whitespace; they still count as lines', () => {
    const ws = [
      ' ',
      '\t',
      '\r',
      '\r\t',
      '\r\r',
      '\u000b',
      '\u000c',
      '\u00a0',
      '\ufeff',
      '\u2000',
      '\u2005',
      '\u200a',
      '\u2028',
      '\u2029',
      '\u3000',
      ' \t \u00a0',
    ];
    for (const w of ws) {
      const a = JSON.stringify(ev());
      const out = ok(parseBody(b(`${w}\n${a}\n${w}\n`), true, 10));
      assert.deepEqual(
        out.map((e) => e.raw),
        [a],
        JSON.stringify(w),
      );
    }
    // Not whitespace: the line is parsed, and refused naming its number (blank lines counted).
    for (const w of ['\u200b', '\u1fff', 'x', ' x']) {
      const err = fail(parseBody(b(`${JSON.stringify(ev())}\n\n${w}\n`), true, 10));
      assert.equal(err.status, 400, JSON.stringify(w));
      assert.equal(err.body['line'], 2);
      assert.equal(err.body['error'], 'invalid-event');
      assert.match(String(err.body['detail']), /^line 2 is not valid JSON: /);
    }
    assert.deepEqual(fail(parseBody(b(''), true, 10)), { status: 400, body: { error: 'invalid-event', detail: 'the body holds no Event' } });
    assert.deepEqual(fail(parseBody(b('\n \n\t\r\n'), true, 10)), { status: 400, body: { error: 'invalid-event', detail: 'the body holds no Event' } });
  });

  it('the batch cap: exactly maxEvents pass; one more is 413 naming the line it starts at', () => {
    const lines = Array.from({ length: 4 }, () => JSON.stringify(ev()));
    assert.equal(ok(parseBody(b(lines.slice(0, 3).join('\n')), true, 3)).length, 3);
    assert.equal(ok(parseBody(b(`\n${lines.slice(0, 3).join('\n\n')}\n\n`), true, 3)).length, 3, 'blank lines do not count');
    assert.deepEqual(fail(parseBody(b(`${lines.join('\n')}\n`), true, 3)), {
      status: 413,
      body: { error: 'payload-too-large', detail: 'batch holds more than maxBatchEvents=3 Events', line: 3 },
    });
    assert.deepEqual(fail(parseBody(b(`${lines.join('\n\n')}`), true, 3)), {
      status: 413,
      body: { error: 'payload-too-large', detail: 'batch holds more than maxBatchEvents=3 Events', line: 6 },
    });
  });

  it('refusals name the line: not JSON, not an object, an invalid Event (with its issues), a command', () => {
    const good = JSON.stringify(ev());
    const notJson = fail(parseBody(b(`${good}\n{"aep":`), true, 10));
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body['line'], 1);
    assert.match(String(notJson.body['detail']), /^line 1 is not valid JSON: \S/);
    assert.deepEqual(fail(parseBody(b(`${good}\n[1]`), true, 10)), {
      status: 400,
      body: { error: 'invalid-event', detail: 'line 1 is not a JSON object (AEP-0001 §5)', line: 1 },
    });
    assert.deepEqual(fail(parseBody(b('null'), true, 10)), {
      status: 400,
      body: { error: 'invalid-event', detail: 'line 0 is not a JSON object (AEP-0001 §5)', line: 0 },
    });
    assert.deepEqual(fail(parseBody(b('7'), true, 10)).body['detail'], 'line 0 is not a JSON object (AEP-0001 §5)');
    const bad = { ...ev(), time: 'yesterday' };
    const inv = fail(parseBody(b(`${good}\n${JSON.stringify(bad)}`), true, 10));
    assert.equal(inv.status, 400);
    assert.equal(inv.body['error'], 'invalid-event');
    assert.equal(inv.body['line'], 1);
    const issues = inv.body['issues'] as Issue[];
    assert.ok(issues.length >= 1 && issues.every((i) => i.path === '/time'), JSON.stringify(issues));
    assert.equal(inv.body['detail'], `line 1: ${issuesDetail(issues)}`);
    const command = {
      aep: '0.1',
      id: '01J0000000000000000000CMD1',
      type: 'control.pause',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://t/agent/a',
      agent: 'a',
      session: 's',
    };
    assert.deepEqual(fail(parseBody(b(JSON.stringify(command)), true, 10)), {
      status: 403,
      body: { error: 'unauthorized', detail: 'line 0: commands require the WebSocket binding (AEP-0004 §4.1)', line: 0 },
    });
  });

  it('an Event with many problems: the detail names five, the body carries at most twenty issues', () => {
    const e: Record<string, unknown> = ev();
    for (let i = 0; i < 15; i++) e[`Bad_${i}`] = 1.5;
    const err = fail(parseBody(b(JSON.stringify(e)), true, 10));
    const issues = err.body['issues'] as Issue[];
    assert.equal(issues.length, 20);
    assert.equal(String(err.body['detail']).split('; ').length, 5);
    const single = fail(parseBody(b(JSON.stringify(e)), false, 10));
    assert.equal((single.body['issues'] as Issue[]).length, 20);
    assert.equal(single.body['line'], undefined);
    assert.equal(single.body['detail'], issuesDetail(single.body['issues'] as Issue[]));
  });
});

describe('JSON bodies (one Event or an array)', () => {
  it('one Event: stored as received, trimmed; re-serialized when it has an interior line break', () => {
    const e = ev({ data: { message: 'ünï' } });
    const text = JSON.stringify(e);
    const one = ok(parseBody(b(`\n  ${text}\t\n`), false, 10));
    assert.deepEqual(
      one.map((x) => [x.raw, x.bytes]),
      [[text, Buffer.byteLength(text)]],
    );
    const padded = ok(parseBody(b(`  ${text}\t `), false, 10));
    assert.deepEqual(
      padded.map((x) => [x.raw, x.bytes]),
      [[text, Buffer.byteLength(text)]],
      'surrounding spaces are not part of the Event',
    );
    const pretty = JSON.stringify(e, null, 2);
    const p = ok(parseBody(b(pretty), false, 10));
    assert.equal(p[0]!.raw, text);
    assert.equal(p[0]!.bytes, Buffer.byteLength(text));
    // Insignificant whitespace on one line is kept: the bytes are the sender's.
    const spaced = text.replace(/,"/g, ', "').replace('{', '{ ');
    assert.notEqual(spaced, text);
    assert.deepEqual(
      ok(parseBody(b(spaced), false, 10)).map((x) => [x.raw, x.bytes]),
      [[spaced, Buffer.byteLength(spaced)]],
    );
    const cr = text.replace('{', '{\r');
    assert.equal(ok(parseBody(b(cr), false, 10))[0]!.raw, text);
  });

  it('an array: each element re-serialized; empty, over the cap, a non-object and an invalid element refused', () => {
    const items = [ev(), ev(), ev()];
    const out = ok(parseBody(b(JSON.stringify(items, null, 1)), false, 3));
    assert.deepEqual(
      out.map((x) => x.raw),
      items.map((x) => JSON.stringify(x)),
    );
    assert.deepEqual(
      out.map((x) => x.bytes),
      items.map((x) => JSON.stringify(x).length),
    );
    assert.deepEqual(fail(parseBody(b('[]'), false, 3)), { status: 400, body: { error: 'invalid-event', detail: 'the body holds no Event' } });
    assert.deepEqual(fail(parseBody(b(JSON.stringify([...items, ev()])), false, 3)), {
      status: 413,
      body: { error: 'payload-too-large', detail: 'batch holds more than maxBatchEvents=3 Events' },
    });
    assert.deepEqual(fail(parseBody(b(JSON.stringify([items[0], 'x'])), false, 3)), {
      status: 400,
      body: { error: 'invalid-event', detail: 'element 1 is not a JSON object (AEP-0001 §5)', line: 1 },
    });
    assert.deepEqual(fail(parseBody(b(JSON.stringify([items[0], null])), false, 3)).body['line'], 1);
    assert.deepEqual(fail(parseBody(b(JSON.stringify([items[0], [items[1]]])), false, 3)).body['detail'], 'element 1 is not a JSON object (AEP-0001 §5)');
    const inv = fail(parseBody(b(JSON.stringify([items[0], items[1], { ...items[2], seq: -1 }])), false, 3));
    assert.equal(inv.status, 400);
    assert.equal(inv.body['line'], 2);
    assert.equal(inv.body['detail'], `element 2: ${issuesDetail(inv.body['issues'] as Issue[])}`);
    const command = {
      aep: '0.1',
      id: '01J0000000000000000000CMD2',
      type: 'control.cancel',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://t/agent/a',
      agent: 'a',
      session: 's',
      data: { scope: 'session' },
    };
    assert.deepEqual(fail(parseBody(b(JSON.stringify([command])), false, 3)), {
      status: 403,
      body: { error: 'unauthorized', detail: 'element 0: commands require the WebSocket binding (AEP-0004 §4.1)', line: 0 },
    });
  });

  it('not JSON, not an object, an invalid Event, a command', () => {
    const nj = fail(parseBody(b('{"a":'), false, 3));
    assert.equal(nj.status, 400);
    assert.match(String(nj.body['detail']), /^body is not valid JSON: \S/);
    assert.equal(nj.body['line'], undefined);
    assert.deepEqual(fail(parseBody(b('"x"'), false, 3)), { status: 400, body: { error: 'invalid-event', detail: 'body is not a JSON object (AEP-0001 §5)' } });
    assert.deepEqual(fail(parseBody(b('null'), false, 3)), {
      status: 400,
      body: { error: 'invalid-event', detail: 'body is not a JSON object (AEP-0001 §5)' },
    });
    const command = {
      aep: '0.1',
      id: '01J0000000000000000000CMD3',
      type: 'control.resume',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://t/agent/a',
      agent: 'a',
      session: 's',
    };
    assert.deepEqual(fail(parseBody(b(JSON.stringify(command)), false, 3)), {
      status: 403,
      body: { error: 'unauthorized', detail: 'commands require the WebSocket binding (AEP-0004 §4.1)' },
    });
    const inv = fail(parseBody(b(JSON.stringify({ ...ev(), aep: '9' })), false, 3));
    assert.equal(inv.status, 400);
    assert.equal(inv.body['detail'], issuesDetail(inv.body['issues'] as Issue[]));
  });
});

describe('checkEvent and issuesDetail', () => {
  it('numbers beyond 2^53-1 are refused naming the attribute; 2^53-1 passes; commands only where allowed', () => {
    const max = Number.MAX_SAFE_INTEGER;
    assert.deepEqual(checkEvent(ev({ seq: max, epoch: max, big: max, neg: -max }), false), { ok: true });
    const cases: Array<[Record<string, unknown>, string, string, string]> = [
      [{ seq: max + 1 }, 'envelope.seq', '/seq', `seq must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); ${max + 1} is not`],
      [{ epoch: 1e300 }, 'envelope.epoch', '/epoch', 'epoch must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); 1e+300 is not'],
      [
        { big: -(max + 1) },
        'envelope.ext-value',
        '/big',
        `big must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); ${String(-(max + 1))} is not`,
      ],
      [
        { big: 1.2345678901234568e29 },
        'envelope.ext-value',
        '/big',
        'big must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); 1.2345678901234568e+29 is not',
      ],
      [
        { big: 1.2345678901234567e250 },
        'envelope.ext-value',
        '/big',
        `big must be an exact integer within ±(2^53-1) (Number.MAX_SAFE_INTEGER); ${'1.2345678901234567e+250'.slice(0, 30)} is not`,
      ],
    ];
    for (const [extra, rule, path, message] of cases) {
      const issue = { rule, path, section: 'AEP-0001 §5.1', message };
      assert.deepEqual(checkEvent(ev(extra), false), {
        ok: false,
        status: 400,
        error: 'invalid-event',
        detail: `${rule} at ${path}: ${message}`,
        issues: [issue],
      });
    }
    const long = checkEvent(ev({ big: -1.7976931348623157e308 }), false);
    assert.equal(long.ok, false);
    assert.ok(!long.ok && long.detail.endsWith(`; ${'-1.7976931348623157e+308'.slice(0, 30)} is not`));
    const command = {
      aep: '0.1',
      id: '01J0000000000000000000CMD4',
      type: 'control.pause',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://t/agent/a',
      agent: 'a',
      session: 's',
    };
    assert.deepEqual(checkEvent(command, true), { ok: true });
    assert.deepEqual(checkEvent(command, false), {
      ok: false,
      status: 403,
      error: 'unauthorized',
      detail: 'commands require the WebSocket binding (AEP-0004 §4.1)',
    });
    assert.deepEqual(checkEvent({ ...command, type: 'x.acme.control.reboot' }, false).ok, false);
    assert.deepEqual(checkEvent({ ...ev(), type: 'x.acme.progress.thing' }, false), { ok: true });
  });

  it('issuesDetail: rule, path when there is one, message; at most five, joined by "; "', () => {
    const i = (k: number, path?: string): Issue => ({ rule: `r${k}`, message: `m${k}`, section: 's', ...(path === undefined ? {} : { path }) }) as Issue;
    assert.equal(issuesDetail([]), '');
    assert.equal(issuesDetail([i(1)]), 'r1: m1');
    assert.equal(issuesDetail([i(1, '')]), 'r1: m1');
    assert.equal(issuesDetail([i(1, '/a'), i(2)]), 'r1 at /a: m1; r2: m2');
    assert.equal(issuesDetail([1, 2, 3, 4, 5, 6, 7].map((k) => i(k, `/p${k}`))), 'r1 at /p1: m1; r2 at /p2: m2; r3 at /p3: m3; r4 at /p4: m4; r5 at /p5: m5');
  });
});
