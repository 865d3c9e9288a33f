// Test helpers: talk to a real relay the way the live checker does (AEP-0003 §10).
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';

let counter = 0;
/** A ULID-shaped unique id (26 chars, Crockford alphabet). */
export function ulid(): string {
  const a = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const t = Date.now()
    .toString(32)
    .toUpperCase()
    .padStart(10, '0')
    .slice(-10)
    .replace(/[ILOU]/g, 'X');
  const n = (counter++)
    .toString(32)
    .toUpperCase()
    .padStart(6, '0')
    .replace(/[ILOU]/g, 'X');
  let r = '';
  for (const b of randomBytes(10)) r += a[b % 32];
  return (t + n + r).slice(0, 26);
}

/** A checker-shaped Event (AEP-0003 §10). */
export function ev(type: string, session: string, seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aep: '0.1',
    id: ulid(),
    type,
    time: new Date().toISOString(),
    source: `aep://live-check/agent/aep-live-check/session/${session}`,
    agent: 'aep-live-check',
    session,
    seq,
    epoch: 0,
    ...extra,
  };
}

/** A checker-shaped command (no seq). */
export function cmd(type: string, session: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aep: '0.1',
    id: ulid(),
    type,
    time: new Date().toISOString(),
    source: 'aep://live-check/agent/aep-live-check',
    agent: 'aep-live-check',
    session,
    capture: 'metadata',
    ...extra,
  };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: unknown;
}

/** One HTTP request; the body is read to the end. */
export function http(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let j: unknown;
        try {
          j = JSON.parse(body);
        } catch {
          j = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: j });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(opts.timeoutMs ?? 10_000, () => req.destroy(new Error('timeout')));
    req.end(opts.body);
  });
}

/** POST Events: one object as JSON, an array as NDJSON (trailing newline, like the checker). */
export function post(base: string, events: Record<string, unknown> | Array<Record<string, unknown>>, token?: string, version = '0.1'): Promise<HttpResult> {
  const ndjson = Array.isArray(events);
  const body = ndjson ? events.map((e) => JSON.stringify(e)).join('\n') + '\n' : JSON.stringify(events);
  const headers: Record<string, string> = { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json', 'aep-version': version };
  if (token) headers['authorization'] = `Bearer ${token}`;
  return http(`${base}/events`, { method: 'POST', headers, body });
}

/** A parsed SSE message. */
export interface SseMsg {
  event?: string;
  data?: string;
  id?: string;
  comments: string[];
}

/** Split an SSE body (LF only) into messages. */
export function parseSse(text: string): SseMsg[] {
  const out: SseMsg[] = [];
  for (const block of text.split('\n\n')) {
    if (block === '') continue;
    const m: SseMsg = { comments: [] };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) m.comments.push(line);
      else if (line.startsWith('data: ')) m.data = line.slice(6);
      else if (line.startsWith('event: ')) m.event = line.slice(7);
      else if (line.startsWith('id: ')) m.id = line.slice(4);
    }
    out.push(m);
  }
  return out;
}

/** A live SSE subscription collecting messages. */
export interface SseClient {
  status: Promise<number>;
  messages: SseMsg[];
  events(): Array<Record<string, unknown>>;
  raw(): string;
  waitFor(pred: (m: SseMsg[]) => boolean, timeoutMs?: number): Promise<void>;
  ended: Promise<void>;
  close(): void;
}

/** Open `GET /stream?…` and collect. */
export function sse(base: string, query: string, opts: { token?: string; headers?: Record<string, string> } = {}): SseClient {
  const messages: SseMsg[] = [];
  let buf = '';
  let all = '';
  let statusResolve!: (n: number) => void;
  const status = new Promise<number>((r) => {
    statusResolve = r;
  });
  let endResolve!: () => void;
  const ended = new Promise<void>((r) => {
    endResolve = r;
  });
  const waiters: Array<() => void> = [];
  const headers: Record<string, string> = { accept: 'text/event-stream', ...(opts.headers ?? {}) };
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  const req = request(`${base}/stream${query ? `?${query}` : ''}`, { headers }, (res) => {
    statusResolve(res.statusCode ?? 0);
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      all += c;
      buf += c;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        messages.push(...parseSse(buf.slice(0, i + 2)));
        buf = buf.slice(i + 2);
      }
      for (const w of waiters.splice(0)) w();
    });
    res.on('end', () => {
      endResolve();
      for (const w of waiters.splice(0)) w();
    });
    res.on('error', () => endResolve());
  });
  req.on('error', () => {
    statusResolve(0);
    endResolve();
  });
  req.end();
  return {
    status,
    messages,
    ended,
    raw: () => all,
    events: () => messages.filter((m) => m.data !== undefined).map((m) => JSON.parse(m.data!) as Record<string, unknown>),
    waitFor(pred, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`SSE wait timed out; got ${messages.length} messages`)), timeoutMs);
        const check = () => {
          if (pred(messages)) {
            clearTimeout(t);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => req.destroy(),
  };
}

/** A WebSocket client recording every frame. */
export class WsClient {
  readonly frames: Array<Record<string, unknown>> = [];
  readonly texts: string[] = [];
  closed = false;
  closeCode: number | undefined;
  private waiters: Array<() => void> = [];
  readonly opened: Promise<void>;
  constructor(readonly ws: WebSocket) {
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    ws.on('message', (d: WebSocket.RawData) => {
      const t = (d as Buffer).toString('utf8');
      this.texts.push(t);
      try {
        this.frames.push(JSON.parse(t) as Record<string, unknown>);
      } catch {
        this.frames.push({ unparsable: t });
      }
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', (code: number) => {
      this.closed = true;
      this.closeCode = code;
      for (const w of this.waiters.splice(0)) w();
    });
  }
  static async open(base: string, token?: string): Promise<WsClient> {
    const u = base.replace(/^http/, 'ws') + '/socket' + (token ? `?access_token=${encodeURIComponent(token)}` : '');
    const c = new WsClient(new WebSocket(u));
    await c.opened;
    return c;
  }
  send(f: unknown): void {
    this.ws.send(typeof f === 'string' ? f : JSON.stringify(f));
  }
  waitFor<T = Record<string, unknown>>(pred: (f: Record<string, unknown>) => boolean, timeoutMs = 5000): Promise<T> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`WS wait timed out; frames: ${JSON.stringify(this.frames).slice(0, 500)}`)), timeoutMs);
      const check = () => {
        const f = this.frames.find(pred);
        if (f) {
          clearTimeout(t);
          resolve(f as T);
        } else if (this.closed) {
          clearTimeout(t);
          reject(new Error(`socket closed (${this.closeCode}); frames: ${JSON.stringify(this.frames).slice(0, 500)}`));
        } else this.waiters.push(check);
      };
      check();
    });
  }
  waitClosed(timeoutMs = 5000): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('socket did not close')), timeoutMs);
      const check = () => {
        if (this.closed) {
          clearTimeout(t);
          resolve(this.closeCode);
        } else this.waiters.push(check);
      };
      check();
    });
  }
  events(): Array<Record<string, unknown>> {
    return this.frames.filter((f) => 'aep' in f);
  }
  close(): void {
    this.ws.terminate();
  }
  async hello(role = 'consumer', extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    this.send({ type: 'hello', versions: ['0.1'], role, identity: { agent: 'aep-live-check', instance: 'live-check' }, capabilities: {}, ...extra });
    return this.waitFor((f) => f['type'] === 'hello');
  }
}

/** Sleep. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The envelope audit the checker applies to delivered Events (AEP-0003 §10). */
export function auditEnvelope(e: Record<string, unknown>): string[] {
  const p: string[] = [];
  for (const k of ['aep', 'id', 'type', 'time', 'source', 'agent']) if (typeof e[k] !== 'string' || e[k] === '') p.push(`${k} missing`);
  if (typeof e['type'] === 'string' && !/^[a-z0-9_.-]+\.[a-z0-9_.-]+$/.test(e['type'])) p.push('type');
  if (Number.isNaN(Date.parse(String(e['time'])))) p.push('time');
  for (const [k, v] of Object.entries(e)) if (v === null) p.push(`${k} null`);
  const t = String(e['type']);
  const isCmd = /^control\.(attention\.respond|cancel|pause|resume)$/.test(t) || /^x\.[^.]+\.control\./.test(t);
  if (t.startsWith('agent.')) {
    for (const k of ['session', 'run', 'step', 'seq']) if (k in e) p.push(`${k} on agent`);
  } else if (isCmd) {
    if (typeof e['session'] !== 'string') p.push('session');
    if ('seq' in e) p.push('seq on command');
  } else if (!t.startsWith('x.')) {
    if (typeof e['session'] !== 'string') p.push('session');
    if (!Number.isInteger(e['seq']) || (e['seq'] as number) < 0) p.push('seq');
  }
  if ('epoch' in e && (!Number.isInteger(e['epoch']) || (e['epoch'] as number) < 0)) p.push('epoch');
  return p;
}

/** Walk a parsed JSON document: `dig(doc, 'capabilities', 'replay', 'buffer')`. */
export function dig(o: unknown, ...path: string[]): unknown {
  let cur: unknown = o;
  for (const k of path) cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
}
