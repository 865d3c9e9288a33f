// Claims registry (AEP-0003 §4.1 "Claim", §14 "Claims registry"): which live WebSocket
// connections claim which sessions, for command routing (AEP-0004 §4) and the roster (§4.1).
// The in-process implementation of the `ClaimRegistry` seam (backend.ts).
import type { ClaimRegistry } from './backend.js';

/** What a connection said in its `hello` (AEP-0003 §4). */
export interface HelloInfo {
  role: 'emitter' | 'consumer' | 'both';
  identity: Record<string, unknown>;
  capabilities: Record<string, unknown>;
}

/** A connection that can claim sessions (a WebSocket). */
export interface Claimant {
  readonly hello: HelloInfo | null;
  /** Sessions this connection claims. */
  readonly sessions: Set<string>;
  /** sha256 (hex) of the `claim` presented in `hello` (contract C3), or of a relay-generated one. Never the claim itself. */
  readonly claim: string;
  /** Order of arrival (the newest of several connections presenting one claim wins). */
  readonly serial: number;
  /** True while the connection can receive frames. */
  live(): boolean;
  /** Send one text frame as is (a routed command's received bytes, AEP-0004 §4.4). */
  sendText(text: string): void;
}

/**
 * Session → live claimants (a session claim starts with a sequenced Event on the connection and
 * ends with it), and claim digest → connections presenting it (contract C3).
 */
export class Claims implements ClaimRegistry {
  private readonly bySession = new Map<string, Set<Claimant>>();
  private readonly byClaim = new Map<string, Set<Claimant>>();

  /** Called with (claim, null) when a claim gets its first live connection, (claim, now) when it loses its last. */
  onClaimState: (claim: string, offlineSince: number | null) => void = () => {};

  /** A connection said `hello` presenting (the digest of) `conn.claim`. */
  present(conn: Claimant): void {
    let set = this.byClaim.get(conn.claim);
    if (!set) this.byClaim.set(conn.claim, (set = new Set()));
    set.add(conn);
    if (set.size === 1) this.onClaimState(conn.claim, null);
  }

  /** True when a live connection presents this claim digest. */
  liveClaim(claim: string): boolean {
    for (const c of this.byClaim.get(claim) ?? []) if (c.live()) return true;
    return false;
  }

  /** The newest live connection presenting this claim digest. */
  newest(claim: string): Claimant | undefined {
    let best: Claimant | undefined;
    for (const c of this.byClaim.get(claim) ?? []) if (c.live() && (!best || c.serial > best.serial)) best = c;
    return best;
  }

  /** Record that `conn` claims `session` (idempotent). */
  claim(conn: Claimant, session: string): void {
    if (conn.sessions.has(session)) return;
    conn.sessions.add(session);
    let set = this.bySession.get(session);
    if (!set) this.bySession.set(session, (set = new Set()));
    set.add(conn);
  }

  /** Forget every claim of a closed connection. */
  drop(conn: Claimant): void {
    for (const s of conn.sessions) {
      const set = this.bySession.get(s);
      set?.delete(conn);
      if (set && set.size === 0) this.bySession.delete(s);
    }
    const set = this.byClaim.get(conn.claim);
    if (set?.delete(conn) && set.size === 0) {
      this.byClaim.delete(conn.claim);
      this.onClaimState(conn.claim, Date.now());
    }
  }

  /** Live claimants of a session. */
  live(session: string): Claimant[] {
    return [...(this.bySession.get(session) ?? [])].filter((c) => c.live());
  }

  /** Roster entries: one per live (connection, session) pair, members copied from `hello` (AEP-0003 §4.1). */
  roster(): Array<Record<string, unknown>> {
    const entries: Array<Record<string, unknown>> = [];
    for (const [session, set] of this.bySession) {
      for (const c of set) {
        if (!c.live()) continue;
        const e: Record<string, unknown> = { session };
        const ident = c.hello?.identity ?? {};
        if (typeof ident['agent'] === 'string') e['agent'] = ident['agent'];
        if (typeof ident['instance'] === 'string') e['instance'] = ident['instance'];
        const caps = c.hello?.capabilities ?? {};
        if (caps['control'] !== undefined) e['control'] = caps['control'];
        if (caps['emits'] !== undefined) e['emits'] = caps['emits'];
        entries.push(e);
      }
    }
    return entries;
  }
}
