// A server child process of the benches (relay, relay-nats) and of the test of the bench floor:
// spawned with Node and `argv`, it prints `PORT <n>` once listening and exits on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';

export interface Child {
  port: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
  stop(): Promise<void>;
}

/** Start `node ...argv` and wait for its `PORT <n>` line; rejects if it exits first. */
export async function startChild(argv: string[]): Promise<Child> {
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      const m = /PORT (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return {
    port,
    child,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}
