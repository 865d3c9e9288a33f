// Resume state of a live bridge: what has been acknowledged by the receiver, kept in a small JSON
// file flushed (write + rename, atomic on POSIX) after every acknowledged batch, so a restarted
// bridge neither re-sends nor skips anything (issue 15). Positioned events (session-scoped,
// sequenced) are covered exactly by a high-water mark per `(source, session)` (AEP-0001 §5.2, §7.6:
// the resume token is a position; per-session state is keyed by source and session). Seq-less
// events (agent-scoped, commands, `attention.routed`) have no position in AEP 0.1; they are
// remembered by `(source, id)` (the dedupe key, §7.4) in a bounded window.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { BridgeNodeError } from './errors.js';

/** Bounds of the state (documented in docs/bridges.md). */
export interface StateLimits {
  /** `(source, session)` high-water marks kept; the least recently advanced is forgotten past it. */
  maxSessions: number;
  /** Seq-less event keys kept (a ring). */
  maxSeqless: number;
}

/** Default bounds. */
export const DEFAULT_STATE_LIMITS: StateLimits = { maxSessions: 100_000, maxSeqless: 10_000 };

/** Where an event stands for resume purposes. */
export type EventMark = { kind: 'pos'; key: string; epoch: number; seq: number } | { kind: 'seqless'; key: string };

/** Classifies an event: a `(source, session)` position, or a hashed `(source, id)` key. */
export function markOf(e: Record<string, unknown>): EventMark {
  const source = String(e['source']);
  if (typeof e['session'] === 'string' && typeof e['seq'] === 'number') {
    const epoch = typeof e['epoch'] === 'number' ? e['epoch'] : 0;
    return { kind: 'pos', key: `${source}\n${e['session']}`, epoch, seq: e['seq'] };
  }
  // Hashed: the ring then costs 22 bytes per key whatever the ids look like.
  return {
    kind: 'seqless',
    key: createHash('sha256')
      .update(`${source}\n${String(e['id'])}`)
      .digest('base64url')
      .slice(0, 22),
  };
}

interface StateJson {
  version: 1;
  positions: [source: string, session: string, epoch: number, seq: number][];
  seqless: string[];
}

/** The acknowledged state of one bridge, with its file. */
export class ResumeState {
  private readonly positions = new Map<string, { epoch: number; seq: number }>();
  private readonly seqless = new Set<string>();
  private dirty = false;

  constructor(
    readonly path: string | null,
    private readonly limits: StateLimits = DEFAULT_STATE_LIMITS,
  ) {}

  /**
   * Loads the file when it exists. A missing file is a first start; a file that exists but is
   * not this format is refused (`AEP_BRIDGE_STATE`): starting over would re-send everything.
   */
  load(): this {
    if (this.path === null) return this;
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this;
      throw new BridgeNodeError('AEP_BRIDGE_STATE', `cannot read the state file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    let j: StateJson;
    try {
      j = JSON.parse(text) as StateJson;
      if (j.version !== 1 || !Array.isArray(j.positions) || !Array.isArray(j.seqless)) throw new Error('shape');
    } catch {
      throw new BridgeNodeError(
        'AEP_BRIDGE_STATE',
        `the state file ${this.path} is not a bridge state file (version 1); move it away to start over (everything the relay holds is then sent again)`,
      );
    }
    for (const p of j.positions) {
      if (Array.isArray(p) && typeof p[0] === 'string' && typeof p[1] === 'string' && Number.isSafeInteger(p[2]) && Number.isSafeInteger(p[3])) {
        this.positions.set(`${p[0]}\n${p[1]}`, { epoch: p[2], seq: p[3] });
      }
    }
    for (const k of j.seqless) if (typeof k === 'string') this.seqless.add(k);
    return this;
  }

  /** True when the event was acknowledged before (by this process or a previous one). */
  isDone(m: EventMark): boolean {
    if (m.kind === 'seqless') return this.seqless.has(m.key);
    const p = this.positions.get(m.key);
    return p !== undefined && (m.epoch < p.epoch || (m.epoch === p.epoch && m.seq <= p.seq));
  }

  /** Records an acknowledged event (in delivery order). */
  ack(m: EventMark): void {
    this.dirty = true;
    if (m.kind === 'seqless') {
      this.seqless.delete(m.key);
      this.seqless.add(m.key);
      if (this.seqless.size > this.limits.maxSeqless) this.seqless.delete(this.seqless.values().next().value as string);
      return;
    }
    const p = this.positions.get(m.key);
    if (p && (m.epoch < p.epoch || (m.epoch === p.epoch && m.seq <= p.seq))) return; // a backfill below the mark
    this.positions.delete(m.key); // re-insert: insertion order = least recently advanced first
    this.positions.set(m.key, { epoch: m.epoch, seq: m.seq });
    if (this.positions.size > this.limits.maxSessions) this.positions.delete(this.positions.keys().next().value as string);
  }

  /** Number of sessions and seq-less keys held. */
  get size(): { sessions: number; seqless: number } {
    return { sessions: this.positions.size, seqless: this.seqless.size };
  }

  /** Writes the file when something changed (temp file + rename). */
  flush(): void {
    if (this.path === null || !this.dirty) return;
    const j: StateJson = {
      version: 1,
      positions: [...this.positions].map(([k, p]) => {
        const nl = k.indexOf('\n');
        return [k.slice(0, nl), k.slice(nl + 1), p.epoch, p.seq];
      }),
      seqless: [...this.seqless],
    };
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      const tmp = `${this.path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(j) + '\n', { mode: 0o600 });
      renameSync(tmp, this.path);
      this.dirty = false;
    } catch (err) {
      throw new BridgeNodeError('AEP_BRIDGE_STATE', `cannot write the state file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }
}
