// The inbox's command channel (AEP-0004 §4, the sender algorithm): `@aep/client`'s CommandSender over a
// standard WebSocket (what a browser has), driven here by a scripted stand-in for the browser's
// WebSocket API: hello first, subscribe to the session before sending, silence → resend of the
// same bytes, ack / nack / cause-matched refusal settle it, bounded retries end in a local
// timeout, and every failure is an outcome, never a throw. The real relay path is covered by the
// e2e tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlChannel } from '../src/control.js';
import type { ControlOptions } from '../src/control.js';

type Handler = ((ev: { data?: unknown }) => void) | null;

/** Minimal browser-WebSocket stand-in; `script` answers each frame the page sends. */
class ScriptedSocket {
  static last: ScriptedSocket | null = null;
  static script: (frame: Record<string, unknown>, sock: ScriptedSocket, raw: string) => void = () => {};
  readonly sent: string[] = [];
  readonly url: URL;
  readyState = 0;
  bufferedAmount = 0;
  onopen: Handler = null;
  onmessage: Handler = null;
  onerror: Handler = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  constructor(url: string) {
    this.url = new URL(url);
    ScriptedSocket.last = this;
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.({});
    }, 0);
  }
  send(raw: string): void {
    this.sent.push(raw);
    const frame = JSON.parse(raw) as Record<string, unknown>;
    setTimeout(() => ScriptedSocket.script(frame, this, raw), 0);
  }
  reply(frame: Record<string, unknown>): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  close(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setTimeout(() => this.onclose?.({ code: 1000 }), 0);
  }
}
const WebSocket = ScriptedSocket as unknown as ControlOptions['WebSocket'];

function handshake(frame: Record<string, unknown>, sock: ScriptedSocket): boolean {
  if (frame['type'] === 'hello') {
    sock.reply({ type: 'hello', versions: ['0.1'], role: 'both', capabilities: { roster: {} } });
    return true;
  }
  if (frame['type'] === 'subscribe') {
    sock.reply({ type: 'subscribed', id: frame['id'] });
    return true;
  }
  return false;
}

const cmd = (id: string) => ({
  aep: '0.1',
  id,
  type: 'control.attention.respond',
  subject: 'R1',
  cause: 'R1',
  time: '2026-08-01T09:00:00Z',
  source: 'aep://h/agent/aep-inbox',
  agent: 'aep-inbox',
  session: 's1',
  data: { answer: { option: 'allow' } },
});

test('hello, then subscribe to the session, then the command; the token rides the socket URL only', async () => {
  let commands = 0;
  ScriptedSocket.script = (f, s) => {
    if (handshake(f, s)) return;
    commands++;
    s.reply({ aep: '0.1', id: 'A1', type: 'control.accepted', source: 'aep://h/agent/a/session/s1', agent: 'a', session: 's1', seq: 3, cause: f['id'] });
  };
  const ch = new ControlChannel({ WebSocket, base: 'http://127.0.0.1:1/', token: 'tok-123' });
  const out = await ch.send(cmd('C1'));
  assert.equal(out.status, 'accepted');
  const sock = ScriptedSocket.last!;
  assert.equal(sock.url.searchParams.get('access_token'), 'tok-123');
  assert.equal(sock.url.protocol, 'ws:');
  assert.deepEqual(
    sock.sent.map((r) => (JSON.parse(r) as { type: string }).type),
    ['hello', 'subscribe', 'control.attention.respond'],
  );
  assert.deepEqual(JSON.parse(sock.sent[1] ?? '{}').filter, { session: 's1' });
  assert.equal(commands, 1);
  ch.close();
});

test('silence: the same bytes are resent, and the late ack settles it', async () => {
  let seen = 0;
  ScriptedSocket.script = (f, s) => {
    if (handshake(f, s)) return;
    if (++seen === 2)
      s.reply({
        type: 'control.rejected',
        id: 'N1',
        source: 'x',
        agent: 'a',
        session: 's1',
        seq: 4,
        cause: f['id'],
        data: { reason: 'invalid', detail: 'nope' },
      });
  };
  const ch = new ControlChannel({ WebSocket, base: 'http://127.0.0.1:1/', token: 't', ackWindowMs: 30 });
  const out = await ch.send(cmd('C2'));
  assert.equal(out.status, 'rejected');
  assert.equal(out.status === 'rejected' ? out.reason : '', 'invalid');
  assert.equal(out.status === 'rejected' ? out.detail : '', 'nope', "the emitter's detail reaches the inbox (issue 20)");
  const cmds = ScriptedSocket.last!.sent.filter((r) => r.includes('control.attention.respond'));
  assert.equal(cmds.length, 2);
  assert.equal(cmds[0], cmds[1], 'a retry is byte-identical (same id, AEP-0004 §2)');
  ch.close();
});

test('a cause-matched relay error frame is the refusal; bounded retries end in timeout', async () => {
  ScriptedSocket.script = (f, s) => {
    if (handshake(f, s)) return;
    if (f['id'] === 'C3') s.reply({ type: 'error', cause: 'C3', code: 'no-route', detail: 'no connected emitter' });
  };
  const ch = new ControlChannel({ WebSocket, base: 'https://relay.example/', token: 't', ackWindowMs: 20, retries: 2 });
  const refused = await ch.send(cmd('C3'));
  assert.deepEqual(refused, { status: 'refused', code: 'no-route', detail: 'no connected emitter' });
  assert.equal(ScriptedSocket.last!.url.protocol, 'wss:');
  const silent = await ch.send(cmd('C4'));
  assert.equal(silent.status, 'timeout');
  assert.equal(ScriptedSocket.last!.sent.filter((r) => r.includes('"C4"')).length, 3); // first try + 2 retries
  ch.close();
});

test('a refused hello (or a closed socket) is reported, never thrown', async () => {
  ScriptedSocket.script = (f, s) => {
    if (f['type'] === 'hello') s.reply({ type: 'error', code: 'version-unsupported', versions: ['0.1'] });
  };
  const ch = new ControlChannel({ WebSocket, base: 'http://127.0.0.1:1/', token: 't' });
  const out = await ch.send(cmd('C5'));
  assert.equal(out.status, 'error');
  assert.match(out.status === 'error' ? out.detail : '', /version-unsupported/);
});

test('a roster reply: live claims and (contract C4) the offline requests', async () => {
  const { acceptsOf } = await import('../src/control.js');
  ScriptedSocket.script = (f, s) => {
    if (handshake(f, s)) return;
    if (f['type'] === 'roster') {
      s.reply({
        type: 'roster',
        id: f['id'],
        entries: [{ session: 's1', agent: 'a', control: { accepts: ['control.attention.respond', 'control.cancel'] } }],
        offline: [{ request: 'R1', session: 's2', agent: 'b', source: 'aep://h/agent/b', since: '2026-08-01T09:00:00Z' }],
      });
    }
  };
  const ch = new ControlChannel({ WebSocket, base: 'http://127.0.0.1:1/', token: 't' });
  const snap = await ch.roster();
  assert.deepEqual(snap?.offline, [{ request: 'R1', session: 's2', agent: 'b', source: 'aep://h/agent/b', since: '2026-08-01T09:00:00Z' }]);
  assert.deepEqual([...acceptsOf(snap?.entries ?? [], 's1')].sort(), ['control.attention.respond', 'control.cancel']);
  ch.close();
  // A relay without C4 sends no `offline`: nothing is marked offline.
  ScriptedSocket.script = (f, s) => {
    if (handshake(f, s)) return;
    if (f['type'] === 'roster') s.reply({ type: 'roster', id: f['id'], entries: [] });
  };
  const old = new ControlChannel({ WebSocket, base: 'http://127.0.0.1:1/', token: 't' });
  assert.deepEqual(await old.roster(), { entries: [], offline: [] });
  old.close();
  // Two claimants: only what both declare (the relay refuses `ambiguous` anyway).
  assert.deepEqual(
    [
      ...acceptsOf(
        [
          { session: 's', control: { accepts: ['control.pause', 'control.cancel'] } },
          { session: 's', control: { accepts: ['control.cancel'] } },
        ],
        's',
      ),
    ],
    ['control.cancel'],
  );
  assert.deepEqual([...acceptsOf([{ session: 'other', control: { accepts: ['control.cancel'] } }], 's')], []);
});
