// Sending `control.attention.respond` from the browser (AEP-0004, sender algorithm brief 06 §5.4):
// 1. WebSocket to `/socket` with the token (browsers cannot set headers on a WebSocket, so the
//    sanctioned `?access_token=` carrier is used, brief 05 §8.1); `hello` as a consumer;
// 2. subscribe to the target session BEFORE sending so the ack cannot be missed;
// 3. send, wait up to the ack window for `control.accepted` / `control.rejected` (cause = command
//    id) or a cause-matched relay `error` frame; 4. on silence resend the SAME bytes (same id), a
//    bounded number of times, then report `timeout` locally.

/** Crockford base32, the ULID alphabet. */
const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID (time-sortable, 26 chars) from `crypto.getRandomValues`; the command's idempotency key. */
export function ulid(now: number = Date.now()): string {
  let t = now;
  let time = '';
  for (let i = 0; i < 10; i++) { time = B32[t % 32] + time; t = Math.floor(t / 32); }
  const rnd = new Uint8Array(16);
  crypto.getRandomValues(rnd);
  let r = '';
  for (let i = 0; i < 16; i++) r += B32[(rnd[i] ?? 0) % 32];
  return time + r;
}

/** How a command ended, as the UI shows it. */
export type SendOutcome =
  | { status: 'accepted'; ack: Record<string, unknown> }
  | { status: 'rejected'; ack: Record<string, unknown>; reason: string; detail?: string }
  | { status: 'refused'; code: string; detail?: string }
  | { status: 'timeout' }
  | { status: 'error'; detail: string };

/** One roster entry (AEP-0003 §4.1): a live claim of a session by a connection. */
export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  control?: { accepts?: string[]; ack_window_ms?: number };
}

/**
 * A pending request whose asker has no live connection (contract C4, the roster reply's
 * top-level `offline` member): not answerable until that agent comes back.
 */
export interface OfflineEntry {
  request: string;
  session: string;
  agent?: string;
  source?: string;
  /** RFC 3339 time the asker went away. */
  since?: string;
}

/** One roster reply: live claims, and the pending requests whose asker is offline (C4). */
export interface RosterSnapshot {
  entries: RosterEntry[];
  offline: OfflineEntry[];
}

/** The well-formed `offline` items of a roster frame (absent on relays without C4: empty). */
export function offlineOf(frame: Record<string, unknown>): OfflineEntry[] {
  const raw = frame['offline'];
  if (!Array.isArray(raw)) return [];
  const out: OfflineEntry[] = [];
  for (const o of raw) {
    if (typeof o !== 'object' || o === null) continue;
    const r = o as Record<string, unknown>;
    if (typeof r['request'] !== 'string' || typeof r['session'] !== 'string') continue;
    const e: OfflineEntry = { request: r['request'], session: r['session'] };
    if (typeof r['agent'] === 'string') e.agent = r['agent'];
    if (typeof r['source'] === 'string') e.source = r['source'];
    if (typeof r['since'] === 'string') e.since = r['since'];
    out.push(e);
  }
  return out;
}

/**
 * The command types every live claimant of `session` declares in `control.accepts` (a UI hint:
 * the target's declaration stays authoritative at command time, AEP-0004 §4.2).
 */
export function acceptsOf(entries: readonly RosterEntry[], session: string): Set<string> {
  const lists: string[][] = [];
  for (const c of entries) {
    if (c.session !== session) continue;
    const declared = c.control?.accepts;
    lists.push(Array.isArray(declared) ? declared.filter((x): x is string => typeof x === 'string') : []);
  }
  const [first, ...rest] = lists;
  return new Set((first ?? []).filter((t) => rest.every((l) => l.includes(t))));
}

/** Whether a session can take an answer now, from a roster snapshot (AEP-0004 §4.2, §4.5). */
export function routeState(entries: readonly RosterEntry[], session: string): 'live' | 'no-route' | 'ambiguous' | 'unsupported' {
  const claims = entries.filter((e) => e.session === session);
  if (claims.length === 0) return 'no-route';
  if (claims.length > 1) return 'ambiguous';
  const accepts = claims[0]?.control?.accepts;
  return Array.isArray(accepts) && accepts.includes('control.attention.respond') ? 'live' : 'unsupported';
}

interface Waiter {
  resolve: (o: SendOutcome) => void;
}

/** Options for {@link ControlChannel}. */
export interface ControlOptions {
  base: string;
  token: string;
  /** Every Event frame received (the acks and outcomes): fed to the store too. */
  onEvent?: (e: unknown) => void;
  ackWindowMs?: number;
  retries?: number;
}

/**
 * One authenticated WebSocket per tab, opened on first use. Commands are plain objects; they are
 * serialized once so a retry resends byte-identical JSON (AEP-0004 §2: same id, same source).
 */
export class ControlChannel {
  private ws: WebSocket | null = null;
  private ready: Promise<WebSocket> | null = null;
  private readonly subscribed = new Map<string, Promise<void>>();
  private readonly subWaiters = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();
  private readonly waiters = new Map<string, Waiter>();
  private subCounter = 0;
  private readonly rosterWaiters = new Map<string, (snap: RosterSnapshot) => void>();
  private rosterAdvertised = false;
  private readonly instance = ulid().slice(-8).toLowerCase();

  constructor(private readonly opts: ControlOptions) {}

  private connect(): Promise<WebSocket> {
    if (this.ready) return this.ready;
    this.ready = new Promise<WebSocket>((resolve, reject) => {
      const url = new URL('socket', this.opts.base);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      if (this.opts.token) url.searchParams.set('access_token', this.opts.token);
      let ws: WebSocket;
      try { ws = new WebSocket(url); } catch (err) { reject(err instanceof Error ? err : new Error(String(err))); return; }
      let helloed = false;
      ws.onopen = () => {
        ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: 'aep-inbox', instance: `browser/${this.instance}` } }));
      };
      ws.onmessage = (ev: MessageEvent) => {
        let f: unknown;
        try { f = JSON.parse(String(ev.data)); } catch { return; }
        if (typeof f !== 'object' || f === null) return;
        const frame = f as Record<string, unknown>;
        const type = typeof frame['type'] === 'string' ? frame['type'] : '';
        if (!helloed) {
          if (type === 'hello') {
            helloed = true;
            this.ws = ws;
            const caps = frame['capabilities'];
            // Ask for a roster only where it is advertised (AEP-0003 §4.1 rule 1).
            this.rosterAdvertised = typeof caps === 'object' && caps !== null && typeof (caps as Record<string, unknown>)['roster'] === 'object';
            resolve(ws);
            return;
          }
          if (type === 'error') { reject(new Error(`${String(frame['code'])}${frame['detail'] ? `: ${String(frame['detail'])}` : ''}`)); return; }
        }
        this.onFrame(type, frame);
      };
      ws.onerror = () => { if (!helloed) reject(new Error('could not open the control connection (is the token right?)')); };
      ws.onclose = () => {
        if (!helloed) reject(new Error('the relay closed the control connection'));
        this.ws = null;
        this.ready = null;
        this.subscribed.clear();
        for (const [, w] of this.subWaiters) w.reject(new Error('control connection closed'));
        this.subWaiters.clear();
      };
    });
    this.ready.catch(() => { this.ready = null; });
    return this.ready;
  }

  private onFrame(type: string, frame: Record<string, unknown>): void {
    if (type.includes('.')) {
      // An Event (AEP-0003 §2: a dot means Event). Acks settle their command.
      this.opts.onEvent?.(frame);
      const cause = frame['cause'];
      if ((type === 'control.accepted' || type === 'control.rejected') && typeof cause === 'string') {
        const w = this.waiters.get(cause);
        if (w) {
          this.waiters.delete(cause);
          if (type === 'control.accepted') w.resolve({ status: 'accepted', ack: frame });
          else {
            const data = (frame['data'] ?? {}) as Record<string, unknown>;
            const out: SendOutcome = { status: 'rejected', ack: frame, reason: typeof data['reason'] === 'string' ? data['reason'] : 'unknown' };
            if (typeof data['detail'] === 'string') out.detail = data['detail'];
            w.resolve(out);
          }
        }
      }
      return;
    }
    if (type === 'subscribed' && typeof frame['id'] === 'string') {
      this.subWaiters.get(frame['id'])?.resolve();
      this.subWaiters.delete(frame['id']);
      return;
    }
    if (type === 'error') {
      const code = typeof frame['code'] === 'string' ? frame['code'] : 'error';
      const detail = typeof frame['detail'] === 'string' ? frame['detail'] : undefined;
      if (typeof frame['id'] === 'string' && this.subWaiters.has(frame['id'])) {
        this.subWaiters.get(frame['id'])?.reject(new Error(`subscribe refused: ${code}`));
        this.subWaiters.delete(frame['id']);
      }
      // Any cause-matched error frame is that command's refusal, whatever the code (brief 06 §5.1).
      if (typeof frame['cause'] === 'string') {
        const w = this.waiters.get(frame['cause']);
        if (w) {
          this.waiters.delete(frame['cause']);
          const out: SendOutcome = { status: 'refused', code };
          if (detail !== undefined) out.detail = detail;
          w.resolve(out);
        }
      }
      return;
    }
    if (type === 'roster' && typeof frame['id'] === 'string' && Array.isArray(frame['entries'])) {
      const w = this.rosterWaiters.get(frame['id']);
      if (w) { this.rosterWaiters.delete(frame['id']); w({ entries: frame['entries'] as RosterEntry[], offline: offlineOf(frame) }); }
      return;
    }
    if (type === 'ping') this.ws?.send(JSON.stringify({ type: 'pong', t: frame['t'] }));
    // Unknown frames are ignored (AEP-0003 §2).
  }

  private subscribeSession(ws: WebSocket, session: string): Promise<void> {
    const have = this.subscribed.get(session);
    if (have) return have;
    const id = `inbox-${++this.subCounter}`;
    const p = new Promise<void>((resolve, reject) => {
      this.subWaiters.set(id, { resolve, reject });
      ws.send(JSON.stringify({ type: 'subscribe', id, filter: { session } }));
      setTimeout(() => {
        if (this.subWaiters.has(id)) { this.subWaiters.delete(id); reject(new Error('the relay did not confirm the subscription')); }
      }, 10_000);
    });
    this.subscribed.set(session, p);
    p.catch(() => this.subscribed.delete(session));
    return p;
  }

  /** Send one command event and settle it: ack, nack, relay refusal, or local timeout. */
  async send(command: Record<string, unknown> & { id: string; session: string }): Promise<SendOutcome> {
    let ws: WebSocket;
    try {
      ws = await this.connect();
      await this.subscribeSession(ws, command.session);
    } catch (err) {
      return { status: 'error', detail: err instanceof Error ? err.message : String(err) };
    }
    const bytes = JSON.stringify(command);
    const windowMs = this.opts.ackWindowMs ?? 10_000;
    const retries = this.opts.retries ?? 2;
    return new Promise<SendOutcome>((resolve) => {
      let tries = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (o: SendOutcome) => { if (timer !== undefined) clearTimeout(timer); resolve(o); };
      this.waiters.set(command.id, { resolve: done });
      const attempt = () => {
        if (!this.waiters.has(command.id)) return;
        if (tries > retries) { this.waiters.delete(command.id); done({ status: 'timeout' }); return; }
        tries++;
        const sock = this.ws ?? ws;
        try { sock.send(bytes); } catch { /* closed: the retry below reconnects */ }
        timer = setTimeout(() => {
          if (this.ws) { attempt(); return; }
          this.connect().then((w) => this.subscribeSession(w, command.session)).then(attempt, attempt);
        }, windowMs);
      };
      attempt();
    });
  }

  /**
   * The relay's roster snapshot (AEP-0003 §4.1): live (connection, session) claims with their
   * declared `control`, and (contract C4) the pending requests whose asker is offline. Null when
   * unavailable (not advertised, no reply in 5 s, no connection).
   */
  async roster(): Promise<RosterSnapshot | null> {
    let ws: WebSocket;
    try { ws = await this.connect(); } catch { return null; }
    if (!this.rosterAdvertised) return null;
    const id = `roster-${++this.subCounter}`;
    return new Promise((resolve) => {
      const t = setTimeout(() => { this.rosterWaiters.delete(id); resolve(null); }, 5_000);
      this.rosterWaiters.set(id, (snap) => { clearTimeout(t); resolve(snap); });
      try { ws.send(JSON.stringify({ type: 'roster', id })); } catch { clearTimeout(t); resolve(null); }
    });
  }

  /** Settle a pending command from an ack seen on another transport (the SSE stream). */
  settleFromEvent(e: Record<string, unknown>): void {
    if (typeof e['type'] === 'string' && typeof e['cause'] === 'string' && this.waiters.has(e['cause'])) {
      this.onFrame(e['type'], e);
    }
  }

  /** Close the socket. */
  close(): void {
    this.ws?.close(1000);
  }
}
