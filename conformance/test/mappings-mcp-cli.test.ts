// Runs conformance/mappings/mcp-elicitation.json through the CLI: a scripted MCP server behind
// `aep mcp wrap` sends every fixture elicitation; the attention.requested events recorded on a
// real relay must carry exactly the pinned data, member for member,
// and every unsupported shape must come back to the server as a decline (the raw host here has no
// elicitation), or as a JSON-RPC InvalidParams error when the MCP schema itself (the SDK's
// ElicitRequestSchema) rejects the request, as an SDK client would answer. Capture `none` cases are
// library-only (`aep mcp wrap` refuses --capture none); URL-mode cases are not forms for the
// bridge (it raises kind "auth"; covered by packages/mcp-bridge/test/elicitation.test.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { subscribe } from '@aep/client/node';
import type { WireEvent } from '@aep/client';
import { spawnAep, startRelayProcess } from '../../test/support/cli.js';

interface MapCase {
  id: string;
  rule: string;
  agent: string;
  capture: string;
  params: unknown;
  expect: { data?: Record<string, unknown>; unsupported?: string };
}
const fixture = JSON.parse(readFileSync(new URL('../mappings/mcp-elicitation.json', import.meta.url), 'utf8')) as { cases: MapCase[] };

// A raw JSON-RPC server: answers initialize, then sends each elicitation in ELICIT_FILE and
// reports every response it gets back as a notifications/message to the host.
const SERVER = `
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const params = JSON.parse(readFileSync(process.env.ELICIT_FILE, 'utf8'));
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
for await (const line of createInterface({ input: process.stdin })) {
  let m; try { m = JSON.parse(line); } catch { continue; }
  if (m.method === 'initialize') out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'scripted', version: '1' } } });
  else if (m.method === 'notifications/initialized') params.forEach((p, i) => out({ jsonrpc: '2.0', id: i + 1, method: 'elicitation/create', params: p }));
  else if (m.id !== undefined && !m.method) out({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { response: m } } });
}
`;

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  dir = mkdtempSync(join(tmpdir(), 'aep-mcp-conf-'));
  writeFileSync(join(dir, 'server.mjs'), SERVER);
});
after(async () => {
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one group (same agent and capture) through one `aep mcp wrap` process. */
async function runGroup(agent: string, capture: string, cases: MapCase[]): Promise<{ requests: WireEvent[]; responses: Record<number, unknown> }> {
  const session = `conf-${randomBytes(4).toString('hex')}`;
  const file = join(dir, `${session}.json`);
  writeFileSync(file, JSON.stringify(cases.map((c) => c.params)));
  const events: WireEvent[] = [];
  const sub = subscribe({ url: relay.url, token: TOKEN, filter: { session, type: 'attention.requested' }, from: 'all' }, (e) => events.push(e));
  await sub.ready;
  const child = spawnAep(
    [
      'mcp',
      'wrap',
      '--relay',
      relay.url,
      '--token',
      TOKEN,
      '--agent',
      agent,
      '--capture',
      capture,
      '--session',
      session,
      '--',
      process.execPath,
      join(dir, 'server.mjs'),
    ],
    {
      env: { ...process.env, ELICIT_FILE: file },
    },
  );
  const responses: Record<number, unknown> = {};
  let buf = '';
  child.stdout?.on('data', (b: Buffer) => {
    buf += b.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, nl)) as { method?: string; params?: { data?: { response?: { id: number } } } };
      buf = buf.slice(nl + 1);
      const r = m.params?.data?.response;
      if (m.method === 'notifications/message' && r) responses[r.id] = r;
    }
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  child.stdin?.write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }) + '\n',
  );
  child.stdin?.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const supported = cases.filter((c) => c.expect.unsupported === undefined).length;
  const unsupported = cases.length - supported;
  const deadline = Date.now() + 30_000;
  while ((events.length < supported || Object.keys(responses).length < unsupported) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  child.stdin?.end();
  await new Promise<void>((resolve) => {
    child.on('exit', () => resolve());
    setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, 15_000).unref();
  });
  sub.close();
  assert.equal(events.length, supported, `attention.requested events for ${agent}/${capture}; stderr:\n${stderr}`);
  return { requests: events, responses };
}

const groups = new Map<string, MapCase[]>();
for (const c of fixture.cases) {
  if (c.capture === 'none' || (c.params as { mode?: string }).mode === 'url') continue;
  const key = `${c.agent}\n${c.capture}`;
  groups.set(key, [...(groups.get(key) ?? []), c]);
}

for (const [key, cases] of groups) {
  const [agent = '', capture = ''] = key.split('\n');
  test(`through aep mcp wrap: ${cases.map((c) => c.id).join(', ')}`, async () => {
    const { requests, responses } = await runGroup(agent, capture, cases);
    let k = 0;
    for (const [i, c] of cases.entries()) {
      if (c.expect.unsupported !== undefined) {
        const mcpValid = ElicitRequestSchema.safeParse({ method: 'elicitation/create', params: c.params }).success;
        const r = responses[i + 1] as { result?: unknown; error?: { code: number } } | undefined;
        if (mcpValid) assert.deepEqual(r?.result, { action: 'decline' }, `${c.id}: an unmappable shape is declined for a host without elicitation`);
        else assert.equal(r?.error?.code, -32602, `${c.id}: an MCP-invalid request gets InvalidParams`);
        continue;
      }
      const req = requests[k++];
      assert.ok(req, c.id);
      // Member for member: the bridge adds nothing to the pinned data (no decline/cancel options,
      // which every form accepts without listing them, contract C2; no expires_at).
      assert.deepEqual(req.data, c.expect.data, `${c.id} (${c.rule})`);
      assert.equal(req.capture ?? 'metadata', capture, `${c.id}: the event states the capture applied`);
    }
  });
}
