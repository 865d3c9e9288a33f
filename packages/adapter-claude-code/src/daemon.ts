// The adapter daemon (`aep claude-code serve`): receives Claude Code hooks, owns each Claude
// Code session's AEP session through one authenticated relay connection (AEP-0003 §3.5), holds
// AskUserQuestion / PermissionRequest / Elicitation hooks open until a validated
// `control.attention.respond` arrives (AEP-0004 §5.3), and never breaks the agent (docs/conventions.md §9):
// every hook path answers, at worst with "no decision", within its budget. The attention
// lifecycle (validation, nacks, answered/resolved/timeout/dismissed) is the client's
// AttentionEngine; this class maps hooks to requests and answers back to hook output, driven by
// hook arrivals, engine outcomes and relay connection events (no polling).
import { homedir } from 'node:os';
import type { CaptureLevel } from '@aep/protocol';
import { captureRank } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { AttentionPort, AttentionPromise, CommandDecision, IncomingCommand, WireEvent } from '@aep/client';
import type { MappingConfig } from './config.js';
import { captureFor, mappingConfig } from './config.js';
import { ADAPTER_ERRORS, AdapterError } from './errors.js';
import type { HookExchange } from './exchange.js';
import { parseHookText } from './hook-input.js';
import type { AttentionSpec, DismissRule, EventDraft } from './mapper.js';
import { ClaudeCodeMapper } from './mapper.js';
import { NO_DECISION, hookOutput } from './answers.js';
import { engineRequest } from './request.js';
import { DEFAULT_LIMITS, DEFAULT_PORT, DEFAULT_RELAY, DEFAULT_WAIT_MS } from './constants.js';
import { defaultSecretPath, defaultSocketPath, ensureSecret } from './local.js';
import { RefusalLog } from './refusal-log.js';
import type { HttpTransport } from './transport-http.js';
import { listenHttp } from './transport-http.js';
import type { SocketTransport } from './transport-socket.js';
import { listenSocket } from './transport-socket.js';
import type { Uplink } from './uplink.js';
import { relayUplink } from './uplink.js';
import { CANCELLED_HOOKS, STEERING_COMMANDS, Steering, cancelOutput, cancelReason, parseCancel } from './steering.js';

export type { Uplink } from './uplink.js';

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  /** Loopback HTTP port (`GET /health`, HTTP hooks); default 8377 (0 = ephemeral, tests). */
  port?: number;
  /**
   * Unix socket of the command-hook shim; default `$XDG_RUNTIME_DIR/aep/claude-code.sock`, else
   * `~/.local/state/aep/run/claude-code.sock` (its directory is made 0700). `false`: none.
   */
  socket?: string | false;
  /** The per-install secret file (created 0600 when missing); default `$XDG_CONFIG_HOME/aep/claude-code/hook-secret`. */
  secretFile?: string;
  /** The secret itself (instead of `secretFile`; tests). */
  secret?: string;
  /** Listen host; default 127.0.0.1 (hooks come from the local machine). */
  host?: string;
  /** Relay base URL; default http://127.0.0.1:8787. */
  relay?: string;
  /** Relay bearer token (control needs authentication, AEP-0004 §4.1). Never logged. */
  token?: string;
  /** Mapping config (agent, capture, overrides, redaction). */
  mapping?: Partial<MappingConfig>;
  /** How long a blocking hook waits for an answer; default 300 000 ms. Keep it below the hook timeout. */
  waitMs?: number;
  /** How long a blocking hook waits for a relay connection before giving no decision; default 600 ms. */
  connectGraceMs?: number;
  /** Limits; beyond one a hook gets no decision at once and the refusal is logged with its code. */
  limits?: Partial<DaemonLimits>;
  /** Durable state directory for the epoch counter (AEP-0001 §7.2). */
  stateDir?: string;
  /** Diagnostics (never receives tokens). */
  log?: (line: string) => void;
  /** Clock (tests). */
  now?: () => number;
  /** Replace the relay connection (tests of the daemon alone). */
  uplink?: Uplink;
}

/** The daemon's limits (defaults: `DEFAULT_LIMITS`). */
export interface DaemonLimits {
  /** Blocking hooks held open at once (`AEP_CC_TOO_MANY_HELD`). */
  maxHeld: number;
  /** Questions of one AskUserQuestion (`AEP_CC_TOO_MANY_QUESTIONS`). */
  maxQuestions: number;
  /** Fields of one elicitation form (`AEP_CC_TOO_MANY_FIELDS`). */
  maxFields: number;
  /** Bytes of one hook body (`AEP_CC_HOOK_TOO_LARGE`). */
  maxHookBytes: number;
}

/** A running daemon. */
export interface DaemonHandle {
  url: string;
  port: number;
  /** The socket path, when the daemon listens on one. */
  socket?: string;
  /** Ids of pending attention requests. */
  pending(): string[];
  /** Dismisses pending requests (no decision to Claude Code), flushes and closes. Idempotent. */
  close(): Promise<void>;
}

/** A hook held open on an engine request. */
interface Held {
  spec: AttentionSpec;
  session: string;
  /** The hook (`PreToolUse`, `PermissionRequest`, `Elicitation`): what a cancel answers it with. */
  hookName: string;
  /** Set when a control.cancel dismissed it: the denial it is answered with. */
  cancelled?: string;
}

/** The highest level the config may emit at: the connection's ceiling. */
function ceilingOf(cfg: MappingConfig): CaptureLevel {
  const levels = [cfg.capture, ...cfg.overrides.map((o) => o.level)];
  return levels.reduce((a, b) => (captureRank(b) > captureRank(a) ? b : a), 'metadata' as CaptureLevel);
}

function redactionOf(cfg: MappingConfig): { home?: string; secretValues?: string[]; pii?: boolean } {
  const o: { home?: string; secretValues?: string[]; pii?: boolean } = {};
  if (cfg.home !== undefined) o.home = cfg.home;
  if (cfg.secretValues !== undefined) o.secretValues = cfg.secretValues;
  if (cfg.pii !== undefined) o.pii = cfg.pii;
  return o;
}

/** The daemon: one instance per `serve`. */
export class ClaudeCodeDaemon {
  private readonly cfg: MappingConfig;
  private readonly mapper: ClaudeCodeMapper;
  private readonly engine: AttentionEngine;
  private readonly log: (line: string) => void;
  private readonly now: () => number;
  private readonly waitMs: number;
  private readonly graceMs: number;
  private readonly limits: DaemonLimits;
  /** Answers can arrive: a relay token (or an injected uplink). */
  private readonly canAnswer: boolean;
  private uplink: Uplink | undefined;
  private http: HttpTransport | undefined;
  private sock: SocketTransport | undefined;
  private readonly refusals: RefusalLog;
  /** Local refs of drafts -> event ids (cause/subject correlation). */
  private readonly refs = new Map<string, string>();
  private readonly held = new Map<string, Held>();
  private connected = false;
  /** Started when the relay connection drops while hooks are held; releases them at the grace. */
  private lostTimer: NodeJS.Timeout | undefined;
  /** Hooks waiting for the relay connection (resolved on connect, or at their grace). */
  private readonly connectWaiters = new Set<(ok: boolean) => void>();
  private closing: Promise<void> | undefined;
  private readonly steering = new Steering();

  constructor(private readonly opts: DaemonOptions = {}) {
    this.log = opts.log ?? (() => {});
    this.now = opts.now ?? Date.now;
    this.refusals = new RefusalLog(this.log, this.now);
    this.cfg = mappingConfig({ home: homedir(), ...opts.mapping });
    this.mapper = new ClaudeCodeMapper(this.cfg);
    this.mapper.pendingProbe = (session) => this.heldIn(session);
    this.waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
    this.graceMs = opts.connectGraceMs ?? 600;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    // Without a token the relay refuses every command (AEP-0004 §4.1): no answer can ever arrive,
    // so holding a hook would only delay Claude Code. Questions are recorded and handed back at once.
    this.canAnswer = opts.uplink !== undefined || (opts.token !== undefined && opts.token !== '');
    const port: AttentionPort = {
      ceiling: ceilingOf(this.cfg),
      options: { agent: this.cfg.agent },
      emit: (session, type, data, attrs) => this.up().emit(session, type, data, { ...attrs }),
      onCommand: (type, handler) => {
        this.up().onCommand(type, handler);
        return () => {};
      },
    };
    this.uplink = opts.uplink;
    this.engine = new AttentionEngine(port, {
      redact: redactionOf(this.cfg),
      lifecycleCapture: (type) => captureFor(this.cfg, type),
      now: this.now,
      log: (line) => this.log(`aep claude-code: ${ADAPTER_ERRORS.EMIT_FAILED}: ${line}`),
    });
    const up = this.up();
    up.onCommand('control.cancel', (cmd) => this.onCancel(cmd));
    up.onCommand('control.pause', (cmd) => this.onPause(cmd));
    up.onCommand('control.resume', (cmd) => this.onResume(cmd));
  }

  /**
   * Binds the transports, then returns; the relay connection is made in the background (hooks
   * are answered with no decision until it is up). A bind failure closes everything opened and
   * rejects with `AEP_CC_ADDRESS_IN_USE` / `AEP_CC_LISTEN_FAILED`, so `serve` exits at once.
   */
  async start(): Promise<DaemonHandle> {
    const up = this.up();
    this.connected = up.connected();
    up.onState((c) => this.onConnection(c));
    if (!this.canAnswer)
      this.log('aep claude-code: no relay token: questions are recorded but answered in the terminal (commands need authentication, AEP-0004 §4.1)');
    const host = this.opts.host ?? '127.0.0.1';
    const port = this.opts.port ?? DEFAULT_PORT;
    const maxHookBytes = this.limits.maxHookBytes;
    const handle = (x: HookExchange): void => {
      void this.handle(x);
    };
    try {
      const secret = this.opts.secret ?? ensureSecret(this.opts.secretFile ?? defaultSecretPath()).secret;
      const socketPath = this.opts.socket === false ? undefined : (this.opts.socket ?? defaultSocketPath());
      if (socketPath !== undefined) this.sock = await listenSocket({ path: socketPath, secret, maxHookBytes, refusals: this.refusals, handle });
      this.http = await listenHttp({
        host,
        port,
        maxHookBytes,
        secret,
        refusals: this.refusals,
        handle,
        health: () => ({ ok: true, connected: this.connected, pending: this.engine.pending().length }),
      }).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (code === 'EADDRINUSE')
          throw new AdapterError(ADAPTER_ERRORS.ADDRESS_IN_USE, `cannot listen on ${host}:${port}: the port is taken (another daemon? pick --port)`);
        throw new AdapterError(ADAPTER_ERRORS.LISTEN_FAILED, `cannot listen on ${host}:${port}: ${err instanceof Error ? err.message : String(err)}`);
      });
    } catch (err) {
      await this.shutdown();
      throw err;
    }
    const http = this.http;
    const h: DaemonHandle = { url: http.url, port: http.port, pending: () => this.engine.pending(), close: () => this.shutdown() };
    if (this.sock) h.socket = this.sock.path;
    return h;
  }

  /** The relay connection (created with the engine; a failed bind closes it again in shutdown). */
  private up(): Uplink {
    this.uplink ??= relayUplink({
      url: this.opts.relay ?? DEFAULT_RELAY,
      agent: this.cfg.agent,
      ceiling: ceilingOf(this.cfg),
      // Only what the daemon honours (AEP-0004 §4.2; steering.ts documents each mapping).
      accepts: ['control.attention.respond', ...STEERING_COMMANDS],
      ...(this.opts.token !== undefined ? { token: this.opts.token } : {}),
      ...(this.opts.stateDir !== undefined ? { stateDir: this.opts.stateDir } : {}),
      log: this.log,
    });
    return this.uplink;
  }

  /** One hook from any transport. Never throws: our faults answer with no decision. */
  async handle(x: HookExchange): Promise<void> {
    try {
      await this.route(x);
    } catch (err) {
      // Our fault, never the agent's: log and give no decision (docs/conventions.md §6, §9).
      this.log(`aep claude-code: ${ADAPTER_ERRORS.INTERNAL}: ${err instanceof Error ? err.message : String(err)}`);
      x.reply(NO_DECISION);
    }
  }

  private async route(x: HookExchange): Promise<void> {
    let hook;
    try {
      hook = parseHookText(x.body);
    } catch (err) {
      const e = err instanceof AdapterError ? err : new AdapterError(ADAPTER_ERRORS.HOOK_INVALID, 'hook input could not be read');
      this.log(`aep claude-code: ${e.code}: ${e.message}`);
      x.refuse(e);
      return;
    }
    const start = this.now();
    const result = this.mapper.map(hook, start);
    for (const rule of result.dismiss) this.dismissMatching(rule);
    for (const d of result.events) this.emitDraft(d);
    const name = hook.hook_event_name;
    const session = result.session;
    const parent = this.mapper.steerable(session)?.parent;
    if (name === 'UserPromptSubmit') this.steering.disarm(session);
    if (name === 'SessionEnd') this.steering.forget(session);
    // A cancelled session: its tool calls are refused with the person's reason (steering.ts).
    const denied = CANCELLED_HOOKS.has(name) ? this.steering.cancelledReason(session, parent) : undefined;
    if (denied !== undefined) {
      x.reply(cancelOutput(name, denied));
      return;
    }
    // A paused session: the tool call waits at PreToolUse (within the hook's budget).
    const pausedBy = name === 'PreToolUse' ? this.steering.isPaused(session, parent) : undefined;
    if (pausedBy !== undefined) {
      if (this.held.size + this.steering.heldCount() >= this.limits.maxHeld) {
        this.refusals.note(
          ADAPTER_ERRORS.TOO_MANY_HELD,
          `${this.held.size + this.steering.heldCount()} hooks already held (--max-held ${this.limits.maxHeld}): not held for the pause, no decision`,
        );
        x.reply(NO_DECISION);
        return;
      }
      const end = await this.steering.wait(pausedBy, this.waitMs, (cb) => x.onAbandon(cb));
      if (end === 'abandoned') return;
      if (end === 'cancelled') {
        x.reply(cancelOutput(name, this.steering.cancelledReason(session, parent) ?? cancelReason(undefined, 'a surface')));
        return;
      }
      if (end === 'timeout') {
        x.reply(NO_DECISION);
        return;
      }
    }
    const spec = result.attention;
    if (!spec) {
      x.reply(NO_DECISION);
      return;
    }
    const over = this.overLimit(spec);
    if (over) {
      // Not forwarded at all (the inbox is not flooded); Claude Code asks in its own dialog.
      this.refusals.note(over.code, over.message);
      x.reply(NO_DECISION);
      return;
    }
    // Relay unreachable (or no token): no decision within the grace (< 1 s), so Claude Code asks
    // in the terminal; the request is still recorded (and dismissed).
    if (!this.canAnswer || !(await this.whenConnected())) {
      const p = this.raise(spec, undefined);
      if (p) this.engine.dismiss(p.id, 'no relay');
      x.reply(NO_DECISION);
      return;
    }
    // A pause spent part of the hook's budget: the question gets what is left.
    const left = this.waitMs - Math.max(0, this.now() - start);
    if (left <= 0) {
      x.reply(NO_DECISION);
      return;
    }
    this.hold(spec, x, name, left);
  }

  /** Raises the request and answers the hook when it settles (answered, timeout, dismissed, cancelled). */
  private hold(spec: AttentionSpec, x: HookExchange, hookName: string, waitMs: number): void {
    // Checked here, synchronously with the insertion below: concurrent hooks cannot overshoot.
    const holding = this.held.size + this.steering.heldCount();
    if (holding >= this.limits.maxHeld) {
      this.refusals.note(ADAPTER_ERRORS.TOO_MANY_HELD, `${holding} hooks already held (--max-held ${this.limits.maxHeld}): not forwarded, no decision`);
      x.reply(NO_DECISION);
      return;
    }
    const p = this.raise(spec, waitMs);
    if (!p) {
      x.reply(NO_DECISION);
      return;
    }
    const h: Held = { spec, session: spec.request.session, hookName };
    this.held.set(p.id, h);
    // Claude Code cancelled the hook (user pressed Esc, hook timeout): the question went elsewhere.
    x.onAbandon(() => {
      this.engine.dismiss(p.id, 'hook cancelled');
    });
    void p.then((o) => {
      this.held.delete(p.id);
      if (h.cancelled !== undefined) x.reply(cancelOutput(hookName, h.cancelled));
      else if (o.status === 'answered') x.reply(hookOutput(spec, o.answer));
      // The person cancelled the form (contract C2): recorded dismissed; MCP hears `cancel`.
      else if (o.status === 'dismissed' && o.refusal === 'cancel') x.reply(hookOutput(spec, { option: 'cancel' }));
      else x.reply(NO_DECISION);
    });
  }

  /** A steering command's target: open, with its current run; or the refusal. */
  private target(cmd: IncomingCommand): { session: string; run?: string } | CommandDecision {
    const session = cmd.event.session;
    const info = typeof session === 'string' ? this.mapper.steerable(session) : undefined;
    if (!info || !info.open || typeof session !== 'string') {
      return { status: 'rejected', reason: 'refused', detail: `session ${String(session)} is not running here (ended or unknown)` };
    }
    return info.run !== undefined ? { session, run: info.run } : { session };
  }

  /**
   * control.cancel (steering.ts): the current turn ends (`run.cancelled{by:"control"}`, after the
   * ack, cause = the command); held questions of the session are dismissed and answered with the
   * denial; every later tool call is denied until the person starts a new turn.
   */
  private onCancel(cmd: IncomingCommand): CommandDecision {
    const t = this.target(cmd);
    if ('status' in t) return t;
    const c = parseCancel(cmd.event as unknown as Record<string, unknown>);
    if (Array.isArray(c)) return { status: 'rejected', reason: 'invalid', issues: c };
    if (t.run === undefined) return { status: 'rejected', reason: 'refused', detail: `no turn is in progress in session ${t.session}` };
    if (c.scope === 'run' && c.run !== t.run)
      return { status: 'rejected', reason: 'refused', detail: `the named run is not in progress (the current run is ${t.run})` };
    const reason = cancelReason(c.reason, cmd.event.agent);
    return {
      status: 'accepted',
      after: () => {
        // Deny first (held and paused hooks answer with the denial), then the run's terminal.
        this.steering.arm(t.session, reason);
        for (const [id, h] of [...this.held]) {
          if (h.session !== t.session && this.mapper.steerable(h.session)?.parent !== t.session) continue;
          h.cancelled = reason;
          this.engine.dismiss(id, 'cancelled');
        }
        for (const d of this.mapper.cancelRun(t.session, this.now(), cmd.event.id, c.reason)) this.emitDraft(d);
      },
    };
  }

  /** control.pause: tool calls of the session wait at PreToolUse until resume (or their budget). */
  private onPause(cmd: IncomingCommand): CommandDecision {
    const t = this.target(cmd);
    if ('status' in t) return t;
    return {
      status: 'accepted',
      after: () => {
        this.steering.pause(t.session);
        const d = this.mapper.steeringStatus(t.session, 'paused', cmd.event.id);
        if (d) this.emitDraft(d);
      },
    };
  }

  /** control.resume: the held tool calls proceed. */
  private onResume(cmd: IncomingCommand): CommandDecision {
    const t = this.target(cmd);
    if ('status' in t) return t;
    if (this.steering.isPaused(t.session) === undefined) return { status: 'rejected', reason: 'refused', detail: `session ${t.session} is not paused` };
    return {
      status: 'accepted',
      after: () => {
        this.steering.resume(t.session);
        const d = this.mapper.steeringStatus(t.session, 'resumed', cmd.event.id);
        if (d) this.emitDraft(d);
      },
    };
  }

  /** The first limit a blocking request breaks, if any (issue 11 item 5). */
  private overLimit(spec: AttentionSpec): { code: string; message: string } | undefined {
    const l = this.limits;
    if (spec.hook === 'ask' && (spec.questions?.length ?? 0) > l.maxQuestions) {
      return {
        code: ADAPTER_ERRORS.TOO_MANY_QUESTIONS,
        message: `AskUserQuestion with ${spec.questions?.length ?? 0} questions (--max-questions ${l.maxQuestions}): not forwarded, no decision`,
      };
    }
    if (spec.hook === 'elicitation' && (spec.fields?.length ?? 0) > l.maxFields) {
      return {
        code: ADAPTER_ERRORS.TOO_MANY_FIELDS,
        message: `elicitation with ${spec.fields?.length ?? 0} fields (--max-fields ${l.maxFields}): not forwarded, no decision`,
      };
    }
    return undefined;
  }

  /** True at once when connected; else waits up to the grace for the connection event. */
  private whenConnected(): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    if (this.closing) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(t);
        this.connectWaiters.delete(done);
        resolve(ok);
      };
      const t = setTimeout(() => done(false), this.graceMs);
      this.connectWaiters.add(done);
    });
  }

  /**
   * Relay connection events. Up: waiting hooks proceed. Down: held hooks are handed back to the
   * terminal if the connection is not back within the grace (answers cannot arrive meanwhile).
   */
  private onConnection(connected: boolean): void {
    this.connected = connected;
    if (connected) {
      if (this.lostTimer) {
        clearTimeout(this.lostTimer);
        this.lostTimer = undefined;
      }
      for (const w of [...this.connectWaiters]) w(true);
      return;
    }
    this.lostTimer ??= setTimeout(() => {
      this.lostTimer = undefined;
      if (this.connected) return;
      for (const id of [...this.held.keys()]) this.engine.dismiss(id, 'relay unreachable');
    }, this.graceMs);
  }

  /**
   * Raises `spec` on the engine, which alone decides answers: the fields and the schema's
   * constraints, the permission's options and its approval text (contract C1: the engine sets
   * `approvaldigest` and refuses an allow without a valid `approvalproof`), and every form's
   * decline/cancel (contract C2) are given as data; answers.ts only translates what it accepted.
   */
  private raise(spec: AttentionSpec, expiresInMs: number | undefined): AttentionPromise | undefined {
    const r = spec.request;
    const subject = r.subjectRef ? this.refs.get(r.subjectRef) : r.subject;
    const cause = r.causeRef ? this.refs.get(r.causeRef) : undefined;
    try {
      const p = this.engine.requestAttention({
        ...engineRequest(spec, { ...(subject ? { subject } : {}), ...(cause ? { cause } : {}), ...(expiresInMs !== undefined ? { expiresInMs } : {}) }),
        onRejected: (issues, cmd) => this.log(`aep claude-code: answer to ${String(cmd.subject)} nacked invalid: ${issues.map((i) => i.rule).join(', ')}`),
      });
      if (r.ref) this.remember(r.ref, p.id);
      return p;
    } catch (err) {
      this.log(`aep claude-code: ${ADAPTER_ERRORS.EMIT_FAILED}: ${r.type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  private heldIn(session: string): boolean {
    for (const h of this.held.values()) if (h.session === session) return true;
    return false;
  }

  private dismissMatching(r: DismissRule): void {
    for (const [id, h] of [...this.held]) {
      if (h.session !== r.session) continue;
      const hit =
        r.all === true ||
        (r.toolUseId !== undefined
          ? h.spec.toolUseId === r.toolUseId
          : r.server !== undefined
            ? h.spec.hook === 'elicitation' && h.spec.request.subject === r.server
            : r.toolName !== undefined && h.spec.hook === 'permission' && h.spec.toolName === r.toolName && h.spec.inputDigest === r.inputDigest);
      if (hit) this.engine.dismiss(id, 'answered elsewhere');
    }
  }

  private remember(ref: string, id: string): void {
    this.refs.set(ref, id);
    if (this.refs.size > 50_000) this.refs.delete(this.refs.keys().next().value as string);
  }

  private emitDraft(d: EventDraft): WireEvent | undefined {
    const attrs: Record<string, unknown> = { capture: d.capture };
    if (d.run) attrs['run'] = d.run;
    if (d.severity) attrs['severity'] = d.severity;
    const subject = d.subjectRef ? this.refs.get(d.subjectRef) : d.subject;
    if (subject) attrs['subject'] = subject;
    const cause = d.cause ?? (d.causeRef ? this.refs.get(d.causeRef) : undefined);
    if (cause) attrs['cause'] = cause;
    if (d.extensions) attrs['extensions'] = d.extensions;
    try {
      const ev = this.up().emit(d.session, d.type, d.data, attrs);
      if (d.ref) this.remember(d.ref, ev.id);
      return ev;
    } catch (err) {
      this.log(`aep claude-code: ${ADAPTER_ERRORS.EMIT_FAILED}: ${d.type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  /** Dismisses pending requests (no decision), stops the transports, flushes, closes. Idempotent. */
  private shutdown(): Promise<void> {
    this.closing ??= (async () => {
      if (this.lostTimer) clearTimeout(this.lostTimer);
      for (const w of [...this.connectWaiters]) w(false);
      await this.engine.shutdown();
      await this.sock?.close();
      await this.http?.close();
      const up = this.uplink;
      if (up) {
        await up.flush(2_000).catch(() => false);
        await up.close();
      }
    })();
    return this.closing;
  }
}

/**
 * Starts the daemon. Resolves once the endpoint listens; the relay connection is made in the
 * background (hooks are answered with no decision until it is up).
 */
export function startDaemon(opts: DaemonOptions = {}): Promise<DaemonHandle> {
  return new ClaudeCodeDaemon(opts).start();
}
