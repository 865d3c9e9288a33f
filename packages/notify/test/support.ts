// Test support for the notifier: a real relay, a real emitting agent (an `@aep/client`
// EmitterConnection that checks approval proofs the way an emitter must, C1), and local HTTP
// receivers standing in for ntfy, a webhook endpoint and a push service.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { EmitterConnection, subscribe } from '@aep/client/node';
import type { IncomingCommand, WireEvent } from '@aep/client/node';
import { approvalDigest, checkApprovalProof, optionEffect, APPROVAL_PROOF_ATTR } from '@aep/protocol';
import { startRelay } from '@aep/relay';
import type { RelayHandle } from '@aep/relay';

export const TOKEN = 'notify-test-token-0123456789abcdef';

/** A relay on port 0 with a memory store. */
export async function testRelay(push?: { vapidPublicKey: string; allowHttpLoopback?: boolean }): Promise<RelayHandle> {
  return startRelay({ port: 0, storePath: null, token: TOKEN, ...(push ? { push } : {}) });
}

/** One request a receiver got. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: unknown;
}

/** A local HTTP receiver that records every request and answers `status`. */
export class Receiver {
  readonly got: Received[] = [];
  status = 200;
  private server: Server | null = null;
  private waiters: Array<{ pred: (r: Received) => boolean; resolve: (r: Received) => void }> = [];
  url = '';
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, text, json };
        this.got.push(r);
        res.writeHead(this.statusFor(r), { 'Content-Type': 'application/json' });
        res.end('{}');
        this.waiters = this.waiters.filter((w) => {
          if (w.pred(r)) {
            w.resolve(r);
            return false;
          }
          return true;
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    return this;
  }
  /** Override to answer per request. */
  statusFor(_r: Received): number {
    return this.status;
  }
  wait(pred: (r: Received) => boolean, what: string, timeoutMs = 30_000): Promise<Received> {
    const have = this.got.find(pred);
    if (have) return Promise.resolve(have);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`timed out waiting for ${what}; got ${this.got.length}: ${this.got.map((g) => g.text.slice(0, 200)).join('\n')}`)),
        timeoutMs,
      );
      this.waiters.push({
        pred,
        resolve: (r) => {
          clearTimeout(t);
          resolve(r);
        },
      });
    });
  }
  async close(): Promise<void> {
    if (this.server)
      await new Promise<void>((resolve) => {
        this.server!.close(() => resolve());
        this.server!.closeAllConnections();
      });
  }
}

/** A real agent: raises requests at `full` and answers commands like an emitter (C1 proof check). */
export class TestAgent {
  readonly commands: IncomingCommand[] = [];
  private readonly texts = new Map<string, { text?: string; session: string; open: boolean }>();
  private readonly sessions = new Set<string>();
  private constructor(readonly conn: EmitterConnection) {}
  static async start(url: string, agent = 'claude-code'): Promise<TestAgent> {
    const conn = await EmitterConnection.connect({ url, token: TOKEN, agent, capture: 'full', control: { accepts: ['control.attention.respond'] } });
    const a = new TestAgent(conn);
    conn.onCommand('control.attention.respond', (cmd) => a.decide(cmd));
    return a;
  }
  private decide(cmd: IncomingCommand) {
    this.commands.push(cmd);
    const e = cmd.event as WireEvent & Record<string, unknown>;
    const req = typeof e.subject === 'string' ? this.texts.get(e.subject) : undefined;
    if (!req || !req.open) return { status: 'rejected' as const, reason: 'refused' as const, detail: 'not pending' };
    const answer = (e.data?.['answer'] ?? {}) as Record<string, unknown>;
    const option = typeof answer['option'] === 'string' ? answer['option'] : undefined;
    if (
      req.text !== undefined &&
      option !== undefined &&
      optionEffect(option) !== 'deny' &&
      !checkApprovalProof(String(e.subject), req.text, e[APPROVAL_PROOF_ATTR])
    ) {
      return { status: 'rejected' as const, reason: 'invalid' as const, detail: 'approvalproof missing or wrong' };
    }
    req.open = false;
    const id = String(e.subject);
    return {
      status: 'accepted' as const,
      after: () => {
        this.conn.emit(req.session, 'attention.answered', { answer, via: 'control' }, { subject: id, cause: e.id, capture: 'full' });
        this.conn.emit(req.session, 'attention.resolved', { resolution: 'answered' }, { subject: id, cause: e.id });
      },
    };
  }
  /** Raise a request; `approval` adds the approval digest of the prompt (a permission request's complete text). */
  request(
    session: string,
    data: Record<string, unknown>,
    attrs: { subject?: string; capture?: 'metadata' | 'redacted' | 'full'; approval?: boolean; severity?: 'notice' | 'warning' } = {},
  ): WireEvent {
    if (!this.sessions.has(session)) {
      this.sessions.add(session);
      this.conn.emit(session, 'session.started', {});
    }
    const ext: Record<string, string> = {};
    if (attrs.approval) ext['approvaldigest'] = approvalDigest(String(data['prompt']));
    const e = this.conn.emit(session, 'attention.requested', data, {
      ...(attrs.subject ? { subject: attrs.subject } : {}),
      capture: attrs.capture ?? 'full',
      severity: attrs.severity ?? 'notice',
      ...(Object.keys(ext).length ? { extensions: ext } : {}),
    });
    this.texts.set(e.id, { session, open: true, ...(attrs.approval ? { text: String(data['prompt']) } : {}) });
    return e;
  }
  /** Close a request without an answer (dismissed). */
  dismiss(session: string, id: string): void {
    const r = this.texts.get(id);
    if (r) r.open = false;
    this.conn.emit(session, 'attention.resolved', { resolution: 'dismissed' }, { subject: id });
  }
  close(): Promise<void> {
    return this.conn.close(500);
  }
}

/** Collect every event of `filter` from the relay (live, from the start). */
export function collect(
  url: string,
  filter: Record<string, unknown>,
): { events: WireEvent[]; wait(pred: (e: WireEvent) => boolean, what: string): Promise<WireEvent>; close(): void } {
  const events: WireEvent[] = [];
  let waiters: Array<{ pred: (e: WireEvent) => boolean; resolve: (e: WireEvent) => void }> = [];
  const sub = subscribe({ url, token: TOKEN, filter, from: 'all' }, (e) => {
    events.push(e);
    waiters = waiters.filter((w) => {
      if (w.pred(e)) {
        w.resolve(e);
        return false;
      }
      return true;
    });
  });
  return {
    events,
    wait(pred, what) {
      const have = events.find(pred);
      if (have) return Promise.resolve(have);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; saw ${JSON.stringify(events)}`)), 30_000);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(t);
            resolve(e);
          },
        });
      });
    },
    close: () => sub.close(),
  };
}

/** Poll (bounded) until `fn` returns a value. */
export async function until<T>(fn: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
