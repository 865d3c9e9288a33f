// The MCP side of `aep mcp wrap`: a line-level JSON-RPC proxy between an MCP host (client) and a
// server. Everything passes through byte-for-byte except (MCP 2025-11-25 "Client Features:
// Elicitation"):
//  - the host's `initialize` request: form and URL elicitation are advertised to the server even
//    when the host lacks them (the bridge can answer through AEP);
//  - server -> client `elicitation/create`: asked through AEP (one attention.requested) and, when
//    the host supports that mode, also through the host; the first answer wins, the other is
//    withdrawn (`notifications/cancelled` to the host, `attention.resolved{dismissed}` on AEP);
//  - the host's responses to elicitations the bridge settled itself, and the server's
//    `notifications/cancelled` for elicitations the host never saw;
//  - steering (AEP `control.cancel`, README "Steering"): the open elicitations are answered
//    `cancel`, and the host's requests in flight are cancelled at the server with
//    `notifications/cancelled` (MCP "Cancellation") and answered to the host with an error; the
//    server's late responses to them are dropped.
import type { Writable } from 'node:stream';
import {
  CancelledNotificationSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  InitializeRequestSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { elicitationToForm } from '@aep/protocol';
import type { CaptureLevel, ElicitationContentValue, ElicitationFormData, FormConstraints } from '@aep/protocol';
import { LineSplitter } from './lines.js';
import { BRIDGE_JSONRPC_ERRORS } from './errors.js';

/** How an AEP ask ended, as the bridge needs it for the MCP result (see README "Outcome mapping"). */
export type AskOutcome =
  | { action: 'accept'; content?: Record<string, ElicitationContentValue> }
  | { action: 'decline' }
  | { action: 'cancel'; why: 'timeout' | 'dismissed' | 'cancel' }
  /** The AEP side could not deliver the question after all (e.g. the emitter failed). */
  | { action: 'unavailable'; reason: string };

/** One question in flight on the AEP side. */
export interface AskHandle {
  /** The `attention.requested` event id. */
  readonly id: string;
  readonly outcome: Promise<AskOutcome>;
  /** Withdraw the question (`attention.resolved{dismissed}`); no-op once settled. */
  withdraw(reason: string): void;
}

/** A form question for the AEP side: the mapped form plus what is needed to restore content. */
export interface FormAsk {
  data: ElicitationFormData;
  /** The MCP constraints a form cannot carry (integer, lengths, format, item counts): checked by the engine. */
  constraints: FormConstraints;
  /** The MCP `requestedSchema` (for type restoration of the answer). */
  requestedSchema: unknown;
  /** The elicitation `message` (real text; the port applies capture to it). */
  message: string;
  timeoutMs: number;
}

/** A URL-mode question for the AEP side (MCP 2025-11-25 URL mode). */
export interface UrlAsk {
  message: string;
  url: string;
  elicitationId: string;
  timeoutMs: number;
}

/** The AEP side as the bridge sees it (implemented with @aep/client in aep.ts). */
export interface AepPort {
  /** The capture level form questions are built at. */
  readonly capture: CaptureLevel;
  /** The agent name used in structural prompts. */
  readonly agent: string;
  /** The redaction pipeline for `redacted` capture. */
  redact(text: string): string;
  /** True when a question asked now reaches the relay (connected); false means fall back. */
  available(): boolean;
  /** False when URL questions cannot reach a human usefully (the URL needs `redacted`+). */
  urlCapable(): boolean;
  askForm(ask: FormAsk): AskHandle;
  askUrl(ask: UrlAsk): AskHandle;
  /** The MCP server's name (from its `initialize` result), used as the requests' `subject`. */
  setSubject(subject: string | undefined): void;
  /**
   * Register what a person's `control.cancel` does on the MCP side (the AEP side acks the command,
   * then calls it and records the outcome). Optional: a port without steering never calls it.
   */
  onSteer?(handler: SteerHandler): void;
}

/** A person's cancel as the MCP side needs it (AEP `control.cancel`, scope `session`). */
export interface SteerCancel {
  /** The person's reason (AEP `reason`, free text), passed on to the server and the host. */
  reason?: string;
}

/** What a cancel did on the MCP side. */
export interface SteerReport {
  /** Open elicitations answered `{action:"cancel"}` (their AEP requests withdrawn). */
  elicitations: number;
  /** Host requests in flight cancelled at the server (`notifications/cancelled`) and answered to the host. */
  requests: number;
}

/** The MCP side of steering, called by the AEP side after it acked a `control.cancel`. */
export type SteerHandler = (cancel: SteerCancel) => SteerReport;

/** Options of {@link McpBridge}. */
export interface McpBridgeOptions {
  /** Where server-bound bytes go (the child's stdin). */
  toServer: Writable;
  /** Where host-bound bytes go (our stdout: the MCP channel; nothing else may be written there). */
  toHost: Writable;
  /** The AEP side; absent = no AEP (host or decline only). A promise: elicitations wait for it. */
  aep?: AepPort | Promise<AepPort | undefined>;
  /** Time a human has to answer through AEP before the elicitation is cancelled; default 10 min. */
  timeoutMs?: number;
  /** Most elicitations open through AEP at once; more fall back (host, else decline). Default 64. */
  maxPending?: number;
  /** Diagnostics (stderr). Never receives tokens. */
  log?: (line: string) => void;
}

/** Default cap on elicitations open through AEP at once (a runaway server cannot flood the inbox). */
export const DEFAULT_MAX_PENDING = 64;

/** Default human-length answer window for an elicitation asked through AEP. */
export const DEFAULT_ELICITATION_TIMEOUT_MS = 10 * 60_000;

/**
 * JSON-RPC error code the bridge answers a host request with when a person cancelled it through
 * AEP. MCP defines no code for a cancelled request (a cancelled request normally gets no
 * response, but here the host did not cancel and still waits); -32800 is the
 * "RequestCancelled" code of the Language Server Protocol, outside the JSON-RPC reserved range.
 */
export const REQUEST_CANCELLED_CODE = BRIDGE_JSONRPC_ERRORS.requestCancelled.code;

/** Most host requests tracked as in flight (for steering); the oldest is forgotten beyond it. */
const MAX_INFLIGHT = 10_000;
/** Longest person's reason passed on to the server and the host. */
const MAX_REASON = 1_000;

type RequestId = string | number;

interface Pending {
  id: RequestId;
  mode: 'form' | 'url';
  aep?: AskHandle;
  /** The host was asked too (it has the request and may answer). */
  hostAsked: boolean;
  settled: boolean;
}

interface HostElicitation {
  form: boolean;
  url: boolean;
}

/** A host -> server request not answered yet. */
interface InFlight {
  id: RequestId;
  method: string;
}

/** Counters (exposed for tests and diagnostics). */
export interface BridgeStats {
  fromHost: number;
  fromServer: number;
  elicitations: number;
  answeredViaAep: number;
  answeredViaHost: number;
  declinedNoPath: number;
  /** Host requests cancelled through AEP steering. */
  cancelledRequests: number;
}

// Only lines containing one of these can be messages the bridge acts on; every other line is
// forwarded without being parsed (the fast path). The patterns are ASCII, so testing them on the
// latin1 view of the UTF-8 bytes is exact (and much faster than several Buffer searches).
// `\/` is a legal JSON escape of `/` (some encoders, e.g. PHP's, emit it).
const SERVER_PATTERN = /"(?:elicitation\\?\/create|notifications\\?\/cancelled|serverInfo)"/;
const HOST_INIT_PATTERN = /"initialize"/;
const HOST_RESPONSE_PATTERN = /"(?:initialize|result|error)"/;
// With steering on, host requests (and the host's own cancellations) are tracked: lines naming a
// method; server responses are looked at only while a tracked request is in flight.
const HOST_METHOD_PATTERN = /"method"/;
const SERVER_RESPONSE_PATTERN = /"(?:result|error)"/;

function keyOf(id: RequestId): string {
  return typeof id === 'number' ? `n:${id}` : `s:${id}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Line-level MCP proxy with elicitation interception. Feed it the host's bytes with
 * {@link McpBridge.fromHost} and the server's bytes with {@link McpBridge.fromServer}.
 */
export class McpBridge {
  private readonly hostLines: LineSplitter;
  private readonly serverLines: LineSplitter;
  private readonly pending = new Map<string, Pending>();
  /** Elicitations settled by AEP while the host still had them: its late answer is dropped. */
  private readonly withdrawnFromHost = new Set<string>();
  private hostCaps: HostElicitation = { form: false, url: false };
  /** Id of the host's `initialize` request (its result names the server). */
  private initializeId: RequestId | undefined;
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;
  private closed = false;
  private aep: AepPort | undefined;
  private aepPending: Promise<void> | undefined;
  /** Track host requests for steering: on whenever an AEP side is configured. */
  private readonly steerable: boolean;
  /** Host -> server requests without a response yet (steering cancels them). */
  private readonly inflight = new Map<string, InFlight>();
  /** Host requests the bridge answered itself (cancelled): the server's late response is dropped. */
  private readonly answeredForHost = new Set<string>();
  readonly stats: BridgeStats = { fromHost: 0, fromServer: 0, elicitations: 0, answeredViaAep: 0, answeredViaHost: 0, declinedNoPath: 0, cancelledRequests: 0 };

  constructor(private readonly opts: McpBridgeOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS;
    this.log = opts.log ?? (() => {});
    this.hostLines = new LineSplitter((line, parseable) => this.onHostLine(line, parseable));
    this.serverLines = new LineSplitter((line, parseable) => this.onServerLine(line, parseable));
    const aep = opts.aep;
    this.steerable = aep !== undefined;
    const steer: SteerHandler = (c) => this.cancelInFlight(c);
    if (aep instanceof Promise) {
      this.aepPending = aep.then(
        (port) => {
          this.aep = port;
          this.aepPending = undefined;
          port?.onSteer?.(steer);
        },
        (err: unknown) => {
          this.log(`AEP side failed to start: ${err instanceof Error ? err.message : String(err)}`);
          this.aepPending = undefined;
        },
      );
    } else {
      this.aep = aep;
      aep?.onSteer?.(steer);
    }
  }

  /** Bytes from the host (our stdin). */
  fromHost(chunk: Buffer): void {
    this.hostLines.push(chunk);
  }
  /** The host closed its side. */
  endHost(): void {
    this.hostLines.end();
  }
  /** Bytes from the server (the child's stdout). */
  fromServer(chunk: Buffer): void {
    this.serverLines.push(chunk);
  }
  /** The server closed its side. */
  endServer(): void {
    this.serverLines.end();
  }

  /** Number of elicitations still waiting for an answer. */
  pendingCount(): number {
    return this.pending.size;
  }

  /** Number of host requests in flight (tracked for steering). */
  inflightCount(): number {
    return this.inflight.size;
  }

  /**
   * A person cancelled this session through AEP (`control.cancel`, README "Steering"): every open
   * elicitation is answered `{action:"cancel"}` (its AEP request withdrawn, its host dialog too),
   * and every host request in flight but `initialize` (MCP forbids cancelling it) is cancelled at
   * the server with `notifications/cancelled` and answered to the host with the JSON-RPC error
   * {@link REQUEST_CANCELLED_CODE}, since the host itself never cancelled and still waits. The
   * server's late response to such a request is dropped. The server keeps running.
   */
  cancelInFlight(cancel: SteerCancel = {}): SteerReport {
    const reason = cancel.reason !== undefined && cancel.reason.trim() !== '' ? cancel.reason.slice(0, MAX_REASON) : undefined;
    const why = `cancelled by a person through AEP${reason !== undefined ? `: ${reason}` : ''}`;
    let elicitations = 0;
    for (const p of [...this.pending.values()]) {
      if (p.settled) continue;
      p.aep?.withdraw('cancelled by a person through AEP');
      this.settle(p, { action: 'cancel' }, false);
      elicitations++;
    }
    let requests = 0;
    for (const [key, r] of [...this.inflight]) {
      if (r.method === 'initialize') continue;
      this.inflight.delete(key);
      this.sendToServer({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: r.id, reason: why } });
      this.sendToHost({ jsonrpc: '2.0', id: r.id, error: { code: REQUEST_CANCELLED_CODE, message: `Request ${why}` } });
      this.answeredForHost.add(key);
      if (this.answeredForHost.size > 1_000) {
        const oldest = this.answeredForHost.values().next();
        if (!oldest.done) this.answeredForHost.delete(oldest.value);
      }
      requests++;
    }
    this.stats.cancelledRequests += requests;
    this.log(`steering: cancel: ${elicitations} elicitation(s) answered cancel, ${requests} host request(s) cancelled`);
    return { elicitations, requests };
  }

  /** Withdraw every open AEP question (shutdown). Pending server requests get `cancel`. */
  close(reason = 'the MCP bridge is shutting down'): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of [...this.pending.values()]) {
      if (p.settled) continue;
      p.aep?.withdraw(reason);
      this.settle(p, { action: 'cancel' }, false);
    }
  }

  // ---- host -> server ------------------------------------------------------------------------

  private onHostLine(line: Buffer, parseable: boolean): void {
    this.stats.fromHost++;
    const tracking = this.pending.size > 0 || this.withdrawnFromHost.size > 0;
    const text = parseable ? line.toString('latin1') : '';
    if (parseable && ((tracking ? HOST_RESPONSE_PATTERN : HOST_INIT_PATTERN).test(text) || (this.steerable && HOST_METHOD_PATTERN.test(text)))) {
      const msg = parseLine(line);
      if (msg !== undefined) {
        try {
          if (this.interceptFromHost(msg)) return;
        } catch (err) {
          // Last resort: a bug here must not stop the proxy; the line goes through unchanged.
          this.log(`internal error handling a host message (forwarded unchanged): ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    write(this.opts.toServer, line);
  }

  /** Returns true when the line was consumed (rewritten or dropped). */
  private interceptFromHost(msg: unknown): boolean {
    if (!isObject(msg)) return false;
    if (msg['method'] === 'initialize' && 'id' in msg) {
      const parsed = InitializeRequestSchema.safeParse(msg);
      if (!parsed.success) return false; // not ours to judge: the server answers it
      this.initializeId = msg['id'] as RequestId;
      const caps = isObject(msg['params']) && isObject(msg['params']['capabilities']) ? msg['params']['capabilities'] : {};
      const el = caps['elicitation'];
      if (isObject(el)) {
        const hasForm = 'form' in el;
        const hasUrl = 'url' in el;
        // MCP 2025-11-25: `{}` means form only (backward compatibility with 2025-06-18).
        this.hostCaps = { form: hasForm || (!hasForm && !hasUrl), url: hasUrl };
      } else {
        this.hostCaps = { form: false, url: false };
      }
      const advertised: Record<string, unknown> = { ...(isObject(el) ? el : {}) };
      if (!isObject(advertised['form'])) advertised['form'] = {};
      if (!isObject(advertised['url'])) advertised['url'] = {};
      const params = msg['params'] as Record<string, unknown>;
      const rewritten = { ...msg, params: { ...params, capabilities: { ...caps, elicitation: advertised } } };
      this.log(`host elicitation support: form=${this.hostCaps.form} url=${this.hostCaps.url}; advertising form+url to the server`);
      write(this.opts.toServer, JSON.stringify(rewritten) + '\n');
      return true;
    }
    if (this.steerable && typeof msg['method'] === 'string') {
      this.trackHostMessage(msg, msg['method']);
      return false; // forwarded unchanged
    }
    // A response (no method) to an elicitation the bridge tracks.
    if (!('method' in msg) && 'id' in msg && (typeof msg['id'] === 'string' || typeof msg['id'] === 'number')) {
      const key = keyOf(msg['id']);
      if (this.withdrawnFromHost.delete(key)) return true; // AEP answered first: drop the late answer
      const p = this.pending.get(key);
      if (!p || !p.hostAsked) return false;
      if (p.settled) return true; // AEP answered first: the host's late answer is dropped
      if (JSONRPCErrorResponseSchema.safeParse(msg).success) {
        if (p.aep) {
          // The host could not ask; the AEP question stays open.
          p.hostAsked = false;
          this.log(`host failed elicitation ${String(p.id)}; waiting for the AEP answer`);
          return true;
        }
        this.pending.delete(keyOf(p.id));
        return false;
      }
      if (JSONRPCResultResponseSchema.safeParse(msg).success) {
        // First answer wins: the host's. Forward it unchanged and withdraw the AEP question.
        p.settled = true;
        this.pending.delete(keyOf(p.id));
        this.stats.answeredViaHost++;
        p.aep?.withdraw('answered in the MCP host');
        return false;
      }
    }
    return false;
  }

  /** Steering bookkeeping of a host request or notification (forwarded unchanged either way). */
  private trackHostMessage(msg: Record<string, unknown>, method: string): void {
    const id = msg['id'];
    if (typeof id === 'string' || typeof id === 'number') {
      if (method === 'initialize') return; // never cancelled (MCP "Cancellation")
      this.inflight.set(keyOf(id), { id, method });
      if (this.inflight.size > MAX_INFLIGHT) {
        const oldest = this.inflight.keys().next();
        if (!oldest.done) this.inflight.delete(oldest.value);
      }
      return;
    }
    if (method === 'notifications/cancelled' && isObject(msg['params'])) {
      // The host cancelled its own request: the server will not answer it.
      const rid = msg['params']['requestId'];
      if (typeof rid === 'string' || typeof rid === 'number') this.inflight.delete(keyOf(rid));
    }
  }

  // ---- server -> host ------------------------------------------------------------------------

  private onServerLine(line: Buffer, parseable: boolean): void {
    this.stats.fromServer++;
    const watching = this.inflight.size > 0 || this.answeredForHost.size > 0;
    const text = parseable ? line.toString('latin1') : '';
    if (parseable && (SERVER_PATTERN.test(text) || (watching && SERVER_RESPONSE_PATTERN.test(text)))) {
      const msg = parseLine(line);
      try {
        if (msg !== undefined && this.interceptFromServer(msg, line)) return;
      } catch (err) {
        this.log(`internal error handling a server message (forwarded unchanged): ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    write(this.opts.toHost, line);
  }

  private interceptFromServer(msg: unknown, line: Buffer): boolean {
    if (!isObject(msg)) return false;
    const method = msg['method'];
    if (method === 'elicitation/create' && 'id' in msg) return this.onElicitation(msg, line);
    if (method === undefined && (typeof msg['id'] === 'string' || typeof msg['id'] === 'number') && ('result' in msg || 'error' in msg)) {
      const key = keyOf(msg['id']);
      // A response to a host request the bridge cancelled (and answered) on a person's behalf.
      if (this.answeredForHost.delete(key)) return true;
      this.inflight.delete(key);
    }
    if (method === undefined && this.initializeId !== undefined && msg['id'] === this.initializeId && isObject(msg['result'])) {
      const info = msg['result']['serverInfo'];
      if (isObject(info) && typeof info['name'] === 'string' && /^[\w.:@/-]{1,100}$/.test(info['name'])) {
        const subject = `mcp:${info['name']}`;
        if (this.aep) this.aep.setSubject(subject);
        else void this.aepPending?.then(() => this.aep?.setSubject(subject));
      }
      this.initializeId = undefined;
      return false; // forwarded unchanged
    }
    if (method === 'notifications/cancelled') {
      const parsed = CancelledNotificationSchema.safeParse(msg);
      const rid = parsed.success ? parsed.data.params.requestId : undefined;
      if (rid === undefined) return false;
      const p = this.pending.get(keyOf(rid));
      if (!p) return false;
      // The server gave up (e.g. its own request timeout): withdraw everywhere, answer nothing.
      p.settled = true;
      this.pending.delete(keyOf(p.id));
      p.aep?.withdraw('cancelled by the MCP server');
      return !p.hostAsked; // the host only needs it if it has the request
    }
    return false;
  }

  private onElicitation(msg: Record<string, unknown>, line: Buffer): boolean {
    if (this.aepPending) {
      // The AEP side is still connecting: decide once it has (connect is bounded).
      void this.aepPending.then(() => {
        if (!this.onElicitation(msg, line)) write(this.opts.toHost, line);
      });
      return true;
    }
    const id = msg['id'];
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    this.stats.elicitations++;
    const parsed = ElicitRequestSchema.safeParse(msg);
    const rawParams = isObject(msg['params']) ? msg['params'] : {};
    const mode = rawParams['mode'] === 'url' ? 'url' : 'form';
    const hostCan = mode === 'url' ? this.hostCaps.url : this.hostCaps.form;
    const aep = this.closed ? undefined : this.aep;
    if (!parsed.success || 'task' in rawParams) {
      // Invalid, or task-augmented (the bridge answers plain ElicitResults only): the host decides.
      if (hostCan) return false;
      const why = parsed.success
        ? 'task-augmented elicitation is not supported by the bridge'
        : `Invalid elicitation request: ${summarize(parsed.error.issues)}`;
      this.log(`elicitation ${String(id)}: ${why}`);
      this.sendToServer({ jsonrpc: '2.0', id, error: { code: BRIDGE_JSONRPC_ERRORS.invalidElicitation.code, message: why } });
      return true;
    }
    let handle: AskHandle | undefined;
    let why = aep ? '' : 'no AEP relay configured';
    if (aep && !aep.available()) why = 'the AEP relay is unreachable';
    if (aep && why === '' && this.pending.size >= (this.opts.maxPending ?? DEFAULT_MAX_PENDING))
      why = `${this.pending.size} elicitations are already open through AEP (limit)`;
    if (aep && why === '' && mode === 'url' && !aep.urlCapable()) why = `capture ${aep.capture} cannot carry the URL to a human`;
    if (aep && why === '') {
      try {
        if (mode === 'url') {
          handle = aep.askUrl({
            message: String(rawParams['message']),
            url: String(rawParams['url']),
            elicitationId: String(rawParams['elicitationId']),
            timeoutMs: this.timeoutMs,
          });
        } else {
          const mapped = elicitationToForm(rawParams, { agent: aep.agent, capture: aep.capture, redact: (s) => aep.redact(s) });
          if (mapped.ok) {
            handle = aep.askForm({
              data: mapped.data,
              constraints: mapped.constraints,
              requestedSchema: rawParams['requestedSchema'],
              message: String(rawParams['message']),
              timeoutMs: this.timeoutMs,
            });
          } else {
            why = `schema not mappable to an AEP form: ${mapped.reason}`;
          }
        }
      } catch (err) {
        why = `the AEP side failed (${err instanceof Error ? err.message : String(err)})`;
      }
    }
    if (!handle) {
      if (hostCan) {
        this.log(`elicitation ${String(id)}: ${why}; the host asks alone`);
        return false; // plain pass-through; the host's answer flows back untouched
      }
      this.log(`elicitation ${String(id)}: ${why} and the host has no ${mode} elicitation; declining`);
      this.stats.declinedNoPath++;
      this.sendResult(id, { action: 'decline' });
      return true;
    }
    const p: Pending = { id, mode, aep: handle, hostAsked: hostCan, settled: false };
    this.pending.set(keyOf(id), p);
    this.log(`elicitation ${String(id)} (${mode}) asked through AEP as ${handle.id}${hostCan ? ' and in the host' : ''}`);
    handle.outcome.then(
      (o) => this.onAepOutcome(p, o),
      (err: unknown) => this.onAepOutcome(p, { action: 'unavailable', reason: err instanceof Error ? err.message : String(err) }),
    );
    if (hostCan) write(this.opts.toHost, line);
    return true;
  }

  private onAepOutcome(p: Pending, o: AskOutcome): void {
    if (p.settled) return;
    if (o.action === 'unavailable') {
      this.log(`elicitation ${String(p.id)}: AEP side failed (${o.reason})`);
      p.aep = undefined;
      if (p.hostAsked) return; // the host may still answer
      this.stats.declinedNoPath++;
      this.settle(p, { action: 'decline' }, false);
      return;
    }
    this.stats.answeredViaAep++;
    const result: ElicitResult =
      o.action === 'accept'
        ? o.content !== undefined && p.mode === 'form'
          ? { action: 'accept', content: o.content }
          : { action: 'accept' }
        : { action: o.action };
    this.settle(p, result, true);
  }

  private settle(p: Pending, result: ElicitResult, viaAep: boolean): void {
    p.settled = true;
    this.pending.delete(keyOf(p.id));
    this.sendResult(p.id, result);
    if (p.hostAsked) {
      this.withdrawnFromHost.add(keyOf(p.id));
      if (this.withdrawnFromHost.size > 1_000) {
        const oldest = this.withdrawnFromHost.values().next();
        if (!oldest.done) this.withdrawnFromHost.delete(oldest.value);
      }
      // Withdraw the host's dialog (MCP "Cancellation": the result will be unused).
      this.sendToHost({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: p.id, reason: viaAep ? 'answered through AEP' : 'elicitation withdrawn by the bridge' },
      });
    }
  }

  private sendResult(id: RequestId, result: ElicitResult): void {
    const checked = ElicitResultSchema.safeParse(result);
    if (!checked.success) {
      // Never send an invalid result: the server would fail the tool for the wrong reason.
      this.log(`elicitation ${String(id)}: result failed ElicitResult validation; sending cancel`);
      this.sendToServer({ jsonrpc: '2.0', id, result: { action: 'cancel' } });
      return;
    }
    this.sendToServer({ jsonrpc: '2.0', id, result });
  }

  private sendToServer(msg: unknown): void {
    write(this.opts.toServer, JSON.stringify(msg) + '\n');
  }

  private sendToHost(msg: unknown): void {
    write(this.opts.toHost, JSON.stringify(msg) + '\n');
  }
}

/** One line naming the first schema problem (zod issues are deeply nested for unions). */
function summarize(issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; errors?: unknown }[]): string {
  const first = issues[0];
  if (!first) return 'does not match the MCP ElicitRequest schema';
  const path = first.path.map(String).join('.');
  return `${path === '' ? 'request' : path}: ${first.code === 'invalid_union' ? 'matches none of the allowed shapes' : first.message}`.slice(0, 200);
}

/** Write unless the destination is gone (a closed pipe must not crash the proxy). */
function write(dest: Writable, data: Buffer | string): void {
  if (dest.writableEnded || dest.destroyed) return;
  dest.write(data);
}

function parseLine(line: Buffer): unknown {
  try {
    return JSON.parse(line.toString('utf8'));
  } catch {
    return undefined;
  }
}
