// Issue 11 item 5: the daemon has limits. 1,000 held hooks used to take it from 66 to 499 MB and
// a 4,000-question form was forwarded. Against the real daemon (subprocess) and a real relay:
// beyond --max-held a hook gets no decision at once, memory stays bounded, oversized forms are
// not forwarded, and each refusal is logged with its code.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect as netConnect } from 'node:net';
import { once } from 'node:events';
import { subscribe } from '@aep/client/node';
import type { Subscription, WireEvent } from '@aep/client';
import { DEFAULT_LIMITS } from '@aep/adapter-claude-code';
import { startRelayProcess } from '../../../test/support/cli.js';
import type { DaemonProcess } from './support/daemon.js';
import { hook, logged, startDaemonProcess, stopProcess, waitConnected, waitFor } from './support/daemon.js';
import { writeDrained } from '../../../test/support/socket.js';

const TOKEN = 'limits-test-token-0b77e2';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let sub: Subscription;
const events: WireEvent[] = [];
let daemon: DaemonProcess;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  sub = subscribe({ url: relay.url, token: TOKEN, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  // Default limits: what a user gets.
  daemon = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '120000', '--agent', 'cc-limits']);
  await waitConnected(daemon);
});

after(async () => {
  sub?.close();
  await stopProcess(daemon.child);
  await relay?.stop();
});

/** Resident set size of a process, from /proc (MB). */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS readable');
  return Number(m[1]) / 1024;
}

async function health(): Promise<{ pending: number }> {
  return (await (await fetch(`${daemon.url}/health`, { headers: { authorization: `Bearer ${daemon.secret}` } })).json()) as { pending: number };
}

test('1,000 concurrent blocking hooks: --max-held are held, the rest get no decision at once, and memory stays bounded', async (t) => {
  const pid = daemon.child.pid!;
  const before = rssMb(pid);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const N = 1_000;
  const replies: Promise<{ status: number; body: string }>[] = [];
  for (let i = 0; i < N; i++) {
    const body = JSON.stringify({
      hook_event_name: 'PermissionRequest',
      session_id: `flood-${i % 10}`,
      tool_name: 'Bash',
      tool_input: { command: `make target-${i}`, description: 'x'.repeat(2_000) },
    });
    replies.push(
      new Promise((resolve, reject) => {
        const u = new URL(daemon.url);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path: '/hooks/PermissionRequest',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.secret}`, 'content-length': String(Buffer.byteLength(body)) },
          },
          (res) => {
            let text = '';
            res.on('data', (b: Buffer) => {
              text += b.toString('utf8');
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    );
  }
  // Everything over the limit is answered (no decision) without waiting for any person.
  const settled: { status: number; body: string }[] = [];
  for (const r of replies) void r.then((v) => settled.push(v));
  await waitFor(() => (settled.length >= N - DEFAULT_LIMITS.maxHeld ? true : undefined), `${N - DEFAULT_LIMITS.maxHeld} immediate answers`, 60_000);
  assert.ok(
    settled.every((r) => r.status === 200 && r.body === '{}'),
    'no decision: Claude Code asks in its own dialog',
  );
  assert.equal((await health()).pending, DEFAULT_LIMITS.maxHeld, 'exactly --max-held requests are pending');
  const requested = events.filter((e) => e.type === 'attention.requested' && e.agent === 'cc-limits').length;
  assert.ok(requested <= DEFAULT_LIMITS.maxHeld, `only held requests were forwarded (${requested})`);
  const after = rssMb(pid);
  t.diagnostic(`daemon RSS ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB with ${DEFAULT_LIMITS.maxHeld} held + ${N - DEFAULT_LIMITS.maxHeld} refused`);
  assert.ok(after - before < 120, `RSS grew ${(after - before).toFixed(0)} MB (was +433 MB before the limit)`);
  await logged(daemon, /AEP_CC_TOO_MANY_HELD: 64 hooks already held \(--max-held 64\): not forwarded, no decision/);
  // Releasing them: the sessions end, the held hooks get no decision.
  for (let i = 0; i < 10; i++) await hook(daemon, 'SessionEnd', { hook_event_name: 'SessionEnd', session_id: `flood-${i}`, reason: 'other' });
  const all = await Promise.all(replies);
  assert.equal(all.length, N);
  assert.equal((await health()).pending, 0);
  agent.destroy();
});

test('a 4,000-question AskUserQuestion and a 500-field elicitation are not forwarded; the hook gets no decision at once', async () => {
  const questions = Array.from({ length: 4_000 }, (_, i) => ({ question: `Question ${i}?`, header: `Q${i}`, options: [{ label: 'yes' }, { label: 'no' }] }));
  const r = await hook(daemon, 'PreToolUse', {
    hook_event_name: 'PreToolUse',
    session_id: 'huge-form',
    tool_name: 'AskUserQuestion',
    tool_use_id: 'toolu_huge',
    tool_input: { questions },
  });
  assert.deepEqual([r.status, r.body], [200, {}]);
  const properties = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, { type: 'string', title: `Field ${i}` }]));
  const e = await hook(daemon, 'Elicitation', {
    hook_event_name: 'Elicitation',
    session_id: 'huge-form',
    mcp_server_name: 'big',
    mode: 'form',
    message: 'Fill',
    requested_schema: { type: 'object', properties },
  });
  assert.deepEqual([e.status, e.body], [200, {}]);
  await waitFor(() => events.find((ev) => ev.type === 'tool.requested' && ev.session === 'huge-form'), 'the tool.requested (lifecycle is still recorded)');
  await hook(daemon, 'Stop', { hook_event_name: 'Stop', session_id: 'huge-form' });
  assert.equal(
    events.some((ev) => ev.type === 'attention.requested' && ev.session === 'huge-form'),
    false,
    'no form was forwarded',
  );
  await logged(daemon, /AEP_CC_TOO_MANY_QUESTIONS: AskUserQuestion with 4000 questions \(--max-questions 16\)/);
  await logged(daemon, /AEP_CC_TOO_MANY_FIELDS: elicitation with 500 fields \(--max-fields 64\)/);
  // A normal form in the same session is still forwarded.
  const small = hook(
    daemon,
    'PreToolUse',
    {
      hook_event_name: 'PreToolUse',
      session_id: 'huge-form',
      tool_name: 'AskUserQuestion',
      tool_use_id: 'toolu_small',
      tool_input: { questions: questions.slice(0, 2) },
    },
    60_000,
  );
  await waitFor(() => events.find((ev) => ev.type === 'attention.requested' && ev.session === 'huge-form'), 'the small form');
  await hook(daemon, 'PostToolUse', {
    hook_event_name: 'PostToolUse',
    session_id: 'huge-form',
    tool_name: 'AskUserQuestion',
    tool_use_id: 'toolu_small',
    tool_input: {},
    tool_response: {},
  });
  assert.deepEqual((await small).body, {});
});

test('a hook over --max-hook-bytes gets 413 with its code (no decision)', async () => {
  const big = await hook(daemon, 'PreToolUse', {
    hook_event_name: 'PreToolUse',
    session_id: 'big-body',
    tool_name: 'Write',
    tool_input: { file_path: '/tmp/x', content: 'x'.repeat(DEFAULT_LIMITS.maxHookBytes) },
  });
  assert.equal(big.status, 413);
  assert.deepEqual(big.body, { error: 'AEP_CC_HOOK_TOO_LARGE', message: `hook body exceeds ${DEFAULT_LIMITS.maxHookBytes} bytes (--max-hook-bytes)` });
  await logged(daemon, /AEP_CC_HOOK_TOO_LARGE: hook body over 1048576 bytes/);
});

for (const framing of ['content-length', 'chunked'] as const) {
  test(`a hook client that writes its whole oversize body (${framing}) before reading still gets its 413 (the close is not a reset)`, async () => {
    // Planted: the endpoint answered 413 at once and closed the socket with the client's bytes
    // still arriving, so the kernel reset the connection; the client's write failed (EPIPE) and it
    // lost the answer (seen as \`fetch failed\` in the --max-hook-bytes test on a loaded machine).
    const MiB = 1024 * 1024;
    const total = 8 * MiB;
    const url = new URL(daemon.url);
    const socket = netConnect({ host: url.hostname, port: Number(url.port) });
    await once(socket, 'connect');
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const length = framing === 'content-length' ? `Content-Length: ${total}` : 'Transfer-Encoding: chunked';
    socket.write(
      `POST /hooks/PreToolUse HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${daemon.secret}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`,
    );
    socket.pause(); // reads nothing until the whole body is written
    const chunk = Buffer.alloc(MiB, 0x20);
    let sent = 0;
    while (!socket.destroyed && sent < total) {
      await writeDrained(socket, framing === 'chunked' ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
      sent += chunk.length;
    }
    if (framing === 'chunked' && !socket.destroyed) await writeDrained(socket, Buffer.from('0\r\n\r\n'));
    assert.equal(sent, total, 'every write went through: the daemon did not reset the connection');
    let answer = '';
    socket.on('data', (b: Buffer) => (answer += b.toString('latin1')));
    socket.resume();
    await closed;
    assert.match(answer, /^HTTP\/1\.1 413 /, answer.slice(0, 200));
    assert.match(answer, /AEP_CC_HOOK_TOO_LARGE/);
  });
}
