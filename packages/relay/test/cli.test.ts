// `aep relay` as users run it: --help, the listening line, options, SIGTERM.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY_DEFAULTS } from '@aep/relay';
import { runAep, spawnAep } from '../../../test/support/cli.js';
import { ev, http, post } from './helpers.js';

describe('aep relay', () => {
  it('--help documents every option with its default', async () => {
    const r = await runAep(['relay', '--help']);
    assert.equal(r.code, 0);
    for (const opt of [
      '--port',
      '--host',
      '--token',
      '--memory',
      '--store',
      '--buffer',
      '--max-sessions',
      '--retain-bytes',
      '--max-body',
      '--max-batch',
      '--max-from',
      '--max-subscriptions',
      '--slow-consumer-bytes',
      '--max-consumer-bytes',
      '--headers-timeout',
      '--request-timeout',
      '--static',
      '--allow-origin',
      '--insecure-no-auth',
      '--offline-ttl',
      '--drain',
    ]) {
      assert.ok(r.stdout.includes(opt), opt);
    }
    for (const d of [
      RELAY_DEFAULTS.port,
      RELAY_DEFAULTS.host,
      RELAY_DEFAULTS.bufferDepth,
      RELAY_DEFAULTS.maxSessions,
      RELAY_DEFAULTS.maxBodyBytes,
      RELAY_DEFAULTS.maxBatchEvents,
      RELAY_DEFAULTS.totalBytes,
      RELAY_DEFAULTS.offlineTtlMs,
      3000,
    ]) {
      assert.ok(r.stdout.replace(/\s+/g, ' ').includes(`(default: "${d}")`), String(d));
    }
    assert.match(r.stdout.replace(/\s+/g, ' '), /--allow-origin <origin> .* \(default: only the relay's own origin\)/);
    assert.match(r.stdout.replace(/\s+/g, ' '), /--insecure-no-auth .* \(default: false\)/);
    assert.match(r.stdout, /AEP_TOKEN/);
    assert.match(r.stdout, /\.local\/share\/aep\/relay\.sqlite/);
    assert.match(r.stdout, /AEP_RELAY_SCAVENGE=auto \(default\)/);
  });

  it('prints the listening line first, serves, takes AEP_TOKEN, and exits 0 on SIGTERM', async () => {
    const child = spawnAep(['relay', '--port', '0', '--memory', '--buffer', '8'], {
      env: { ...process.env, AEP_TOKEN: 'env-token', AEP_RELAY_SCAVENGE: 'single' },
    });
    let out = '';
    let err = '';
    child.stderr?.on('data', (b: Buffer) => {
      err += b.toString('utf8');
    });
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no listening line: ${out} ${err}`));
      }, 30_000);
      child.stdout?.on('data', (b: Buffer) => {
        out += b.toString('utf8');
        const m = /^AEP relay listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      });
    });
    const d = await http(`${url}/events`, { headers: { authorization: 'Bearer env-token' } });
    assert.equal(d.status, 200);
    assert.equal((d.json as { capabilities: { replay: { buffer: number } } }).capabilities.replay.buffer, 8);
    assert.equal((await post(url, ev('session.started', 'cli', 0), 'env-token')).status, 202);
    assert.equal((await http(`${url}/events`)).status, 401);
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
    assert.ok(!err.includes('env-token'), 'the token is never logged');
    assert.match(err, /^relay: gc: one task per scavenge \(AEP_RELAY_SCAVENGE=parallel: V8 default\)$/m);
  });

  it('a bad option value is a coded usage error (exit 2)', async () => {
    const r = await runAep(['relay', '--port', 'abc', '--memory']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /AEP_CLI_BAD_OPTION/);
    const b = await runAep(['relay', '--port', '0', '--memory', '--buffer', '0']);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /--buffer/);
  });
});
