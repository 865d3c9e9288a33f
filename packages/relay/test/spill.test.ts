// Issue 19 memory: a durable relay keeps committed Events' bytes in the store only and reads them
// back for replay; what a consumer receives is still byte-identical, in order, before and after a
// restart, and a pinned (re-gated at load) Event is never served from its stored bytes.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '@aep/relay';
import { ev, http } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function health(url: string): Promise<Record<string, number>> {
  return (await http(`${url}/healthz`)).json as Record<string, number>;
}

/** Lines POSTed as NDJSON exactly as given (raw bytes are what replay must reproduce). */
async function postLines(url: string, lines: string[]): Promise<number> {
  const r = await http(`${url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
    body: lines.join('\n') + '\n',
  });
  return r.status;
}

function dataLines(body: string): string[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

describe('durable relay: committed bytes live in the store, replay reads them back', () => {
  it('replay after 202 and after a restart is byte-identical and complete; memory holds no committed bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aep-spill-'));
    dirs.push(dir);
    const storePath = join(dir, 'relay.sqlite');
    const S = 'spill-1';
    // Key order, spacing and non-ASCII text as sent: replay must give these very bytes back.
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      const e = ev('progress.status', S, i, { data: { phase: `étape ${i} ✓ ${'x'.repeat(i % 7 === 0 ? 20_000 : 10)}` } });
      lines.push(i % 2 === 0 ? JSON.stringify(e) : JSON.stringify(e).replace('"type":', '"type" :'));
    }
    let relay = await startRelay({ port: 0, storePath });
    try {
      for (let k = 0; k < 300; k += 100) assert.equal(await postLines(relay.url, lines.slice(k, k + 100)), 202);
      const h = await health(relay.url);
      assert.equal(h['held'], 300);
      assert.ok(h['heldInMemoryBytes']! < h['heldBytes']! / 10, `committed bytes left memory (${h['heldInMemoryBytes']} of ${h['heldBytes']})`);
      const all = await http(`${relay.url}/stream?live=0&from=all`);
      assert.deepEqual(dataLines(all.body), lines);
      const from = encodeURIComponent(JSON.stringify([{ session: S, seq: 149 }]));
      assert.deepEqual(dataLines((await http(`${relay.url}/stream?live=0&from=${from}`)).body), lines.slice(150));
    } finally {
      await relay.close();
    }
    relay = await startRelay({ port: 0, storePath });
    try {
      const h = await health(relay.url);
      assert.equal(h['held'], 300);
      assert.equal(h['heldInMemoryBytes'], 0, 'a restart loads the index only');
      assert.deepEqual(dataLines((await http(`${relay.url}/stream?live=0&from=all`)).body), lines);
    } finally {
      await relay.close();
    }
  });
});
