// Shared by the store's unit tests (mutation-store*.test.ts): a replay-buffer Entry as the store
// receives it, and a bounded wait for a condition the store reaches on its own (a commit nobody
// awaits, a retry).
import assert from 'node:assert/strict';
import type { Entry } from '../../src/buffer.js';

/** An Entry of session `s` at position [0, rowid, 0] with these raw bytes. */
export function storeEntry(rowid: number, raw: string): Entry {
  return {
    rowid,
    source: 's',
    id: `i${rowid}`,
    session: 's',
    pos: [0, rowid, 0],
    positioned: true,
    type: 'progress.status',
    raw,
    bytes: Buffer.byteLength(raw),
    rawRank: 0,
  };
}

/** Poll `ok` every 10 ms; fail naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
