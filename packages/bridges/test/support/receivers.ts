// Real receivers for the live bridge tests: an OTLP/HTTP JSON logs receiver that checks every
// request against the OTLP JSON encoding rules, and a CloudEvents HTTP sink that checks every
// event against CloudEvents 1.0 JSON. Both can be taken down, brought back on the same port,
// answer a chosen status, or hold a request unanswered.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkCloudEvent10, checkOtlpExportLogsRequest, fromAnyValue, fromKeyValues } from './checkers.js';

/** How the receiver answers the next requests. */
export type Mode = { kind: 'ok' } | { kind: 'status'; status: number; count?: number } | { kind: 'hold' };

/** One request as received. */
export interface Received {
  contentType: string;
  body: unknown;
  problems: string[];
  status: number;
  headers: IncomingMessage['headers'];
}

abstract class Receiver<T> {
  private server: Server | null = null;
  port = 0;
  mode: Mode = { kind: 'ok' };
  /** Every request (including refused ones). */
  readonly requests: Received[] = [];
  /** Items of the accepted requests, in arrival order. */
  readonly items: T[] = [];
  /** Requests held unanswered (mode hold). */
  readonly held: ServerResponse[] = [];
  protected abstract readonly path: string | null;
  protected abstract accept(req: IncomingMessage, body: unknown): { problems: string[]; items: T[] };

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Takes the receiver down (connections cut); `start()` brings it back on the same port. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const r of this.held.splice(0)) r.destroy();
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  /** All problems seen in any request. */
  get problems(): string[] {
    return this.requests.flatMap((r) => r.problems);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      const problems: string[] = [];
      if (req.method !== 'POST') problems.push(`method ${req.method}`);
      if (this.path !== null && req.url !== this.path) problems.push(`path ${req.url}`);
      try {
        body = JSON.parse(text);
      } catch {
        problems.push('body is not JSON');
      }
      const rec: Received = { contentType: req.headers['content-type'] ?? '', body, problems, status: 0, headers: req.headers };
      this.requests.push(rec);
      const m = this.mode;
      if (m.kind === 'hold') {
        this.held.push(res);
        return;
      }
      if (m.kind === 'status') {
        if (m.count !== undefined && --m.count <= 0) this.mode = { kind: 'ok' };
        rec.status = m.status;
        res.writeHead(m.status, { 'Content-Type': 'application/json' }).end('{}');
        return;
      }
      const a = this.accept(req, body);
      problems.push(...a.problems);
      this.items.push(...a.items);
      rec.status = 200;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  }
}

/** A LogRecord as received, decoded back to plain JSON. */
export interface ReceivedRecord {
  service: string;
  record: Record<string, unknown>;
  attributes: Record<string, unknown>;
  body: unknown;
}

/** OTLP/HTTP JSON logs receiver at `/v1/logs`. */
export class OtlpReceiver extends Receiver<ReceivedRecord> {
  protected readonly path = '/v1/logs';
  protected accept(req: IncomingMessage, body: unknown): { problems: string[]; items: ReceivedRecord[] } {
    const problems = checkOtlpExportLogsRequest(body);
    if ((req.headers['content-type'] ?? '').split(';')[0] !== 'application/json') problems.push(`content-type ${String(req.headers['content-type'])}`);
    const items: ReceivedRecord[] = [];
    if (problems.length === 0) {
      for (const rl of (body as { resourceLogs: { resource: { attributes: unknown }; scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] })
        .resourceLogs) {
        const service = String(fromKeyValues(rl.resource.attributes)['service.name']);
        for (const sl of rl.scopeLogs)
          for (const r of sl.logRecords) {
            items.push({ service, record: r, attributes: fromKeyValues(r['attributes']), body: r['body'] === undefined ? undefined : fromAnyValue(r['body']) });
          }
      }
    }
    return { problems, items };
  }
}

/** CloudEvents HTTP sink (structured and batched content modes). */
export class CeSink extends Receiver<Record<string, unknown>> {
  protected readonly path = null;
  protected accept(req: IncomingMessage, body: unknown): { problems: string[]; items: Record<string, unknown>[] } {
    const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (ct === 'application/cloudevents+json') return { problems: checkCloudEvent10(body), items: [body as Record<string, unknown>] };
    if (ct === 'application/cloudevents-batch+json' && Array.isArray(body))
      return { problems: body.flatMap((b) => checkCloudEvent10(b)), items: body as Record<string, unknown>[] };
    return { problems: [`content-type ${ct}`], items: [] };
  }
}

/** Polls `cond` until it holds (tests never assert timings; this only bounds a hang). */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** POSTs events to a relay as one NDJSON batch. */
export async function postEvents(relay: string, token: string, events: readonly Record<string, unknown>[]): Promise<void> {
  const res = await fetch(new URL('/events', relay), {
    method: 'POST',
    headers: { 'AEP-Version': '0.1', 'Content-Type': 'application/x-ndjson', Authorization: `Bearer ${token}` },
    body: events.map((e) => JSON.stringify(e)).join('\n') + '\n',
  });
  if (res.status !== 202) throw new Error(`relay refused: ${res.status} ${await res.text()}`);
}

/**
 * A mixed stream: sequenced events of `session` (every 5th a redacted run.started with a canary
 * prompt, every 7th a full tool.completed with a canary result) and, every 4th, an agent-scoped
 * heartbeat (seq-less). Ids are unique per call through `tag`.
 */
export function makeEvents(tag: string, session: string, from: number, n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = from; i < from + n; i++) {
    const base = {
      aep: '0.1',
      id: `${tag}-${session}-${i}`,
      time: `2026-08-01T09:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${String(i).padStart(9, '0').slice(-9)}Z`,
      source: `aep://live-host/agent/bot/session/${session}`,
      agent: 'bot',
    };
    if (i % 4 === 3) {
      out.push({ ...base, source: 'aep://live-host/agent/bot', type: 'agent.heartbeat', severity: 'debug', data: { tick: i } });
    } else if (i % 5 === 0) {
      out.push({ ...base, type: 'run.started', session, seq: i, run: `r${i}`, capture: 'redacted', data: { trigger: 'user', prompt: `CANARY-REDACTED-${i}` } });
    } else if (i % 7 === 0) {
      out.push({
        ...base,
        type: 'tool.completed',
        subject: 'Bash',
        session,
        seq: i,
        capture: 'full',
        data: { tool: { name: 'Bash', call_id: `c${i}` }, status: 'success', result: `CANARY-FULL-${i}`, 'gen_ai.usage.output_tokens': i },
      });
    } else {
      out.push({ ...base, type: 'tool.requested', subject: 'Read', session, seq: i, data: { tool: { name: 'Read', call_id: `c${i}` } } });
    }
  }
  return out;
}
