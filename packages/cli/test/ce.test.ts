// `aep ce encode|decode` as a black box (the live forwarder and `ce serve` are in ce-live.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';
import { checkCloudEvent10 } from '../../bridges/test/support/checkers.js';

const ev = {
  aep: '0.1',
  id: '01K0CLICE',
  type: 'tool.requested',
  subject: 'Read',
  time: '2026-08-01t09:00:00.1+01:00',
  source: 'aep://h/agent/bot/session/s',
  agent: 'bot',
  session: 's',
  seq: 3,
  acmezone: 'z',
  data: { tool: { name: 'Read' } },
};

test('--help of ce and of each subcommand documents it with examples', async () => {
  for (const args of [['ce'], ['ce', 'encode'], ['ce', 'decode'], ['ce', 'serve']]) {
    const r = await runAep([...args, '--help']);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.stdout, new RegExp(`Usage: aep ${args.join(' ')}`));
    assert.ok(r.stdout.includes('Examples:'), args.join(' '));
    assert.ok(r.stdout.includes('Exit codes'), args.join(' '));
  }
  const top = await runAep(['ce', '--help']);
  for (const s of ['--sink <url>', '--mode <mode>', '--capture <level>', '--state <path>', '--relay <url>', 'encode', 'decode', 'serve'])
    assert.ok(top.stdout.includes(s), s);
  const serve = await runAep(['ce', 'serve', '--help']);
  for (const s of ['--port <n>', '--host <addr>', '--max-body', '--max-batch', '--relay URL', 'application/cloudevents-batch+json', 'AEP_CE_UNSUPPORTED_MODE'])
    assert.ok(serve.stdout.includes(s), s);
});

test('aep ce alone is a usage error (exit 2) naming the choices', async () => {
  const r = await runAep(['ce']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /AEP_CLI_USAGE: give a subcommand \(encode, decode, serve\) or --sink URL/);
});

test('encode then decode gives the event back; the CloudEvent is CE 1.0 JSON with time verbatim', async () => {
  const e = await runAep(['ce', 'encode'], JSON.stringify(ev) + '\n');
  assert.equal(e.code, 0, e.stderr);
  const c = JSON.parse(e.stdout) as Record<string, unknown>;
  assert.deepEqual(checkCloudEvent10(c), []);
  assert.equal(c['time'], ev.time);
  assert.equal(c['acmezone'], 'z');
  const d = await runAep(['ce', 'decode'], e.stdout);
  assert.equal(d.code, 0, d.stderr);
  assert.deepEqual(JSON.parse(d.stdout), ev);
});

test('decode: foreign types give null with a warning (exit 0); illegal and core-colliding names are dropped with warnings', async () => {
  const lines = [
    JSON.stringify({ specversion: '1.0', id: 'g', source: 'https://github.com/x', type: 'com.github.push' }),
    JSON.stringify({
      specversion: '1.0',
      id: 'x',
      source: 'aep://h/agent/bot/session/s',
      type: 'dev.aep.tool.requested',
      time: '2026-08-01T09:00:00Z',
      aepversion: '0.1',
      aepagentid: 'bot',
      aepsessionid: 's',
      aepsequence: 1,
      session: 'evil',
      aep_bad: 1,
      aepfuture: 'kept',
    }),
  ];
  const r = await runAep(['ce', 'decode'], lines.join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim().split('\n');
  assert.equal(out[0], 'null');
  assert.deepEqual(JSON.parse(out[1]!), {
    aep: '0.1',
    id: 'x',
    type: 'tool.requested',
    time: '2026-08-01T09:00:00Z',
    source: 'aep://h/agent/bot/session/s',
    agent: 'bot',
    session: 's',
    seq: 1,
    aepfuture: 'kept',
  });
  assert.match(r.stderr, /stdin:1: warning: ce\.foreign-type: /);
  assert.match(r.stderr, /stdin:2: warning: ce\.core-collision: /);
  assert.match(r.stderr, /stdin:2: warning: ce\.illegal-name: /);
});

test('bad lines: not a CloudEvent, or an invalid AEP event inside, give null and a named rule; exit 1', async () => {
  const lines = [
    JSON.stringify({ specversion: '0.3', id: 'x', source: 's', type: 'dev.aep.tool.requested' }),
    JSON.stringify({ specversion: '1.0', id: 'x', source: 'aep://h', type: 'dev.aep.tool.requested', data_base64: 'AA==' }),
    JSON.stringify({ specversion: '1.0', id: 'x', source: 'aep://h', type: 'dev.aep.tool.requested', aepversion: '0.1', aepagentid: 'a' }),
    'nope',
  ];
  const r = await runAep(['ce', 'decode'], lines.join('\n') + '\n');
  assert.equal(r.code, 1);
  assert.deepEqual(r.stdout.trim().split('\n'), ['null', 'null', 'null', 'null']);
  assert.match(r.stderr, /stdin:1: AEP_BRIDGE_CE_INVALID: ce\.specversion: /);
  assert.match(r.stderr, /stdin:2: AEP_BRIDGE_CE_INVALID: ce\.data-base64: /);
  assert.match(r.stderr, /stdin:3: AEP_BRIDGE_EVENT_INVALID: envelope\.(time|required|session-required): /);
  assert.match(r.stderr, /stdin:4: AEP_CLI_BAD_JSON: /);
  const enc = await runAep(['ce', 'encode'], '{"type":"tool.completed"}\n');
  assert.equal(enc.code, 1);
  assert.equal(enc.stdout, 'null\n');
  assert.match(enc.stderr, /AEP_BRIDGE_EVENT_INVALID: envelope\.[a-z-]+: .*\(\+\d+ more issues\)/);
});
