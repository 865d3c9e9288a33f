// The ingest floor of `npm run bench -- relay` (issue 19; bench/floor.mjs): the bench reads the
// relay's ratio beside it, so it must do the work it claims and no less: refuse what is not an
// object with a string source and id, keep a duplicate (source, id) once, and answer a durable
// 202 only after the Events are in its file.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startChild, type Child } from '../../../test/support/child.js';

const serverJs = fileURLToPath(new URL('../bench/server.mjs', import.meta.url));

const floor = (store: string): Promise<Child> => startChild([serverJs, 'floor', store]);

async function post(url: string, body: string): Promise<{ status: number; json: unknown }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
  return { status: r.status, json: await r.json() };
}

const line = (source: string, id: string) => JSON.stringify({ aep: '0.1', id, type: 'bench.x', source, session: 's', seq: 0 });

describe('bench floor server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-floor-'));
  const children: Child[] = [];
  after(() => {
    for (const c of children) c.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('durable: the 202 comes after the Events are in the file; a duplicate (source, id) is written once', async () => {
    const file = join(dir, 'floor.log');
    const srv = await floor(file);
    children.push(srv);
    const url = `http://127.0.0.1:${srv.port}/events`;
    const body = `${line('aep://a', '01A')}\n${line('aep://a', '01B')}\n${line('aep://b', '01A')}\n`;
    assert.deepEqual(await post(url, body), { status: 202, json: { accepted: 3 } });
    const written = readFileSync(file);
    assert.equal(written.subarray(0, body.length).toString(), body);
    // The same Events again, and one new: accepted, only the new one written.
    const again = `${body}${line('aep://a', '01C')}\n`;
    assert.deepEqual(await post(url, again), { status: 202, json: { accepted: 4 } });
    const after2 = readFileSync(file);
    const tail = `${line('aep://a', '01C')}\n`;
    assert.equal(after2.subarray(0, body.length + tail.length).toString(), body + tail);
    assert.equal(after2[body.length + tail.length], 0, 'nothing but the new Event was written');
  });

  it('refuses what is not an object with a string source and id, and keeps serving', async () => {
    const srv = await floor('memory');
    children.push(srv);
    const url = `http://127.0.0.1:${srv.port}/events`;
    for (const bad of ['{"id":"x"', '[1]', '{"id":1,"source":"aep://a"}', '{"id":"x"}', 'null']) {
      assert.equal((await post(url, `${bad}\n`)).status, 400, bad);
    }
    assert.deepEqual(await post(url, `${line('aep://a', '01A')}\n`), { status: 202, json: { accepted: 1 } });
  });

  it('the dedupe table forgets the oldest id past its size, and only it', () => {
    // A plain process (the table is JavaScript of the bench, not of the relay): 2^19 ids + 5,000.
    const script = `
      import { Seen } from ${JSON.stringify(pathToFileURL(join(serverJs, '..', 'floor.mjs')).href)};
      const N = (1 << 19) + 5000;
      const id = (i) => 'id' + ((i * 2654435761) >>> 0).toString(36) + '-' + i;
      const s = new Seen();
      let falseDuplicates = 0;
      for (let i = 0; i < N; i++) if (!s.admit('aep://a', id(i))) falseDuplicates++;
      let kept = 0;
      for (let i = N - (1 << 19); i < N; i++) if (!s.admit('aep://a', id(i))) kept++;
      let forgotten = 0;
      for (let i = 0; i < 5000; i++) if (s.admit('aep://a', id(i))) forgotten++;
      console.log(JSON.stringify({ falseDuplicates, kept, forgotten, otherSource: s.admit('aep://b', id(N - 1)) }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { falseDuplicates: 0, kept: 1 << 19, forgotten: 5000, otherSource: true });
  });
});
