// HTTP senders of the live bridges: OTLP/HTTP JSON logs (`POST {endpoint}/v1/logs`) and the
// CloudEvents HTTP binding in structured mode. One status policy for both, from OTLP/HTTP
// "Failures": 408, 429, 502, 503, 504 and network errors are retried (honouring Retry-After);
// every other status is not retried. Of those, 400 (and 413 for a single item) means the receiver
// refuses that content for good: it is dropped, counted and logged. Anything else (401, 403, 404,
// 500, …) is a configuration or receiver fault: the bridge stops without dropping anything and
// resumes from its state file when started again (docs/decisions.md "Bridges").
import { CE_BATCH_MEDIA_TYPE, CE_STRUCTURED_MEDIA_TYPE, otlpExportRequest } from '../index.js';
import type { CloudEvent, OtlpLogRecord } from '../index.js';

/** Outcome of one send. */
export interface SendResult {
  /** Leading items done: delivered, or refused for good (then also counted in `rejected`). */
  done: number;
  /** Of the done items, how many the receiver refused for good (dropped). */
  rejected: number;
  /** Why a refused item was refused (no content of it). */
  rejectReason?: string;
  /** Why the items after `done` were not done; absent = all done. */
  failure?: { kind: 'retry'; message: string; retryAfterMs?: number } | { kind: 'fatal'; message: string };
}

/** Sends batches to one receiver. */
export interface Sender<T> {
  /** The receiver, for log lines (no credentials, no query). */
  readonly target: string;
  send(items: readonly T[]): Promise<SendResult>;
}

/** A URL for log lines: scheme, host, port and path only (tokens may ride in userinfo or the query). */
export function displayUrl(u: string): string {
  try {
    const x = new URL(u);
    return `${x.protocol}//${x.host}${x.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

const RETRYABLE = new Set([408, 429, 502, 503, 504]);

function retryAfter(res: Response): number | undefined {
  const h = res.headers.get('retry-after');
  if (h === null) return undefined;
  const s = Number(h);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 300_000);
  const t = Date.parse(h);
  return Number.isFinite(t) ? Math.min(Math.max(t - Date.now(), 0), 300_000) : undefined;
}

type Verdict =
  | { kind: 'ok' }
  | { kind: 'retry'; message: string; retryAfterMs?: number }
  | { kind: 'reject'; message: string }
  | { kind: 'too-large'; message: string }
  | { kind: 'fatal'; message: string };

async function post(
  url: string,
  body: string,
  contentType: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ verdict: Verdict; res?: Response; text?: string }> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': contentType }, body, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { verdict: { kind: 'retry', message: `cannot reach ${displayUrl(url)}: ${e.cause?.code ?? e.name}` } };
  }
  const text = await res.text().catch(() => '');
  const s = res.status;
  if (s >= 200 && s < 300) return { verdict: { kind: 'ok' }, res, text };
  const what = `${displayUrl(url)} answered HTTP ${s}`;
  if (RETRYABLE.has(s)) {
    const ra = retryAfter(res);
    return { verdict: ra === undefined ? { kind: 'retry', message: what } : { kind: 'retry', message: what, retryAfterMs: ra }, res };
  }
  if (s === 413) return { verdict: { kind: 'too-large', message: what }, res };
  if (s === 400) return { verdict: { kind: 'reject', message: what }, res };
  return { verdict: { kind: 'fatal', message: `${what} (not retried: fix the receiver or its address and start again; nothing was dropped)` }, res };
}

/** Options of the OTLP/HTTP JSON sender. */
export interface OtlpSenderOptions {
  /** Base URL (`http://host:4318`; `/v1/logs` is appended) or a URL already ending in `/v1/logs`. */
  endpoint: string;
  /** Extra request headers (e.g. authorization); never logged. */
  headers?: Record<string, string>;
  /** Per-request timeout; default 10 000 ms. */
  timeoutMs?: number;
}

/** The logs URL of an OTLP/HTTP endpoint (OTLP/HTTP: the signal path `/v1/logs` on the base URL). */
export function otlpLogsUrl(endpoint: string): string {
  const u = new URL(endpoint);
  if (!u.pathname.endsWith('/v1/logs')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/logs`;
  return u.toString();
}

/** Sends pinned LogRecords as one `ExportLogsServiceRequest` per batch (`application/json`). */
export function otlpHttpSender(o: OtlpSenderOptions): Sender<OtlpLogRecord> {
  const url = otlpLogsUrl(o.endpoint);
  const headers = o.headers ?? {};
  const timeoutMs = o.timeoutMs ?? 10_000;
  const sendAll = async (items: readonly OtlpLogRecord[]): Promise<SendResult> => {
    const { verdict, text } = await post(url, JSON.stringify(otlpExportRequest(items)), 'application/json', headers, timeoutMs);
    switch (verdict.kind) {
      case 'ok': {
        // OTLP partial success: the receiver accepted the request but rejected some records.
        let rejected = 0;
        try {
          const j = JSON.parse(text ?? '') as { partialSuccess?: { rejectedLogRecords?: number | string; errorMessage?: string } };
          rejected = Number(j.partialSuccess?.rejectedLogRecords ?? 0) || 0;
          if (rejected > 0)
            return { done: items.length, rejected, rejectReason: `${displayUrl(url)} rejected ${rejected} of ${items.length} records (partial success)` };
        } catch {
          /* an empty or non-JSON 2xx body is a full success */
        }
        return { done: items.length, rejected: 0 };
      }
      case 'retry':
        return {
          done: 0,
          rejected: 0,
          failure:
            verdict.retryAfterMs === undefined
              ? { kind: 'retry', message: verdict.message }
              : { kind: 'retry', message: verdict.message, retryAfterMs: verdict.retryAfterMs },
        };
      case 'reject':
        return { done: items.length, rejected: items.length, rejectReason: verdict.message };
      case 'too-large': {
        if (items.length === 1) return { done: 1, rejected: 1, rejectReason: `${verdict.message} for a single record` };
        // Split and send the halves in order; stop at the first half that does not finish.
        const mid = Math.ceil(items.length / 2);
        const a = await sendAll(items.slice(0, mid));
        if (a.failure || a.done < mid) return a;
        const b = await sendAll(items.slice(mid));
        const out: SendResult = { done: a.done + b.done, rejected: a.rejected + b.rejected };
        const reason = b.rejectReason ?? a.rejectReason;
        if (reason !== undefined) out.rejectReason = reason;
        if (b.failure) out.failure = b.failure;
        return out;
      }
      case 'fatal':
        return { done: 0, rejected: 0, failure: { kind: 'fatal', message: verdict.message } };
    }
  };
  return { target: displayUrl(url), send: sendAll };
}

/** Options of the CloudEvents HTTP sender. */
export interface CeSenderOptions {
  /** The sink URL (POSTed to as is). */
  sink: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /**
   * `structured` (default): one `application/cloudevents+json` request per event, in order.
   * `batch`: one `application/cloudevents-batch+json` request per batch (CE HTTP binding §3.3).
   */
  mode?: 'structured' | 'batch';
}

/** Delivers CloudEvents over the CE HTTP binding (structured content mode, or batched). */
export function ceHttpSender(o: CeSenderOptions): Sender<CloudEvent> {
  const headers = o.headers ?? {};
  const timeoutMs = o.timeoutMs ?? 10_000;
  const target = displayUrl(o.sink);
  if (o.mode === 'batch') {
    return {
      target,
      async send(items) {
        const { verdict } = await post(o.sink, JSON.stringify(items), `${CE_BATCH_MEDIA_TYPE}; charset=utf-8`, headers, timeoutMs);
        if (verdict.kind === 'ok') return { done: items.length, rejected: 0 };
        if (verdict.kind === 'retry')
          return {
            done: 0,
            rejected: 0,
            failure:
              verdict.retryAfterMs === undefined
                ? { kind: 'retry', message: verdict.message }
                : { kind: 'retry', message: verdict.message, retryAfterMs: verdict.retryAfterMs },
          };
        if (verdict.kind === 'fatal') return { done: 0, rejected: 0, failure: verdict };
        return { done: items.length, rejected: items.length, rejectReason: verdict.message };
      },
    };
  }
  return {
    target,
    async send(items) {
      let done = 0;
      let rejected = 0;
      let rejectReason: string | undefined;
      for (const ce of items) {
        const { verdict } = await post(o.sink, JSON.stringify(ce), `${CE_STRUCTURED_MEDIA_TYPE}; charset=utf-8`, headers, timeoutMs);
        if (verdict.kind === 'retry' || verdict.kind === 'fatal') {
          const failure: SendResult['failure'] =
            verdict.kind === 'fatal'
              ? verdict
              : verdict.retryAfterMs === undefined
                ? { kind: 'retry', message: verdict.message }
                : { kind: 'retry', message: verdict.message, retryAfterMs: verdict.retryAfterMs };
          const r: SendResult = { done, rejected, failure };
          if (rejectReason !== undefined) r.rejectReason = rejectReason;
          return r;
        }
        if (verdict.kind !== 'ok') {
          rejected++;
          rejectReason = verdict.message;
        }
        done++;
      }
      const r: SendResult = { done, rejected };
      if (rejectReason !== undefined) r.rejectReason = rejectReason;
      return r;
    },
  };
}
