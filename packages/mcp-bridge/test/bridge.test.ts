// In-process tests of the proxy core (McpBridge + LineSplitter): framing properties and the
// race/withdrawal state machine, with a scripted AEP port standing in for the relay side (the
// real relay path is covered end to end in elicitation.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { LineSplitter, McpBridge, REQUEST_CANCELLED_CODE, checkCancel, defaultAgentName } from '@aep/mcp-bridge';
import type { AepPort, AskHandle, AskOutcome, FormAsk, SteerHandler, UrlAsk } from '@aep/mcp-bridge';
import type { WireEvent } from '@aep/client';

function sink(): { stream: PassThrough; text: () => string; lines: () => unknown[] } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (b: Buffer) => chunks.push(b));
  const text = () => Buffer.concat(chunks).toString('utf8');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as unknown),
  };
}

class ScriptedAep implements AepPort {
  readonly agent = 'a';
  readonly capture = 'full' as const;
  up = true;
  asks: { kind: 'form' | 'url'; ask: FormAsk | UrlAsk; settle: (o: AskOutcome) => void; withdrawn?: string }[] = [];
  subject: string | undefined;
  redact(t: string): string {
    return t;
  }
  available(): boolean {
    return this.up;
  }
  urlOk = true;
  urlCapable(): boolean {
    return this.urlOk;
  }
  setSubject(s: string | undefined): void {
    this.subject = s;
  }
  steer: SteerHandler | undefined;
  onSteer(h: SteerHandler): void {
    this.steer = h;
  }
  private handle(kind: 'form' | 'url', ask: FormAsk | UrlAsk): AskHandle {
    let settle!: (o: AskOutcome) => void;
    const outcome = new Promise<AskOutcome>((r) => {
      settle = r;
    });
    const entry: (typeof this.asks)[number] = { kind, ask, settle };
    this.asks.push(entry);
    return {
      id: `req-${this.asks.length}`,
      outcome,
      withdraw: (reason) => {
        entry.withdrawn = reason;
        settle({ action: 'cancel', why: 'dismissed' });
      },
    };
  }
  askForm(ask: FormAsk): AskHandle {
    return this.handle('form', ask);
  }
  askUrl(ask: UrlAsk): AskHandle {
    return this.handle('url', ask);
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const line = (o: unknown) => Buffer.from(JSON.stringify(o) + '\n');
const ELICIT = (id: number | string, extra: Record<string, unknown> = {}) =>
  line({
    jsonrpc: '2.0',
    id,
    method: 'elicitation/create',
    params: { message: 'Name?', requestedSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, ...extra },
  });
const INIT = (caps: Record<string, unknown>) =>
  line({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: caps, clientInfo: { name: 'h', version: '1' } } });

function setup(hostCaps: Record<string, unknown>, aep?: AepPort, maxPending?: number) {
  const toServer = sink();
  const toHost = sink();
  const bridge = new McpBridge({
    toServer: toServer.stream,
    toHost: toHost.stream,
    ...(aep ? { aep } : {}),
    timeoutMs: 60_000,
    ...(maxPending ? { maxPending } : {}),
  });
  bridge.fromHost(INIT(hostCaps));
  return { bridge, toServer, toHost };
}

test('property: the splitter re-emits exactly the input bytes, whatever the chunking', () => {
  fc.assert(
    fc.property(
      fc.array(fc.string({ maxLength: 40 }), { maxLength: 20 }),
      fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
      (parts, cuts) => {
        const input = Buffer.from(parts.join('\n'), 'utf8');
        const out: Buffer[] = [];
        const s = new LineSplitter((l) => out.push(Buffer.from(l)));
        let i = 0;
        let k = 0;
        while (i < input.length) {
          const n = cuts[k++ % cuts.length] ?? 1;
          s.push(input.subarray(i, i + n));
          i += n;
        }
        s.end();
        assert.ok(Buffer.concat(out).equals(input));
        // Every emitted piece but the last ends with \n and contains no other \n.
        for (const [j, l] of out.entries()) {
          const nl = l.indexOf(10);
          if (j < out.length - 1 || l[l.length - 1] === 10) assert.equal(nl, l.length - 1);
        }
      },
    ),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('property: without elicitations both directions pass byte-for-byte, whatever the chunking', () => {
  const msg = fc
    .oneof(
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.nat(), method: fc.constantFrom('tools/call', 'ping', 'resources/read'), params: fc.object() }),
      fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constantFrom('notifications/progress', 'notifications/message'), params: fc.object() }),
      fc.record({ jsonrpc: fc.constant('2.0'), id: fc.nat(), result: fc.object() }),
    )
    .map((m) => JSON.stringify(m, null, 0) + '\n');
  fc.assert(
    fc.property(fc.array(msg, { maxLength: 12 }), fc.integer({ min: 1, max: 64 }), (msgs, cut) => {
      const toServer = sink();
      const toHost = sink();
      const bridge = new McpBridge({ toServer: toServer.stream, toHost: toHost.stream });
      const bytes = Buffer.from(msgs.join(''), 'utf8');
      for (let i = 0; i < bytes.length; i += cut) {
        bridge.fromHost(bytes.subarray(i, i + cut));
        bridge.fromServer(bytes.subarray(i, i + cut));
      }
      assert.equal(toServer.text(), bytes.toString('utf8'));
      assert.equal(toHost.text(), bytes.toString('utf8'));
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 200) },
  );
});

test('initialize keeps every other capability and the host flavour of elicitation; {} means form only', () => {
  const { toServer } = setup({ elicitation: { form: { applyDefaults: true } }, sampling: {} });
  const sent = toServer.lines()[0] as { params: { capabilities: Record<string, unknown> } };
  assert.deepEqual(sent.params.capabilities, { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {} });
});

test('host error while the AEP question is open: keep waiting for AEP; the server gets the AEP answer', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer, toHost } = setup({ elicitation: {} }, aep);
  bridge.fromServer(ELICIT(5));
  assert.equal(aep.asks.length, 1);
  assert.equal(toHost.lines().length, 1, 'the host is asked too');
  bridge.fromHost(line({ jsonrpc: '2.0', id: 5, error: { code: -32603, message: 'dialog crashed' } }));
  assert.equal(toServer.lines().length, 1, 'the host error is not forwarded');
  aep.asks[0]?.settle({ action: 'accept', content: { n: 4 } });
  await tick();
  assert.deepEqual(toServer.lines()[1], { jsonrpc: '2.0', id: 5, result: { action: 'accept', content: { n: 4 } } });
  assert.equal(toHost.lines().length, 1, 'no cancellation sent to a host that already gave up');
  assert.equal(bridge.pendingCount(), 0);
});

test('host answers first: forwarded unchanged, AEP withdrawn, a later AEP outcome is ignored', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer } = setup({ elicitation: { form: {} } }, aep);
  bridge.fromServer(ELICIT('x-1'));
  const hostAnswer = '{"jsonrpc":"2.0","id":"x-1","result":{"action":"decline"}}\n';
  bridge.fromHost(Buffer.from(hostAnswer));
  assert.equal(aep.asks[0]?.withdrawn, 'answered in the MCP host');
  assert.ok(toServer.text().endsWith(hostAnswer));
  await tick();
  assert.equal(toServer.lines().length, 2, 'exactly one result reached the server');
  assert.equal(bridge.stats.answeredViaHost, 1);
});

test('AEP answers first: one result, host told to stop, the host late answer dropped', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer, toHost } = setup({ elicitation: { form: {} } }, aep);
  bridge.fromServer(ELICIT(3));
  aep.asks[0]?.settle({ action: 'decline' });
  await tick();
  assert.deepEqual(toHost.lines()[1], { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'answered through AEP' } });
  bridge.fromHost(line({ jsonrpc: '2.0', id: 3, result: { action: 'accept', content: { n: 1 } } }));
  assert.deepEqual(toServer.lines().slice(1), [{ jsonrpc: '2.0', id: 3, result: { action: 'decline' } }]);
});

test('the server cancels its elicitation: AEP withdrawn, nothing answered, host informed only if asked', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer, toHost } = setup({}, aep);
  bridge.fromServer(ELICIT(2));
  bridge.fromServer(line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'timeout' } }));
  assert.equal(aep.asks[0]?.withdrawn, 'cancelled by the MCP server');
  await tick();
  assert.equal(toServer.lines().length, 1, 'only the initialize');
  assert.equal(toHost.lines().length, 0, 'the host never had the request');
});

test('concurrent elicitations settle independently; numeric and string ids do not collide', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer } = setup({}, aep);
  bridge.fromServer(ELICIT(1));
  bridge.fromServer(ELICIT('1'));
  aep.asks[1]?.settle({ action: 'accept', content: { n: 2 } });
  aep.asks[0]?.settle({ action: 'cancel', why: 'timeout' });
  await tick();
  assert.deepEqual(toServer.lines().slice(1), [
    { jsonrpc: '2.0', id: '1', result: { action: 'accept', content: { n: 2 } } },
    { jsonrpc: '2.0', id: 1, result: { action: 'cancel' } },
  ]);
});

test('relay down: host without elicitation -> decline; AEP failure mid-way with no host -> decline', async () => {
  const aep = new ScriptedAep();
  aep.up = false;
  const { bridge, toServer } = setup({}, aep);
  bridge.fromServer(ELICIT(1));
  assert.deepEqual(toServer.lines()[1], { jsonrpc: '2.0', id: 1, result: { action: 'decline' } });
  aep.up = true;
  bridge.fromServer(ELICIT(2));
  aep.asks[0]?.settle({ action: 'unavailable', reason: 'emitter closed' });
  await tick();
  assert.deepEqual(toServer.lines()[2], { jsonrpc: '2.0', id: 2, result: { action: 'decline' } });
});

test('an invalid elicitation request is answered with a JSON-RPC error, never left hanging', () => {
  const { bridge, toServer } = setup({}, new ScriptedAep());
  bridge.fromServer(line({ jsonrpc: '2.0', id: 4, method: 'elicitation/create', params: { requestedSchema: 42 } }));
  const r = toServer.lines()[1] as { id: number; error: { code: number; message: string } };
  assert.equal(r.id, 4);
  assert.equal(r.error.code, -32602);
});

test('shutdown: every open elicitation gets cancel and its AEP question is withdrawn', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer } = setup({}, aep);
  bridge.fromServer(ELICIT(8));
  bridge.close();
  await tick();
  assert.equal(aep.asks[0]?.withdrawn, 'the MCP bridge is shutting down');
  assert.deepEqual(toServer.lines()[1], { jsonrpc: '2.0', id: 8, result: { action: 'cancel' } });
});

test('the server name becomes the requests subject', () => {
  const aep = new ScriptedAep();
  const { bridge } = setup({}, aep);
  bridge.fromServer(line({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'files', version: '1' } } }));
  assert.equal(aep.subject, 'mcp:files');
});

test('an elicitation written with the JSON escape "\\/" is still intercepted', () => {
  const aep = new ScriptedAep();
  const { bridge, toHost } = setup({}, aep);
  bridge.fromServer(
    Buffer.from('{"jsonrpc":"2.0","id":11,"method":"elicitation\\/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}\n'),
  );
  assert.equal(aep.asks.length, 1);
  assert.equal(toHost.text(), '', 'not forwarded to a host without elicitation');
});

test('an AEP side that throws never breaks the proxy: the elicitation falls back (decline without host)', () => {
  const aep = new ScriptedAep();
  aep.askForm = () => {
    throw new Error('emit after close()');
  };
  const { bridge, toServer, toHost } = setup({}, aep);
  bridge.fromServer(ELICIT(6));
  assert.deepEqual(toServer.lines()[1], { jsonrpc: '2.0', id: 6, result: { action: 'decline' } });
  bridge.fromServer(line({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'still flowing' } }));
  assert.equal(toHost.lines().length, 1);
});

test('URL mode below redacted is not raised over AEP: the host asks if it can, else decline', () => {
  const aep = new ScriptedAep();
  aep.urlOk = false;
  const url = (id: number) =>
    line({
      jsonrpc: '2.0',
      id,
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in', url: 'https://example.com/x', elicitationId: `e${id}` },
    });
  const a = setup({ elicitation: { form: {} } }, aep);
  a.bridge.fromServer(url(1));
  assert.deepEqual(a.toServer.lines()[1], { jsonrpc: '2.0', id: 1, result: { action: 'decline' } }, 'a form-only host cannot take URL mode');
  const b = setup({ elicitation: { url: {} } }, aep);
  b.bridge.fromServer(url(2));
  assert.equal(b.toHost.lines().length, 1, 'a URL-capable host gets it unchanged');
  assert.equal(aep.asks.length, 0);
});

test('default agent names come from the server command', () => {
  assert.equal(defaultAgentName('node', ['./servers/Files.mjs']), 'mcp-files');
  assert.equal(defaultAgentName('/usr/bin/python3', ['-u', 'weather_server.py']), 'mcp-weather_server');
  assert.equal(defaultAgentName('npx', ['-y', '@scope/some-mcp']), 'mcp-some-mcp');
  assert.equal(defaultAgentName('/opt/bin/github-mcp', ['stdio']), 'mcp-github-mcp');
  assert.equal(defaultAgentName('node', []), 'mcp-node');
});

test('at most maxPending elicitations are open through AEP; the next one falls back', () => {
  const aep = new ScriptedAep();
  const { bridge, toServer } = setup({}, aep, 2);
  bridge.fromServer(ELICIT(1));
  bridge.fromServer(ELICIT(2));
  bridge.fromServer(ELICIT(3));
  assert.equal(aep.asks.length, 2);
  assert.deepEqual(toServer.lines()[1], { jsonrpc: '2.0', id: 3, result: { action: 'decline' } });
});

// ---- steering (control.cancel, README "Steering") ----------------------------------------------

const CALL = (id: number | string, name = 'slow') => line({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

test('steering: cancel answers open elicitations "cancel", cancels host requests at the server and answers them to the host', async () => {
  const aep = new ScriptedAep();
  const { bridge, toServer, toHost } = setup({ elicitation: { form: {} } }, aep);
  assert.ok(aep.steer, 'the bridge registered its steering handler');
  bridge.fromHost(CALL(1));
  bridge.fromHost(CALL('two', 'ask'));
  bridge.fromHost(line({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }));
  assert.equal(bridge.inflightCount(), 2, 'requests tracked, notifications not');
  bridge.fromServer(ELICIT(7));
  const report = aep.steer?.({ reason: 'wrong repository' });
  assert.deepEqual(report, { elicitations: 1, requests: 2 });
  assert.equal(aep.asks[0]?.withdrawn, 'cancelled by a person through AEP');
  const server = toServer.lines().slice(4); // after initialize, two calls and a notification
  assert.deepEqual(server, [
    { jsonrpc: '2.0', id: 7, result: { action: 'cancel' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'cancelled by a person through AEP: wrong repository' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'two', reason: 'cancelled by a person through AEP: wrong repository' } },
  ]);
  const host = toHost.lines();
  assert.deepEqual(host.slice(1), [
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'elicitation withdrawn by the bridge' } },
    { jsonrpc: '2.0', id: 1, error: { code: REQUEST_CANCELLED_CODE, message: 'Request cancelled by a person through AEP: wrong repository' } },
    { jsonrpc: '2.0', id: 'two', error: { code: REQUEST_CANCELLED_CODE, message: 'Request cancelled by a person through AEP: wrong repository' } },
  ]);
  // The server's late response to a cancelled request is dropped (the host already has its answer).
  bridge.fromServer(line({ jsonrpc: '2.0', id: 1, result: { content: [] } }));
  assert.equal(toHost.lines().length, host.length);
  // The server keeps serving: a new request and its response pass as usual.
  bridge.fromHost(CALL(3, 'echo'));
  bridge.fromServer(line({ jsonrpc: '2.0', id: 3, result: { content: [] } }));
  assert.deepEqual(toHost.lines().at(-1), { jsonrpc: '2.0', id: 3, result: { content: [] } });
  assert.equal(bridge.inflightCount(), 0);
  assert.deepEqual(aep.steer?.({}), { elicitations: 0, requests: 0 }, 'nothing left in flight');
});

test('steering: answered, host-cancelled and initialize requests are not cancelled', () => {
  const aep = new ScriptedAep();
  const toServer = sink();
  const toHost = sink();
  const bridge = new McpBridge({ toServer: toServer.stream, toHost: toHost.stream, aep });
  bridge.fromHost(INIT({}));
  bridge.fromHost(CALL(1));
  bridge.fromHost(CALL(2));
  bridge.fromServer(line({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } }));
  bridge.fromHost(line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }));
  assert.deepEqual(aep.steer?.({}), { elicitations: 0, requests: 0 });
  assert.ok(!toServer.text().includes('"requestId":0'), 'initialize is never cancelled');
});

test('steering: without an AEP side nothing is tracked (pure pass-through)', () => {
  const toServer = sink();
  const toHost = sink();
  const bridge = new McpBridge({ toServer: toServer.stream, toHost: toHost.stream });
  bridge.fromHost(CALL(1));
  assert.equal(bridge.inflightCount(), 0);
});

test('checkCancel: session scope honoured with its reason; run scope, bad scope and another session refused', () => {
  const cmd = (data: unknown, session = 's'): WireEvent =>
    ({
      aep: '0.1',
      id: 'c',
      type: 'control.cancel',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://h/agent/x',
      agent: 'x',
      session,
      data,
    }) as unknown as WireEvent;
  assert.deepEqual(checkCancel(cmd({ scope: 'session', reason: 'stop' }), 's'), { ok: true, reason: 'stop' });
  assert.deepEqual(checkCancel(cmd({ scope: 'session' }), 's'), { ok: true });
  const rule = (v: ReturnType<typeof checkCancel>) => (v.ok ? 'ok' : v.issues.map((i) => `${i.rule} ${i.path}`).join());
  assert.equal(rule(checkCancel(cmd({ scope: 'run' }), 's')), 'control.cancel.unknown-run /run');
  assert.equal(rule(checkCancel(cmd({}), 's')), 'control.cancel.scope /data/scope');
  assert.equal(rule(checkCancel(cmd({ scope: 'all-of-it' }), 's')), 'control.cancel.scope /data/scope');
  assert.equal(rule(checkCancel(cmd({ scope: 'session' }, 'other'), 's')), 'control.cancel.wrong-session /session');
  const bad = checkCancel(cmd({ scope: 'secret-scope-value' }), 's');
  assert.ok(!bad.ok && !JSON.stringify(bad.issues).includes('secret-scope-value'), 'messages never repeat what was sent');
});
