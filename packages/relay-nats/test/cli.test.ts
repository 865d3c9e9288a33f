// `aep relay --nats` as users run it (compiled CLI): --help names the flags, bad combinations are
// usage errors (exit 2), an unusable NATS or a mismatched stream exits 5 naming the cause.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { NatsServer, freePort } from './nats-server.js';

const BIN = join(import.meta.dirname, '..', '..', 'cli', 'dist', 'bin.js');
const aep = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000 });

describe('aep relay --nats', () => {
  let ns: NatsServer;
  before(async () => {
    ns = await NatsServer.start();
  });
  after(async () => {
    await ns.dispose();
  });

  it('--help lists --nats, --nats-stream, --nats-creds and the scale-out notes', () => {
    const r = aep(['relay', '--help']);
    assert.equal(r.status, 0);
    for (const f of ['--nats <url>', '--nats-stream <name>', '--nats-creds <file>', 'nats-unavailable', '>= 2.10']) assert.ok(r.stdout.includes(f), f);
  });

  it('usage errors: with --store or --memory, --nats-stream without --nats, a URL that is not nats://', () => {
    for (const args of [
      ['--nats', ns.url, '--memory'],
      ['--nats', ns.url, '--store', '/tmp/x.sqlite'],
      ['--nats-stream', 'X'],
      ['--nats', 'http://127.0.0.1:4222'],
      ['--nats', 'nats://a b'],
    ]) {
      const r = aep(['relay', '--port', '0', ...args]);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /AEP_CLI_BAD_OPTION/);
    }
  });

  it('no NATS there: exit 5 AEP_CLI_RELAY_START_FAILED naming AEP_RELAY_NATS_UNAVAILABLE', async () => {
    const r = aep(['relay', '--port', '0', '--nats', `nats://127.0.0.1:${await freePort()}`]);
    assert.equal(r.status, 5);
    assert.match(r.stderr, /AEP_CLI_RELAY_START_FAILED.*AEP_RELAY_NATS_UNAVAILABLE/s);
  });

  it('a stream made for another --buffer: exit 5 AEP_RELAY_NATS_CONFIG naming both depths; a bad stream name too', async () => {
    const first = spawn(process.execPath, [BIN, 'relay', '--port', '0', '--nats', ns.url, '--nats-stream', 'DEPTH', '--buffer', '8'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        first.stdout!.on('data', (b: Buffer) => {
          out += b.toString();
          if (out.includes('listening on')) resolve();
        });
        first.once('exit', (c) => reject(new Error(`exited ${c}`)));
      });
      const r = aep(['relay', '--port', '0', '--nats', ns.url, '--nats-stream', 'DEPTH', '--buffer', '16']);
      assert.equal(r.status, 5);
      assert.match(r.stderr, /AEP_RELAY_NATS_CONFIG/);
      assert.match(r.stderr, /made for --buffer 8 .*started with --buffer 16/s);
    } finally {
      first.kill('SIGTERM');
      await new Promise((r) => first.once('exit', r));
    }
    const bad = aep(['relay', '--port', '0', '--nats', ns.url, '--nats-stream', 'no.dots']);
    assert.equal(bad.status, 5);
    assert.match(bad.stderr, /AEP_RELAY_NATS_CONFIG.*stream name/s);
  });
});
