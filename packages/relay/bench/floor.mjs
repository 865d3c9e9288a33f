// The ingest floor (issue 19): a server that does only the work every AEP relay must do per
// Event at ingest, and nothing else, so that the bench can show what this machine allows a
// relay at all. Per NDJSON line: `JSON.parse`, an object with string `source` and `id`, admission
// dedupe on `(source, id)` (AEP-0001 §7.4; the stream rules' off-heap key table over the last
// 2^19 ids), the line's bytes copied into a 256 MiB ring (the default retention). It does
// not validate the envelope, order, gate capture, index requests or fan out.
//   durable (a file path): the new Events' bytes are written to the file (opened O_DSYNC,
//   preallocated) and the 202 waits for that write to return (group commit on the thread pool:
//   every body that arrives during a write goes with the next one). A plain file, cheaper than
//   SQLite.
//   memory (null): the 202 is sent at once.
// Duplicates are accepted and not kept again, as the relay does. Used by `server.mjs floor`.
import { createServer } from 'node:http';
import { KeyTable, keyHash, keyList } from '@aep/protocol';
import { constants, openSync, writev, closeSync, writeSync, fsyncSync } from 'node:fs';

const IDS = 1 << 19;
const FILE_BYTES = 64 * 1024 * 1024;

/**
 * Admission dedupe on (source, id) over the last IDS ids: the stream rules' own off-heap
 * `KeyTable` (@aep/protocol), one namespace per source, oldest forgotten first.
 */
export class Seen {
  table = new KeyTable(IDS);
  list = keyList();
  sources = new Map();

  /** true when (source, id) is new (and is now remembered); false for a duplicate. */
  admit(source, id) {
    let ns = this.sources.get(source);
    if (ns === undefined) this.sources.set(source, (ns = this.sources.size));
    const h = keyHash(0, ns, id);
    if (this.table.find(ns, id, h) >= 0) return false;
    if (this.list.count >= IDS) this.table.removeOldest(this.list);
    this.table.add(this.list, ns, id, h, 0);
    return true;
  }
}

/** Start the floor server on 127.0.0.1:0; `file` null for the memory floor. Resolves to the server. */
export function startFloor(file) {
  const seen = new Seen();
  const ring = Buffer.allocUnsafe(256 * 1024 * 1024);
  let at = 0;
  const fd = file ? openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC) : -1;
  // The file is written in full once, so that a sync never has to record a new size (what
  // SQLite's WAL, reused from its start after each checkpoint, also avoids); writes wrap.
  if (fd >= 0) {
    const zero = Buffer.alloc(1024 * 1024);
    for (let o = 0; o < FILE_BYTES; o += zero.length) writeSync(fd, zero, 0, zero.length, o);
    fsyncSync(fd);
  }
  let pos = 0;
  let queued = [];
  let waiting = [];
  let writing = false;
  const commit = () => {
    if (writing || waiting.length === 0) return;
    writing = true;
    const bufs = queued;
    const done = waiting;
    queued = [];
    waiting = [];
    let bytes = 0;
    for (const b of bufs) bytes += b.length;
    if (pos + bytes > FILE_BYTES) pos = 0;
    const where = pos;
    pos += bytes;
    // O_DSYNC: the write returns once its bytes are on the disk, one trip through the thread pool
    // (a write then an fdatasync is two; measured slower here).
    writev(fd, bufs, where, (err) => {
      writing = false;
      for (const w of done) w(!err);
      commit();
    });
  };
  const server = createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      let accepted = 0;
      let fresh = 0;
      const keep = [];
      for (let start = 0; start < buf.length;) {
        let end = buf.indexOf(0x0a, start);
        if (end < 0) end = buf.length;
        if (end > start) {
          let v;
          try {
            v = JSON.parse(buf.toString('utf8', start, end));
          } catch {
            v = null;
          }
          if (v === null || typeof v !== 'object' || typeof v.source !== 'string' || typeof v.id !== 'string') {
            res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"error":"invalid-event"}');
            return;
          }
          accepted++;
          if (seen.admit(v.source, v.id)) {
            const len = end - start;
            if (at + len > ring.length) at = 0;
            buf.copy(ring, at, start, end);
            at += len;
            fresh++;
            if (fd >= 0) keep.push(buf.subarray(start, end + 1));
          }
        }
        start = end + 1;
      }
      const body = JSON.stringify({ accepted });
      const answer = (ok) => {
        if (!ok) return void res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"error":"store-unavailable"}');
        res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (fd < 0 || fresh === 0) return answer(true);
      // Nothing was a duplicate (the usual case): the body is written as it came.
      if (fresh === accepted) queued.push(buf);
      else for (const b of keep) queued.push(b);
      waiting.push(answer);
      commit();
    });
  });
  server.on('close', () => {
    if (fd >= 0) closeSync(fd);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
