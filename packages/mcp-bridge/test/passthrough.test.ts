// Non-elicitation traffic through `aep mcp wrap` is forwarded byte-for-byte in both directions
// (tools, resources, notifications, progress, pings, odd spacing, CRLF, unicode escapes, a
// non-JSON line); only the host's `initialize` is rewritten, to advertise elicitation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnAep } from '../../../test/support/cli.js';
import { SERVER, startHost } from './support.js';

const INIT =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"x-custom":{"a":1}},"clientInfo":{"name":"raw-host","version":"0.0.1"}}}\n';
const LINES = [
  '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
  '{ "jsonrpc" : "2.0", "id" : "a-1", "method":"tools/list" }\n',
  '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\\u00e9llo \\ud83d\\ude00 \\"initialize\\""},"_meta":{"progressToken":"p1"}}}\n',
  '{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"mem://hello"}}\r\n',
  'this line is not JSON at all\n',
  '{"jsonrpc":"2.0","id":9,"method":"ping"}\n',
];

test('non-elicitation traffic passes byte-for-byte; initialize advertises form and URL elicitation', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-mcp-raw-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const rawLog = join(dir, 'server');
  const child = spawnAep(['mcp', 'wrap', '--no-aep', '--', process.execPath, SERVER], { env: { ...process.env, MCP_RAW_LOG: rawLog } });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const received: Buffer[] = [];
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const gotAll = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; got:\n${Buffer.concat(received).toString('utf8')}\nstderr:\n${stderr}`)), 30_000);
    child.stdout?.on('data', (b: Buffer) => {
      received.push(b);
      const text = Buffer.concat(received).toString('utf8');
      if (
        ['"id":"a-1"', '"id":7', '"id":8', '"id":9'].every((k) => text.includes(k)) &&
        (text.match(/notifications\/progress/g) ?? []).length === 3 &&
        text.includes('notifications/message')
      ) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stdin?.write(INIT);
  // Wait for the initialize result before the rest (as a host does).
  await new Promise<void>((resolve) => {
    const on = () => {
      if (Buffer.concat(received).toString().includes('"serverInfo"')) {
        child.stdout?.off('data', on);
        resolve();
      }
    };
    child.stdout?.on('data', on);
  });
  for (const l of LINES) child.stdin?.write(l);
  await gotAll;
  child.stdin?.end();
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 0, stderr);

  const serverIn = readFileSync(`${rawLog}.in`);
  const serverOut = readFileSync(`${rawLog}.out`);
  const hostIn = Buffer.concat(received);
  // Server -> host: every byte the server wrote reached the host unchanged.
  assert.ok(serverOut.equals(hostIn), `server->host bytes differ:\n${serverOut.toString()}\n---\n${hostIn.toString()}`);
  // Host -> server: everything after the initialize line is byte-identical.
  const nl = serverIn.indexOf(10);
  assert.ok(serverIn.subarray(nl + 1).equals(Buffer.from(LINES.join(''), 'utf8')), `host->server bytes differ:\n${serverIn.toString()}`);
  // The initialize request: only capabilities.elicitation was added.
  const init = JSON.parse(serverIn.subarray(0, nl).toString('utf8')) as Record<string, unknown>;
  const sent = JSON.parse(INIT) as { params: { capabilities: Record<string, unknown> } };
  sent.params.capabilities['elicitation'] = { form: {}, url: {} };
  assert.deepEqual(init, sent);
  // The host saw progress, logging and the resource text exactly as the server wrote them.
  assert.match(hostIn.toString('utf8'), /step 3 ✓/);
  assert.match(hostIn.toString('utf8'), /ünïcödé/);
});

test('without a relay (--no-aep): a host lacking elicitation gets decline for the server; a host with it answers untouched', async () => {
  const plain = await startHost(['--no-aep']);
  try {
    assert.equal((await plain.ask('all')).action, 'decline');
    const tools = await plain.client.listTools();
    assert.deepEqual(tools.tools.map((x) => x.name).sort(), ['ask', 'echo', 'env', 'slow']);
  } finally {
    await plain.close();
  }

  let seen: unknown;
  const host = await startHost(['--no-aep'], {
    elicit: async (req) => {
      seen = req.params;
      return { action: 'accept', content: { bucket: 'hosted', retention: 1, encrypt: false } };
    },
  });
  try {
    const r = await host.ask('all');
    assert.deepEqual(r, {
      action: 'accept',
      content: { bucket: 'hosted', retention: 1, encrypt: false },
      types: { bucket: 'string', retention: 'integer', encrypt: 'boolean' },
    });
    assert.equal((seen as { message: string }).message, 'Configure the nightly backup');
    const progress: number[] = [];
    const echo = await host.client.callTool({ name: 'echo', arguments: { text: 'x' } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: x' }]);
    assert.deepEqual(progress, [1, 2, 3]);
    const res = await host.client.readResource({ uri: 'mem://hello' });
    assert.match(JSON.stringify(res.contents), /ünïcödé/);
  } finally {
    await host.close();
  }
});

test('a server command that cannot start exits 5 with a coded error, and nothing on stdout', async () => {
  const child = spawnAep(['mcp', 'wrap', '--no-aep', '--', '/nonexistent/mcp-server-binary']);
  let out = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  child.stdin?.end();
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 5);
  assert.equal(out, '');
  assert.match(err, /AEP_MCP_SPAWN/);
  assert.doesNotMatch(err, /\n\s+at /, 'no stack trace');
});

test('usage errors: no command, bad capture, bad timeout (exit 2, nothing on stdout)', async () => {
  for (const args of [
    ['mcp', 'wrap'],
    ['mcp', 'wrap', '--capture', 'none', '--', 'x'],
    ['mcp', 'wrap', '--timeout-ms', 'soon', '--', 'x'],
    ['mcp', 'wrap', '--relay', 'ftp://x', '--', 'x'],
  ]) {
    const child = spawnAep(args);
    let out = '';
    let err = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString('utf8');
    });
    child.stderr?.on('data', (b: Buffer) => {
      err += b.toString('utf8');
    });
    child.stdin?.end();
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 2, `${args.join(' ')}: ${err}`);
    assert.equal(out, '', args.join(' '));
    assert.ok(err.length > 0);
  }
});
