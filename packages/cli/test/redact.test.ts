// `aep redact` as a black box: text and --json modes, options, exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';

test('--help documents every option and its default', async () => {
  const r = await runAep(['redact', '--help']);
  assert.equal(r.code, 0);
  for (const s of [
    '--home <dir>',
    '--no-home',
    '--secret-value <value>',
    '--secret-env <NAME>',
    '--secret-name <NAME>',
    '--no-pii',
    '--json',
    'default',
    'Exit codes',
  ])
    assert.ok(r.stdout.includes(s), s);
});

test('text mode: stdin as one blob, line endings kept, no trailing newline added', async () => {
  const r = await runAep(['redact', '--home', '/home/op'], 'password=hunter22\r\nsee /home/op/x and a@b.example.org');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'password=[REDACTED:secret]\r\nsee ~/x and [REDACTED:pii]');
});

test('the default home is the user home directory', async () => {
  const r = await runAep(['redact'], '/srv/me/thing and /srv/me', { env: { ...process.env, HOME: '/srv/me' } });
  assert.equal(r.stdout, '~/thing and ~');
  const off = await runAep(['redact', '--no-home'], '/srv/me/thing', { env: { ...process.env, HOME: '/srv/me' } });
  assert.equal(off.stdout, '/srv/me/thing');
});

test('--secret-value (repeatable), --secret-env, --secret-name, --no-pii', async () => {
  const r = await runAep(
    [
      'redact',
      '--no-home',
      '--secret-value',
      'alpha-one',
      '--secret-value',
      'beta-two',
      '--secret-env',
      'AEP_TEST_SECRET',
      '--secret-name',
      'MY_CONF',
      '--no-pii',
    ],
    'alpha-one beta-two gamma-three MY_CONF=zzz a@b.example.org',
    { env: { ...process.env, AEP_TEST_SECRET: 'gamma-three' } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '[REDACTED:secret] [REDACTED:secret] [REDACTED:secret] MY_CONF=[REDACTED:secret] a@b.example.org');
  const missing = await runAep(['redact', '--secret-env', 'AEP_NO_SUCH_VAR_X'], 'x');
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /AEP_CLI_BAD_OPTION: --secret-env AEP_NO_SUCH_VAR_X/);
});

test('--json redacts every string and credential-named keys; non-JSON stdin is exit 2', async () => {
  const r = await runAep(['redact', '--no-home', '--json'], '{"api_key":123,"msg":["Bearer abcdefgh12345678"],"n":1}');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '{"api_key":"[REDACTED:secret]","msg":["[REDACTED:secret]"],"n":1}\n');
  const bad = await runAep(['redact', '--json'], '{nope');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /AEP_CLI_BAD_JSON/);
  assert.equal(bad.stdout, '');
});

test('huge input (8 MB) is redacted without crashing', async () => {
  const blob = ('lorem ipsum token=abcd1234 ' + 'x'.repeat(100) + '\n').repeat(60_000);
  const r = await runAep(['redact', '--no-home'], blob);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('abcd1234'));
  assert.equal(r.stdout.split('\n').length, 60_001);
});
