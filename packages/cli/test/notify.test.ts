// `aep notify` and `aep up --notify` as real subprocesses (issue 17): the dry run prints what would
// be sent and when; a bad rules file is refused naming its line; a live ntfy notifier and one
// started by `aep up` forward a request to a local receiver; `aep up` keeps its VAPID keys 0600
// and hands the public key to the relay (C10).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RelayHandle } from '@aep/relay';
import { runAep, spawnAep } from '../../../test/support/cli.js';
import { Lines, stopChild } from '../../web/test/support/processes.js';
import { Receiver, TestAgent, TOKEN, testRelay } from '../../notify/test/support.js';

let relay: RelayHandle;
let agent: TestAgent;
const closers: Array<() => Promise<unknown> | void> = [];
before(async () => {
  relay = await testRelay();
  agent = await TestAgent.start(relay.url);
});
after(async () => {
  for (const c of closers.reverse()) await c();
  await agent?.close();
  await relay?.close();
});

const env = () => ({ env: { ...process.env, AEP_TOKEN: TOKEN, AEP_RELAY: relay.url } });

test('aep notify --help documents every flag', async () => {
  const r = await runAep(['notify', '--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const f of [
    '--rules',
    '--filter',
    '--capture',
    '--after',
    '--repeat',
    '--max-repeats',
    '--quiet',
    '--tz',
    '--server',
    '--topic',
    '--priority',
    '--ntfy-token-file',
    '--url',
    '--secret-file',
    '--format',
    '--vapid-file',
    '--allow-http-loopback',
    '--actions-listen',
    '--actions-url',
    '--action-ttl',
    '--inbox-url',
    '--dry-run',
    '--json',
    '--verbose',
    '--relay',
    '--token',
    '--token-file',
  ]) {
    assert.match(r.stdout, new RegExp(`${f}\\b`), `missing ${f}`);
  }
});

test('--dry-run prints each planned send with its time, text and buttons, and sends nothing', async () => {
  const ntfy = await new Receiver().start();
  closers.push(() => ntfy.close());
  const req = agent.request(
    's_dry',
    {
      kind: 'permission',
      prompt: 'rm -rf build/',
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    },
    { subject: 'Bash', approval: true },
  );
  const r = await runAep(
    [
      'notify',
      'ntfy',
      '--topic',
      'aep-dry',
      '--server',
      ntfy.url,
      '--filter',
      '{"session":"s_dry"}',
      '--after',
      '0',
      '--repeat',
      '10m',
      '--max-repeats',
      '1',
      '--actions-listen',
      '127.0.0.1:0',
      '--dry-run',
    ],
    undefined,
    env(),
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, new RegExp(`\\(now\\) ntfy \\[ntfy\\] first s_dry/${req.id}$`));
  assert.match(r.stdout, /claude-code asks permission: Bash/);
  assert.match(r.stdout, /buttons: Deny\n/);
  assert.match(r.stdout, /\(in \d+ s\) ntfy \[ntfy\] reminder/);
  assert.doesNotMatch(r.stdout, /rm -rf/, 'metadata ceiling: the command is not shown');
  assert.equal(ntfy.got.length, 0, 'a dry run sends nothing');
  const j = await runAep(
    [
      'notify',
      'ntfy',
      '--topic',
      'aep-dry',
      '--server',
      ntfy.url,
      '--filter',
      '{"session":"s_dry"}',
      '--repeat',
      '10m',
      '--max-repeats',
      '1',
      '--dry-run',
      '--json',
    ],
    undefined,
    env(),
  );
  const items = j.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    items.map((i) => i['reason']),
    ['first', 'reminder'],
  );
  assert.equal(Date.parse(String(items[1]!['at'])) - Date.parse(String(req.time)), 600_000, 'the reminder is planned 10 minutes after the request');
  const first = items[0]!;
  assert.equal(first['request'], req.id);
  assert.equal((first['request_preview'] as Record<string, unknown>)['url'], `${ntfy.url}/`);
  agent.dismiss('s_dry', req.id);
});

test('a bad rules file is refused with exit 2 and every problem named by line and path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-notify-cli-'));
  const file = join(dir, 'rules.json');
  writeFileSync(file, '{\n  "channels": { "p": { "type": "ntfy", "topic": "t" } },\n  "rules": [ { "channel": "q", "after": "later" } ]\n}\n');
  const r = await runAep(['notify', '--rules', file], undefined, env());
  assert.equal(r.code, 2);
  assert.match(r.stderr, /AEP_NOTIFY_RULES_INVALID/);
  assert.match(r.stderr, /rules\.json:3:27 \/rules\/0\/channel: .*no channel "q"/);
  assert.match(r.stderr, /rules\.json:3:41 \/rules\/0\/after: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  const both = await runAep(['notify', 'ntfy', '--rules', file], undefined, env());
  assert.equal(both.code, 2);
  assert.match(both.stderr, /AEP_CLI_USAGE/);
  const unreadable = await runAep(['notify', 'webhook', '--url', 'https://x.example.test/', '--secret-file', join(dir, 'missing')], undefined, env());
  assert.equal(unreadable.code, 2);
  assert.match(unreadable.stderr, /AEP_NOTIFY_SECRET_UNREADABLE/);
});

test('aep notify ntfy forwards a pending request to the receiver and stops on SIGTERM', async () => {
  const ntfy = await new Receiver().start();
  closers.push(() => ntfy.close());
  const child = spawnAep(['notify', 'ntfy', '--topic', 'aep-live', '--server', ntfy.url, '--filter', '{"session":"s_live"}', '--verbose'], env());
  closers.push(() => stopChild(child));
  const out = new Lines(child.stdout, child);
  await out.wait((l) => l.startsWith('aep notify: forwarding to ntfy (ntfy, capture metadata)'), 'the start line');
  const req = agent.request('s_live', { kind: 'form', prompt: 'secret words', fields: [{ id: '1', type: 'string', label: 'secret label' }] });
  const m = await ntfy.wait((x) => x.text.includes(req.id), 'the ntfy message');
  assert.equal((m.json as Record<string, unknown>)['title'], 'claude-code asks 1 question');
  assert.ok(!m.text.includes('secret'));
  assert.equal(await stopChild(child), 0);
});

test('aep up --notify ntfy:URL runs the notifier in the same process; VAPID keys are kept 0600 and the relay serves the public key', async () => {
  const ntfy = await new Receiver().start();
  closers.push(() => ntfy.close());
  const state = mkdtempSync(join(tmpdir(), 'aep-up-notify-'));
  const child = spawnAep(['up', '--port', '0', '--memory', '--no-open', '--token', TOKEN, '--notify', `ntfy:${ntfy.url}/aep-up`], {
    env: { ...process.env, XDG_DATA_HOME: state, AEP_TOKEN: '' },
  });
  closers.push(() => stopChild(child));
  const out = new Lines(child.stdout, child);
  const url = (await out.wait((l) => l.startsWith('AEP relay listening on '), 'the listening line')).slice('AEP relay listening on '.length).trim();
  await out.wait((l) => l.startsWith('notify: ntfy topic aep-up'), 'the notify line');
  const vapid = join(state, 'aep', 'vapid.json');
  assert.equal(statSync(vapid).mode & 0o777, 0o600);
  const keys = JSON.parse(readFileSync(vapid, 'utf8')) as { publicKey: string; privateKey: string };
  const cfg = await fetch(`${url}/push/config`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.deepEqual(await cfg.json(), { vapidPublicKey: keys.publicKey });
  assert.ok(!readFileSync(vapid, 'utf8').includes(TOKEN));
  const upAgent = await TestAgent.start(url, 'demo-agent');
  closers.push(() => upAgent.close());
  const req = upAgent.request('s_up', { kind: 'input', prompt: 'what?' });
  const m = await ntfy.wait((x) => x.text.includes(req.id), 'the ntfy message from aep up');
  assert.equal((m.json as Record<string, unknown>)['topic'], 'aep-up');
  assert.equal((m.json as Record<string, unknown>)['click'], `${url}/#/r/s_up/${req.id}`);
});
