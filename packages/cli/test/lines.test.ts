// The JSONL line reader every streaming command uses: exact line splitting across chunk
// boundaries, CRLF reported, BOM removed, no phantom last line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLineBatches, readLineSpans, readLines } from '../src/util/lines.js';

/** Runs `body` with a fresh temporary directory, removed afterwards whatever happens. */
async function inTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-lines-'));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function collect(chunks: (string | Buffer)[]) {
  const out = [];
  for await (const l of readLines([], Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))))) out.push(l);
  return out.map((l) => ({ n: l.lineNo, text: l.text, crlf: l.crlf }));
}

/** [file, line number, text] of every line of `inputs`, as readLineBatches reads them. */
async function batchLines(inputs: string[], stdin?: Readable): Promise<[string, number, string][]> {
  const out: [string, number, string][] = [];
  for await (const batch of readLineBatches(inputs, stdin)) for (const l of batch) out.push([l.file, l.lineNo, l.text]);
  return out;
}

/** The same, as readLineSpans reads them with a read buffer of `bufferSize` bytes. */
async function spanLines(inputs: string[], stdin: Readable | undefined, bufferSize: number): Promise<[string, number, string][]> {
  const out: [string, number, string][] = [];
  for await (const s of readLineSpans(inputs, stdin, { bufferSize })) {
    for (let k = 0; k < s.count; k++) out.push([s.file, s.firstLineNo + k, s.buf.toString('utf8', s.starts[k]!, s.ends[k]!)]);
  }
  return out;
}

test('splits on \\n, reports \\r\\n, strips the BOM of line 1 only', async () => {
  assert.deepEqual(await collect(['\ufeffa\r\nb\n\ufeffc']), [
    { n: 1, text: 'a', crlf: true },
    { n: 2, text: 'b', crlf: false },
    { n: 3, text: '\ufeffc', crlf: false },
  ]);
});

test('an empty input has no lines; a trailing newline adds no empty line; blank lines are kept', async () => {
  assert.deepEqual(await collect([]), []);
  assert.deepEqual(await collect(['x\n']), [{ n: 1, text: 'x', crlf: false }]);
  assert.deepEqual(await collect(['\n\n']), [
    { n: 1, text: '', crlf: false },
    { n: 2, text: '', crlf: false },
  ]);
});

test('lines and multi-byte characters split across chunks are reassembled', async () => {
  const euro = Buffer.from('€'); // 3 bytes
  assert.deepEqual(await collect([Buffer.from('ab'), euro.subarray(0, 1), euro.subarray(1), Buffer.from('c\r'), Buffer.from('\nd')]), [
    { n: 1, text: 'ab€c', crlf: true },
    { n: 2, text: 'd', crlf: false },
  ]);
});

test('any chunking of any text yields the same lines as a plain split', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.array(fc.nat(40), { maxLength: 10 }), async (text, cuts) => {
      const bytes = Buffer.from(text);
      const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
      const chunks: Buffer[] = [];
      let last = 0;
      for (const p of points) {
        chunks.push(bytes.subarray(last, p));
        last = p;
      }
      chunks.push(bytes.subarray(last));
      const expected = text.split('\n');
      if (expected[expected.length - 1] === '') expected.pop();
      const got = await collect(chunks.filter((c) => c.length > 0));
      assert.deepEqual(
        got.map((g) => g.text + (g.crlf ? '\r' : '')),
        expected.map((e, i) => (i === 0 && e.startsWith('\ufeff') ? e.slice(1) : e)),
      );
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});

test('batches: one array per chunk, numbering continues across batches', async () => {
  const batches = [];
  for await (const b of readLineBatches([], Readable.from([Buffer.from('a\nb\n'), Buffer.from('c\n')]))) batches.push(b.map((l) => l.lineNo));
  assert.deepEqual(batches, [[1, 2], [3]]);
});

// `aep validate` reads byte ranges (issue 19): the same lines, numbers and texts as readLineBatches.
test('readLineSpans yields exactly the lines of readLineBatches, for any chunking (BOM, CRLF, multi-byte, blank lines)', async () => {
  const piece = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('\n', '\r\n', '\r', '\ufeff', '€', '\n\n', '{"a":1}\n'));
  await fc.assert(
    fc.asyncProperty(
      fc.array(piece, { maxLength: 20 }),
      fc.array(fc.nat(80), { maxLength: 12 }),
      fc.integer({ min: 1, max: 40 }),
      async (pieces, cuts, bufferSize) => {
        const bytes = Buffer.from(pieces.join(''));
        const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let last = 0;
        for (const p of points) {
          chunks.push(bytes.subarray(last, p));
          last = p;
        }
        chunks.push(bytes.subarray(last));
        const stdin = () => Readable.from(chunks.map((c) => Buffer.from(c)));
        assert.deepEqual(await spanLines([], stdin(), bufferSize), await batchLines([], stdin()));
      },
    ),
    { numRuns: 500 },
  );
});

// Files are read into one reused buffer (issue 19): a line may cross any number of reads, the
// buffer grows for a line longer than itself, and several files are one stream with their own
// numbering and BOM.
test('readLineSpans over files yields exactly the lines of readLineBatches, whatever the buffer size', () =>
  inTempDir(async (dir) => {
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.constantFrom('\n', '\r\n', '\r', '\ufeff', '€', '\n\n', '{"a":1}\n', 'x'.repeat(40)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(piece, { maxLength: 20 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 64 }),
        async (texts, bufferSize) => {
          const files = texts.map((pieces, i) => {
            const f = join(dir, `in-${i}.jsonl`);
            writeFileSync(f, pieces.join(''));
            return f;
          });
          assert.deepEqual(await spanLines(files, undefined, bufferSize), await batchLines(files));
        },
      ),
      { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
    );
  }));

test('readLineSpans: a missing file or a directory rejects with its errno code', () =>
  inTempDir(async (dir) => {
    const codeOf = async (f: string) => {
      try {
        for await (const s of readLineSpans([f])) void s;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code;
      }
      return 'no error';
    };
    assert.equal(await codeOf(join(dir, 'missing.jsonl')), 'ENOENT');
    assert.equal(await codeOf(dir), 'EISDIR');
  }));

test('readLineSpans: stdin between two files (files read ahead and a stream share the two buffers)', () =>
  inTempDir(async (dir) => {
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    // Lines longer than the buffer in both, so every path grows a buffer.
    writeFileSync(a, `first\n${'a'.repeat(100)}\nlast-a`);
    writeFileSync(b, `${'b'.repeat(70)}\r\nb2\n`);
    const stdin = () => Readable.from([Buffer.from('s1\n' + 's'.repeat(90)), Buffer.from('\ns3')]);
    const want = await batchLines([a, '-', b], stdin());
    for (const bufferSize of [1, 7, 64, 1024]) assert.deepEqual(await spanLines([a, '-', b], stdin(), bufferSize), want, `buffer ${bufferSize}`);
    assert.equal(want.length, 8);
  }));

test('readLineSpans: a consumer that stops or throws with a read in flight leaves no error behind', () =>
  inTempDir(async (dir) => {
    const f = join(dir, 'big.jsonl');
    writeFileSync(f, 'line\n'.repeat(10_000));
    for (const bufferSize of [16, 4096]) {
      let seen = 0;
      for await (const s of readLineSpans([f], undefined, { bufferSize })) {
        seen += s.count;
        break; // the next read has already started
      }
      assert.ok(seen > 0);
      await assert.rejects(
        (async () => {
          for await (const s of readLineSpans([f], undefined, { bufferSize })) {
            void s;
            throw new Error('consumer failed');
          }
        })(),
        /consumer failed/,
      );
      // And the file reads in full afterwards.
      let lines = 0;
      for await (const s of readLineSpans([f], undefined, { bufferSize })) lines += s.count;
      assert.equal(lines, 10_000);
    }
  }));
