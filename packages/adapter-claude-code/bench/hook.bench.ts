// Adapter benchmarks: pure mapping throughput, lifecycle-hook latency through the daemon, and the
// command-hook entry's start-up. Each result is printed beside a baseline measured in the same run.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ClaudeCodeMapper, mappingConfig, parseHookText, startDaemon } from '@aep/adapter-claude-code';
import type { Uplink } from '@aep/adapter-claude-code';

const fixture = (n: string): string => readFileSync(new URL(`../test/fixtures/hooks/${n}.json`, import.meta.url), 'utf8');

function rate(label: string, n: number, ms: number, base: { label: string; n: number; ms: number }): void {
  const r = n / (ms / 1000);
  const b = base.n / (base.ms / 1000);
  console.log(`${label}: ${Math.round(r)}/s   baseline ${base.label}: ${Math.round(b)}/s   ratio ${(r / b).toFixed(2)}`);
}

// 1. Mapping: parse + map a PreToolUse (Bash) at metadata and redacted, vs JSON.parse + stringify.
{
  const text = fixture('PreToolUse');
  const N = 20_000;
  let t = performance.now();
  for (let i = 0; i < N; i++) JSON.stringify(JSON.parse(text));
  const base = { label: 'JSON.parse+stringify', n: N, ms: performance.now() - t };
  for (const capture of ['metadata', 'redacted'] as const) {
    const mapper = new ClaudeCodeMapper(mappingConfig({ capture }));
    t = performance.now();
    for (let i = 0; i < N; i++) {
      const hook = parseHookText(text);
      hook.tool_use_id = `t${i}`;
      JSON.stringify(mapper.map(hook, i).events);
    }
    rate(`map PreToolUse @${capture}`, N, performance.now() - t, base);
  }
}

// 2. Lifecycle hook over HTTP through the daemon (uplink stubbed: measures our overhead), vs a bare
//    node:http server answering `{}`.
const BENCH_SECRET = 'bench-secret-Xk2mQ9vLr4Tz8WcN3fJ6hYd1sGa5eUo0iPq_7bB';

async function post(url: string, body: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: keepAlive, headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_SECRET}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const { Agent } = await import('node:http');
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
{
  const N = 3_000;
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/hook`;
  const body = fixture('PostToolUse');
  let t = performance.now();
  for (let i = 0; i < N; i++) await post(bareUrl, body);
  const base = { label: 'bare node:http {}', n: N, ms: performance.now() - t };
  bare.close();
  let seq = 0;
  const uplink: Uplink = {
    emit: (session, type, data, attrs) => ({
      aep: '0.1',
      id: `e${seq++}`,
      type,
      time: '',
      source: '',
      agent: 'claude-code',
      session,
      ...(data ? { data } : {}),
      ...attrs,
    }),
    connected: () => true,
    onState: () => {},
    onCommand: () => {},
    flush: async () => true,
    close: async () => {},
  };
  const d = await startDaemon({ port: 0, uplink, secret: BENCH_SECRET, socket: false });
  t = performance.now();
  for (let i = 0; i < N; i++) await post(`${d.url}/hooks/PostToolUse`, body);
  rate('daemon PostToolUse round trip', N, performance.now() - t, base);
  await d.close();
  keepAlive.destroy();
}

// 3. Command-hook start-up (daemon down: connection refused -> exit 0), vs `node -e ""`.
{
  const hookJs = fileURLToPath(new URL('../dist/hook.js', import.meta.url));
  if (!existsSync(hookJs)) {
    console.log('command-hook start-up: skipped (build first: npx tsc -b packages/adapter-claude-code)');
  } else {
    const runs = 10;
    let t = performance.now();
    for (let i = 0; i < runs; i++) spawnSync(process.execPath, ['-e', ''], { input: '' });
    const base = (performance.now() - t) / runs;
    t = performance.now();
    for (let i = 0; i < runs; i++)
      spawnSync(process.execPath, [hookJs, '--socket', '/nonexistent/aep/cc.sock', '--secret-file', '/nonexistent/secret'], { input: fixture('Stop') });
    const ms = (performance.now() - t) / runs;
    console.log(`command-hook run (daemon down): ${ms.toFixed(0)} ms   baseline node -e "": ${base.toFixed(0)} ms   ratio ${(ms / base).toFixed(2)}`);
  }
}
