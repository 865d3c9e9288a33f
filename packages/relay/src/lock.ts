// One relay per store (contract C6): `<store>.lock` (JSON `{pid, url?, started}`, mode 0600)
// names the running relay, so a second one can say who holds the store. SQLite's exclusive lock
// (store.ts) stays the real guard; this file is what makes the refusal readable.
import { chmodSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { RelayStartError } from './options.js';

/** Locks held by relays of this process (a pid check cannot tell them apart). */
const held = new Set<string>();

type Holder = { pid: number; url?: string; started?: string };

/** The holder named by a lock file, if it is readable. */
export function readHolder(lockPath: string): Holder | undefined {
  try {
    const j = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    if (!Number.isSafeInteger(j['pid'])) return undefined;
    return {
      pid: j['pid'] as number,
      ...(typeof j['url'] === 'string' ? { url: j['url'] } : {}),
      ...(typeof j['started'] === 'string' ? { started: j['started'] } : {}),
    };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The refusal naming the holder, with what to do instead. */
export function lockedError(storePath: string, holder: Holder | undefined): RelayStartError {
  const who = holder ? `relay pid ${holder.pid}${holder.url ? ` at ${holder.url}` : ''}${holder.started ? ` (since ${holder.started})` : ''}` : 'another relay';
  return new RelayStartError(
    'AEP_RELAY_STORE_LOCKED',
    `store ${storePath} is in use by ${who}; stop it, or start this one with --store PATH (another file) or --memory`,
    holder,
  );
}

/** A held store lock. */
export class StoreLock {
  private constructor(
    readonly path: string,
    private readonly body: Holder,
  ) {}

  /** Take `<storePath>.lock`, or throw `AEP_RELAY_STORE_LOCKED` naming the live holder. */
  static acquire(storePath: string): StoreLock {
    const path = `${storePath}.lock`;
    const body: Holder = { pid: process.pid, started: new Date().toISOString() };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(path, JSON.stringify(body) + '\n', { flag: 'wx', mode: 0o600 });
        chmodSync(path, 0o600);
        held.add(path);
        return new StoreLock(path, body);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code !== 'EEXIST')
          throw new RelayStartError('AEP_RELAY_STORE_UNAVAILABLE', `store ${storePath}: cannot write its lock file ${path}: ${e.code ?? e.message}`);
        const holder = readHolder(path);
        const live = holder !== undefined && (holder.pid === process.pid ? held.has(path) : alive(holder.pid));
        if (live) throw lockedError(storePath, holder);
        // Stale (its relay is gone, or unreadable): take it over.
        try {
          unlinkSync(path);
        } catch {
          /* raced: retry */
        }
      }
    }
    throw lockedError(storePath, readHolder(path));
  }

  /** Record the URL once listening. */
  listening(url: string): void {
    this.body.url = url;
    try {
      writeFileSync(this.path, JSON.stringify(this.body) + '\n', { mode: 0o600 });
    } catch {
      /* informative only */
    }
  }

  /** Release (only a lock that is still ours). */
  release(): void {
    held.delete(this.path);
    if (readHolder(this.path)?.pid === process.pid) {
      try {
        unlinkSync(this.path);
      } catch {
        /* gone */
      }
    }
  }
}
