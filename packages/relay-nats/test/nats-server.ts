// Test support: a real nats-server (Debian's, 2.9.x; .ci/run installs it) on a free port with a
// temporary store directory. Missing binary = a failing test with a clear message, never a skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Path of the nats-server binary, or a thrown Error saying how to install it. */
export function natsServerBinary(): string {
  for (const p of ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  const w = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  if (w.status === 0 && w.stdout.trim()) return w.stdout.trim();
  throw new Error('nats-server is not installed: the scale-out tests need a real NATS JetStream server (apt-get install nats-server; .ci/run installs it)');
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** One nats-server with JetStream; `stop` and `start` keep the port and the store directory. */
export class NatsServer {
  private proc: ChildProcess | null = null;
  log = '';
  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly bin: string,
  ) {}
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
  /** Pid of the running server (the bench reads its CPU time). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  static async start(): Promise<NatsServer> {
    const bin = natsServerBinary();
    const s = new NatsServer(await freePort(), mkdtempSync(join(tmpdir(), 'aep-nats-')), bin);
    await s.start();
    return s;
  }

  async start(): Promise<void> {
    const p = spawn(this.bin, ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = p;
    const add = (b: Buffer) => {
      this.log = (this.log + b.toString('utf8')).slice(-20_000);
    };
    p.stdout?.on('data', add);
    p.stderr?.on('data', add);
    const deadline = Date.now() + 15_000;
    while (!/Server is ready/.test(this.log)) {
      if (p.exitCode !== null) throw new Error(`nats-server exited ${p.exitCode}: ${this.log.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not become ready: ${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    while (!(await reachable(this.port))) await new Promise((r) => setTimeout(r, 50));
  }

  /** Stop the server (SIGTERM: JetStream flushes its store; SIGKILL: a crash). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    this.proc = null;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill(signal);
    await exited;
    this.log = '';
  }

  async dispose(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
