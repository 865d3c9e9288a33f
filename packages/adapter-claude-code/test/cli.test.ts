// `aep claude-code` CLI surface: --help on every subcommand, `map` dry run, the pinned defaults,
// and `serve` refusing a busy port. (The command-hook shim is channel.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { validateEvent } from '@aep/protocol';
import { runAep } from '../../../test/support/cli.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_BLOCKING_TIMEOUT_S,
  DEFAULT_DAEMON_URL,
  DEFAULT_LIFECYCLE_TIMEOUT_S,
  DEFAULT_PORT,
  DEFAULT_RELAY,
  DEFAULT_WAIT_MS,
} from '@aep/adapter-claude-code';

const fixtureText = (name: string): string => readFileSync(new URL(`./fixtures/hooks/${name}.json`, import.meta.url), 'utf8');

test('every subcommand documents its options and defaults in --help', async () => {
  const top = await runAep(['claude-code', '--help']);
  assert.equal(top.code, 0);
  for (const sub of ['serve', 'install', 'uninstall', 'map']) assert.match(top.stdout, new RegExp(`\\b${sub}\\b`));
  const serve = await runAep(['claude-code', 'serve', '--help']);
  for (const opt of [
    '--max-held',
    '--max-questions',
    '--max-fields',
    '--max-hook-bytes',
    '--socket',
    '--secret-file',
    '--port',
    '--host',
    '--relay',
    '--token',
    '--capture',
    '--override',
    '--wait-ms',
    '--agent',
    '--state-dir',
    '--no-pii',
    '--secret-env',
  ])
    assert.ok(serve.stdout.includes(opt), opt);
  assert.ok(serve.stdout.includes(`"${DEFAULT_PORT}"`) && serve.stdout.includes(`"${DEFAULT_WAIT_MS}"`), serve.stdout);
  assert.ok(serve.stdout.includes(DEFAULT_RELAY));
  for (const [opt, v] of [
    ['--max-held', DEFAULT_LIMITS.maxHeld],
    ['--max-questions', DEFAULT_LIMITS.maxQuestions],
    ['--max-fields', DEFAULT_LIMITS.maxFields],
    ['--max-hook-bytes', DEFAULT_LIMITS.maxHookBytes],
  ] as const) {
    assert.match(serve.stdout, new RegExp(`${opt} <n>[\\s\\S]*?\\(default: "${v}"\\)`), `${opt} documents its default ${v}`);
  }
  const install = await runAep(['claude-code', 'install', '--help']);
  for (const opt of ['--scope', '--settings', '--url', '--handler', '--socket', '--secret-file', '--timeout', '--lifecycle-timeout', '--print'])
    assert.ok(install.stdout.includes(opt), opt);
  assert.ok(
    install.stdout.includes(DEFAULT_DAEMON_URL) &&
      install.stdout.includes(`"${DEFAULT_BLOCKING_TIMEOUT_S}"`) &&
      install.stdout.includes(`"${DEFAULT_LIFECYCLE_TIMEOUT_S}"`),
  );
  const map = await runAep(['claude-code', 'map', '--help']);
  for (const opt of ['--capture', '--override', '--agent']) assert.ok(map.stdout.includes(opt), opt);
  assert.equal((await runAep(['claude-code', 'uninstall', '--help'])).code, 0);
});

test('map: one payload on stdin -> JSONL events, contacting nothing', async () => {
  const r = await runAep(['claude-code', 'map', '--capture', 'metadata', '--agent', 'cc-1'], fixtureText('AskUserQuestion'));
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    lines.map((e) => e['type']),
    ['session.started', 'tool.requested', 'attention.requested'],
  );
  for (const e of lines) assert.deepEqual(validateEvent(e, { emitter: true }), []);
  assert.equal((lines[2]!['data'] as Record<string, unknown>)['prompt'], 'cc-1 asks 2 questions');
  assert.ok(!r.stdout.includes('Which framework'));
  // Default (no --capture): attention.* at redacted, the rest at metadata (AEP-0003 §9.1).
  const d = await runAep(['claude-code', 'map'], fixtureText('AskUserQuestion'));
  const dl = d.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    dl.map((e) => e['capture']),
    ['metadata', 'metadata', 'redacted'],
  );
  const red = await runAep(['claude-code', 'map', '--capture', 'redacted', '-'], fixtureText('UserPromptSubmit'));
  assert.match(red.stdout, /Add a checkout page/);
  assert.ok(!red.stdout.includes('sk-live-abcdefghijklmnopqrstuvwx'));
  const bad = await runAep(['claude-code', 'map'], '{"hook_event_name":"Stop"}');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /AEP_CC_HOOK_INVALID: .*session_id/);
  assert.ok(!bad.stderr.includes('    at '), 'no stack trace');
  const badCap = await runAep(['claude-code', 'map', '--capture', 'secret'], fixtureText('Stop'));
  assert.equal(badCap.code, 2);
  assert.match(badCap.stderr, /AEP_CC_CONFIG_INVALID/);
});

test('serve on a busy port exits 5 at once with AEP_CC_ADDRESS_IN_USE (nothing keeps running)', async () => {
  const squatter = createServer(() => {
    /* holds the port */
  });
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
  try {
    const port = String((squatter.address() as AddressInfo).port);
    const r = await runAep(['claude-code', 'serve', '--port', port, '--relay', 'http://127.0.0.1:9'], undefined, { timeoutMs: 20_000 });
    assert.equal(r.signal, null, 'exited by itself, not killed by the test timeout');
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /^aep: AEP_CC_ADDRESS_IN_USE: cannot listen on 127\.0\.0\.1:\d+: the port is taken/m);
  } finally {
    squatter.close();
  }
});

test('the command-hook shim loads only node: built-ins (it must start fast): no workspace package, no dependency', () => {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (/^import\s+type\b/.test(m[0])) continue;
      if (spec.startsWith('node:')) continue;
      assert.ok(spec.startsWith('./'), `${file} imports ${spec}`);
      visit(new URL(spec.replace(/\.js$/, '.ts'), `file://${file}`).pathname);
    }
  };
  visit(new URL('../src/hook.ts', import.meta.url).pathname);
  assert.ok(seen.size >= 3, [...seen].join(', '));
});
