// The rules are data: a JSON file validated with errors naming the line, column and path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, configFromFlags, parseConfig, parseDuration, parseQuietFlag } from '../src/index.js';

const good = `{
  "channels": {
    "phone": { "type": "ntfy", "server": "https://ntfy.example.test", "topic": "aep-x", "priority": 4 },
    "hook":  { "type": "webhook", "url": "https://hooks.example.test/x", "secret_file": "/tmp/s", "format": "slack" },
    "inbox": { "type": "push" }
  },
  "quiet": [ { "from": "22:00", "to": "07:00", "days": ["mon", "tue"], "tz": "Europe/Berlin" } ],
  "rules": [
    { "name": "approvals", "filter": { "agent": "claude-code" }, "channel": "phone", "after": "30s", "repeat": "10m", "max_repeats": 2,
      "escalate": [ { "after": "15m", "channel": "hook" } ] },
    { "filter": { "type": ["run.failed", "session.ended"] }, "channel": "inbox", "quiet": false }
  ],
  "actions": { "listen": "127.0.0.1:8788", "url": "https://laptop.example.test:8788/", "ttl": "5m" },
  "inbox_url": "https://laptop.example.test/"
}`;

test('a complete rules file parses into channels, rules, quiet hours and action settings', () => {
  const c = parseConfig(good);
  assert.deepEqual([...c.channels.keys()], ['phone', 'hook', 'inbox']);
  assert.equal(c.channels.get('phone')!.capture, 'metadata', 'channels default to capture metadata');
  const [a, b] = c.rules;
  assert.deepEqual(a!.filter, { agent: 'claude-code', type: 'attention.requested' }, 'type defaults to attention.requested');
  assert.equal(a!.afterMs, 30_000);
  assert.equal(a!.repeatMs, 600_000);
  assert.equal(a!.maxRepeats, 2);
  assert.deepEqual(a!.escalate, [{ afterMs: 900_000, channel: 'hook' }]);
  assert.equal(b!.name, 'rule-2');
  assert.equal(b!.quiet, false);
  assert.deepEqual(c.quiet, [{ from: 22 * 60, to: 7 * 60, days: [1, 2], tz: 'Europe/Berlin' }]);
  assert.deepEqual(c.actions, { listen: '127.0.0.1:8788', url: 'https://laptop.example.test:8788', ttlMs: 300_000 });
});

test('every problem is reported with its line, column and JSON pointer', () => {
  const bad = `{
  "channels": {
    "phone": { "type": "ntfy", "topic": "has space" },
    "Bad Name": { "type": "push" },
    "hook": { "type": "webhook", "url": "ftp://x" }
  },
  "rules": [
    { "channel": "nope", "after": "soon", "filter": { "seq": 1 } },
    { "channel": "phone", "repeat": "1s", "escalate": [ { "channel": "phone" } ] }
  ],
  "quiet": [ { "from": "25:00", "to": "07:00", "tz": "Mars/Olympus" } ],
  "extra": 1
}`;
  let err: ConfigError | undefined;
  try {
    parseConfig(bad, 'rules.json');
  } catch (e) {
    err = e as ConfigError;
  }
  assert.ok(err instanceof ConfigError);
  assert.equal(err.code, 'AEP_NOTIFY_RULES_INVALID');
  const lines = err.message.split('\n');
  const expect: Array<[RegExp, RegExp]> = [
    [/^rules\.json:12:12 \/extra: /, /unknown member "extra"/],
    [/^rules\.json:3:41 \/channels\/phone\/topic: /, /topic must be/],
    [/^rules\.json:4:17 \/channels\/Bad Name: /, /channel name/],
    [/^rules\.json:5:41 \/channels\/hook\/url: /, /http\(s\) URL/],
    [/^rules\.json:5:13 \/channels\/hook\/secret_file: /, /secret_file is required/],
    [/^rules\.json:11:24 \/quiet\/0\/from: /, /HH:MM/],
    [/^rules\.json:11:54 \/quiet\/0\/tz: /, /IANA/],
    [/^rules\.json:8:18 \/rules\/0\/channel: /, /no channel "nope"/],
    [/^rules\.json:8:35 \/rules\/0\/after: /, /duration/],
    [/^rules\.json:8:53 \/rules\/0\/filter: /, /invalid-filter/],
    [/^rules\.json:9:37 \/rules\/1\/repeat: /, /at least 10s/],
    [/^rules\.json:9:57 \/rules\/1\/escalate\/0\/after: /, /after is required/],
  ];
  for (const [place, what] of expect) {
    assert.ok(
      lines.some((l) => place.test(l) && what.test(l)),
      `missing ${place} ${what} in:\n${err.message}`,
    );
  }
});

test('a syntax error names its line and column; duplicate keys are refused', () => {
  assert.throws(
    () => parseConfig('{\n  "rules": [\n    1,\n  ]\n}'),
    (e: unknown) => e instanceof ConfigError && /^rules\.json:4:3 \/: not JSON/.test(e.message),
  );
  assert.throws(
    () => parseConfig('{"channels": {}, "channels": {}}'),
    (e: unknown) => e instanceof ConfigError && /duplicate key "channels"/.test(e.message),
  );
});

test('durations, quiet flags and flag-built configurations', () => {
  assert.equal(parseDuration(90), 90_000);
  assert.equal(parseDuration('1.5m'), 90_000);
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('-1s'), undefined);
  assert.equal(parseDuration('soon'), undefined);
  assert.deepEqual(parseQuietFlag('22:30-06:15', 'UTC'), { from: 1350, to: 375, tz: 'UTC' });
  assert.equal(parseQuietFlag('22:30'), undefined);
  const c = configFromFlags({
    type: 'ntfy',
    topic: 'aep-t',
    server: 'http://127.0.0.1:9',
    filter: { agent: 'x' },
    capture: 'redacted',
    after: '5s',
    actionsListen: '127.0.0.1:0',
  });
  assert.equal(c.channels.get('ntfy')!.capture, 'redacted');
  assert.deepEqual(c.rules[0]!.filter, { agent: 'x', type: 'attention.requested' });
  assert.throws(
    () => configFromFlags({ type: 'webhook', url: 'https://x.example.test' }),
    (e: unknown) => e instanceof ConfigError && /secret_file is required/.test(e.message),
  );
});
