// `aep token create|list|revoke` against a real relay (contract C7): the token is printed once,
// works for its scopes, is listed without its secret, and stops working when revoked. The owner
// token comes from --token, AEP_TOKEN or the file `aep up` saves.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '@aep/relay';
import { runAep } from '../../../test/support/cli.js';

const OWNER = 'cli-owner-token-0123456789';

describe('aep token', () => {
  let relay: RelayHandle;
  let home: string;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null, token: OWNER });
    home = mkdtempSync(join(tmpdir(), 'aep-token-cli-'));
  });
  after(async () => {
    await relay.close();
    rmSync(home, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => {
    const e: Record<string, string> = { ...(process.env as Record<string, string>), XDG_DATA_HOME: join(home, 'empty'), ...extra };
    delete e['AEP_TOKEN'];
    delete e['AEP_RELAY'];
    return { ...e, ...extra };
  };

  it('--help documents the subcommands, every scope, and the options with defaults', async () => {
    const r = await runAep(['token', '--help']);
    assert.equal(r.code, 0);
    for (const s of ['create', 'list', 'revoke', 'read[:LEVEL]', 'emit[', 'answer[', 'permit[', 'steer[', 'admin']) assert.ok(r.stdout.includes(s), s);
    const c = await runAep(['token', 'create', '--help']);
    for (const o of [
      '--relay',
      '--token',
      '--token-file',
      '--token-fd',
      '--json',
      '--scope',
      '--name',
      '--expires',
      '--timeout',
      'default: "http://127.0.0.1:8787"',
      'default: never',
    ])
      assert.ok(c.stdout.replace(/\s+/g, ' ').includes(o), o);
  });

  it('create prints the token once; it works for its scopes; list shows no secret; revoke ends it', async () => {
    const c = await runAep(
      [
        'token',
        'create',
        '--relay',
        relay.url,
        '--token',
        OWNER,
        '--name',
        'phone',
        '--scope',
        'read:redacted',
        '--scope',
        'answer',
        '--expires',
        '30d',
        '--json',
      ],
      undefined,
      { env: env() },
    );
    assert.equal(c.code, 0, c.stderr);
    const made = JSON.parse(c.stdout) as { id: string; token: string; scopes: string[]; expires: string };
    assert.match(made.token, /^aep_[0-9a-f]{16}_/);
    assert.deepEqual(made.scopes, ['read:redacted', 'answer']);
    assert.ok(Date.parse(made.expires) > Date.now() + 29 * 86_400_000);
    assert.equal((await fetch(`${relay.url}/stream?live=0`, { headers: { authorization: `Bearer ${made.token}` } })).status, 200);
    assert.equal((await fetch(`${relay.url}/tokens`, { headers: { authorization: `Bearer ${made.token}` } })).status, 403);
    const l = await runAep(['token', 'list', '--relay', relay.url], undefined, { env: env({ AEP_TOKEN: OWNER }) });
    assert.equal(l.code, 0, l.stderr);
    assert.match(l.stdout, new RegExp(`^${made.id}  phone  read:redacted answer  created \\S+  expires `, 'm'));
    // The whole secret: it is base64url and may itself hold '_', so split('_') could cut a short piece.
    assert.ok(!l.stdout.includes(made.token.slice(`aep_${made.id}_`.length)), 'list shows no secret');
    assert.ok(!l.stderr.includes(OWNER) && !l.stdout.includes(OWNER), 'the owner token is never printed');
    const v = await runAep(['token', 'revoke', made.id, '--relay', relay.url, '--token', OWNER], undefined, { env: env() });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout, `revoked ${made.id}\n`);
    assert.equal((await fetch(`${relay.url}/stream?live=0`, { headers: { authorization: `Bearer ${made.token}` } })).status, 401);
    const lj = await runAep(['token', 'list', '--relay', relay.url, '--json', '--token', OWNER], undefined, { env: env() });
    const listed = (JSON.parse(lj.stdout) as { tokens: Array<{ id: string; revoked?: string }> }).tokens.find((t) => t.id === made.id)!;
    assert.equal(typeof listed.revoked, 'string');
  });

  it('uses the token `aep up` saved when neither --token nor AEP_TOKEN is given', async () => {
    const dir = join(home, 'xdg', 'aep');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), `${OWNER}\n`, { mode: 0o600 });
    const c = await runAep(['token', 'create', '--relay', relay.url, '--scope', 'read'], undefined, { env: env({ XDG_DATA_HOME: join(home, 'xdg') }) });
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^aep_[0-9a-f]{16}_\S+\n {2}id [0-9a-f]{16} · scopes read:metadata\n {2}shown once/);
  });

  it('refusals are coded: bad scope 2, unknown token 2, wrong owner token 3, unreachable 5', async () => {
    const bad = await runAep(['token', 'create', '--relay', relay.url, '--token', OWNER, '--scope', 'read:toString'], undefined, { env: env() });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /AEP_CLI_BAD_OPTION: bad scope: read:toString: the level must be one of/);
    const unknown = await runAep(['token', 'revoke', '0123456789abcdef', '--relay', relay.url, '--token', OWNER], undefined, { env: env() });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /AEP_CLI_UNKNOWN_TOKEN/);
    const wrong = await runAep(['token', 'list', '--relay', relay.url, '--token', 'not-the-owner'], undefined, { env: env() });
    assert.equal(wrong.code, 3);
    assert.match(wrong.stderr, /^aep: AEP_CLI_RELAY_REFUSED: the relay at http:\/\/127\.0\.0\.1:\d+ refused the token \(HTTP 401\)/);
    const scoped = JSON.parse(
      (await runAep(['token', 'create', '--relay', relay.url, '--token', OWNER, '--scope', 'read', '--json'], undefined, { env: env() })).stdout,
    ) as { token: string };
    const notAdmin = await runAep(['token', 'list', '--relay', relay.url, '--token', scoped.token], undefined, { env: env() });
    assert.equal(notAdmin.code, 3);
    assert.match(notAdmin.stderr, /AEP_CLI_RELAY_REFUSED: .*HTTP 403.*token lacks scope admin/);
    assert.ok(!wrong.stderr.includes('not-the-owner'));
    const none = await runAep(['token', 'list', '--relay', 'http://127.0.0.1:9', '--token', OWNER], undefined, { env: env() });
    assert.equal(none.code, 5);
    assert.match(none.stderr, /AEP_CLI_RELAY_UNREACHABLE/);
    const badId = await runAep(['token', 'revoke', 'zz', '--relay', relay.url, '--token', OWNER], undefined, { env: env() });
    assert.equal(badId.code, 2);
  });
});
