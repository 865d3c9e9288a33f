// The adapter daemon (`aep claude-code serve`): receives Claude Code HTTP hooks, owns each Claude
// Code session's AEP session through one authenticated relay connection (AEP-0003 §3.5), holds
// AskUserQuestion / PermissionRequest / Elicitation hooks open until a validated
// `control.attention.respond` arrives (AEP-0004 §5.3), and never breaks the agent (style.md §9):
// every hook path answers, at worst with "no decision", within its budget. The attention
// lifecycle (validation, nacks, answered/resolved/timeout/dismissed) is the client's
// AttentionEngine; this file maps hooks to requests and answers back to hook output.
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import type { CaptureLevel } from '@aep/protocol';
import { captureRank } from '@aep/protocol';
import { AttentionEngine, EmitterConnection } from '@aep/client/node';
import type { AnswerCheck, AttentionKind, AttentionPort, AttentionPromise, CommandDecision, IncomingCommand, WireEvent } from '@aep/client';
import type { MappingConfig } from './config.js';
import { captureFor, mappingConfig } from './config.js';
import { ADAPTER_ERRORS, AdapterError, parseHookText } from './hook-input.js';
import type { AttentionSpec, DismissRule, EventDraft } from './mapper.js';
import { ClaudeCodeMapper } from './mapper.js';
import { ASK_DECLINE_OPTIONS, ELICITATION_DECLINE_OPTIONS, NO_DECISION, applyAnswer } from './answers.js';
import { DEFAULT_PORT, DEFAULT_RELAY, DEFAULT_WAIT_MS } from './constants.js';


/** What the daemon needs to emit and receive commands: the relay connection, or a test double of it. */
export interface Uplink {
  emit(session: string, type: string, data: Record<string, unknown> | undefined, attrs: Record<string, unknown>): WireEvent;
  /** True while the relay connection is established. */
  connected(): boolean;
  onRespond(handler: (cmd: IncomingCommand) => CommandDecision | Promise<CommandDecision>): void;
  flush(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  /** Listen port; default 8377 (0 = ephemeral, tests). */
  port?: number;
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
  /** Max hook body size; default 1 MiB (413 above). */
  maxBodyBytes?: number;
  /** Durable state directory for the epoch counter (AEP-0001 §7.2). */
  stateDir?: string;
  /** Diagnostics (never receives tokens). */
  log?: (line: string) => void;
  /** Clock (tests). */
  now?: () => number;
  /** Replace the relay connection (tests of the daemon alone). */
  uplink?: Uplink;
}

/** A running daemon. */
export interface DaemonHandle {
  url: string;
  port: number;
  /** Ids of pending attention requests. */
  pending(): string[];
  /** Dismisses pending requests (no decision to Claude Code), flushes and closes. Idempotent. */
  close(): Promise<void>;
}

/** A hook held open on an engine request: what dismiss rules match against. */
interface Held {
  spec: AttentionSpec;
  session: string;
}

/** The AEP kind of each answerable hook (mapper.ts). */
const KIND: Record<AttentionSpec['hook'], AttentionKind> = { ask: 'form', permission: 'permission', elicitation: 'form' };

/** The options an answer may choose (real labels where the hook has them; answers.ts maps them). */
function answerOptions(spec: AttentionSpec): { id: string; label: string }[] {
  if (spec.hook === 'permission') return spec.options ?? [];
  return (spec.hook === 'ask' ? ASK_DECLINE_OPTIONS : ELICITATION_DECLINE_OPTIONS).map((id) => ({ id, label: id }));
}

/** The highest level the config may emit at: the connection's ceiling. */
function ceilingOf(cfg: MappingConfig): CaptureLevel {
  const levels = [cfg.capture, ...cfg.overrides.map((o) => o.level)];
  return levels.reduce((a, b) => (captureRank(b) > captureRank(a) ? b : a), 'metadata' as CaptureLevel);
}

/** The relay connection as an {@link Uplink}. */
function relayUplink(opts: DaemonOptions, cfg: MappingConfig): Uplink {
  const ceiling = ceilingOf(cfg);
  const eopts: ConstructorParameters<typeof EmitterConnection>[0] = {
    url: opts.relay ?? DEFAULT_RELAY,
    agent: cfg.agent,
    capture: ceiling,
    control: { accepts: ['control.attention.respond'], ackWindowMs: 10_000 },
    emits: ['session', 'run', 'tool', 'attention', 'delegation', 'progress', 'control'],
  };
  if (opts.token !== undefined) eopts.token = opts.token;
  if (opts.stateDir !== undefined) eopts.stateDir = opts.stateDir;
  if (opts.log) eopts.log = opts.log;
  const conn = new EmitterConnection(eopts);
  return {
    emit: (session, type, data, attrs) => conn.emit(session, type, data, attrs),
    connected: () => conn.stats().connected,
    onRespond: (h) => { conn.onCommand('control.attention.respond', h); },
    flush: (ms) => conn.flush(ms),
    close: () => conn.close(),
  };
}

/**
 * Starts the daemon. Resolves once the HTTP endpoint listens; the relay connection is made in
 * the background (hooks are answered with no decision until it is up).
 */
export async function startDaemon(opts: DaemonOptions = {}): Promise<DaemonHandle> {
  const log = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  const cfg = mappingConfig({ home: homedir(), ...opts.mapping });
  const mapper = new ClaudeCodeMapper(cfg);
  const waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  const graceMs = opts.connectGraceMs ?? 600;
  const maxBody = opts.maxBodyBytes ?? 1024 * 1024;
  const uplink = opts.uplink ?? relayUplink(opts, cfg);
  // Without a token the relay refuses every command (AEP-0004 §4.1): no answer can ever arrive,
  // so holding a hook would only delay Claude Code. Questions are recorded and handed back at once.
  const canAnswer = opts.uplink !== undefined || (opts.token !== undefined && opts.token !== '');
  if (!canAnswer) log('aep claude-code: no relay token: questions are recorded but answered in the terminal (commands need authentication, AEP-0004 §4.1)');
  const refs = new Map<string, string>();
  const held = new Map<string, Held>();
  mapper.pendingProbe = (session) => [...held.values()].some((h) => h.session === session);
  let disconnectedSince: number | undefined = uplink.connected() ? undefined : now();
  let closing = false;

  const port: AttentionPort = {
    ceiling: ceilingOf(cfg),
    options: { agent: cfg.agent },
    emit: (session, type, data, attrs) => uplink.emit(session, type, data, { ...attrs }),
    onCommand: (_type, handler) => { uplink.onRespond(handler); return () => {}; },
  };
  const engine = new AttentionEngine(port, {
    redact: redactionOf(cfg),
    lifecycleCapture: (type) => captureFor(cfg, type),
    now,
    log: (line) => log(`aep claude-code: AEP_CC_EMIT_FAILED: ${line}`),
  });

  const remember = (ref: string, id: string): void => {
    refs.set(ref, id);
    if (refs.size > 50_000) refs.delete(refs.keys().next().value as string);
  };

  const emitDraft = (d: EventDraft): WireEvent | undefined => {
    const attrs: Record<string, unknown> = { capture: d.capture };
    if (d.run) attrs['run'] = d.run;
    if (d.severity) attrs['severity'] = d.severity;
    const subject = d.subjectRef ? refs.get(d.subjectRef) : d.subject;
    if (subject) attrs['subject'] = subject;
    const cause = d.causeRef ? refs.get(d.causeRef) : undefined;
    if (cause) attrs['cause'] = cause;
    try {
      const ev = uplink.emit(d.session, d.type, d.data, attrs);
      if (d.ref) remember(d.ref, ev.id);
      return ev;
    } catch (err) {
      log(`aep claude-code: AEP_CC_EMIT_FAILED: ${d.type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };

  /**
   * Raises `spec` on the engine; answers are checked by answers.ts (hook-specific rules) after the
   * engine's own checks, and the accepted answer's hook output is handed to `answered`.
   */
  const raise = (spec: AttentionSpec, expiresInMs: number | undefined, answered: (output: Record<string, unknown>) => void): AttentionPromise | undefined => {
    const r = spec.request;
    const subject = r.subjectRef ? refs.get(r.subjectRef) : r.subject;
    const cause = r.causeRef ? refs.get(r.causeRef) : undefined;
    const validate = (answer: Parameters<typeof applyAnswer>[1]): AnswerCheck => {
      const result = applyAnswer(spec, answer);
      if (!result.ok) return result.issues;
      answered(result.output);
      return { answer: result.applied };
    };
    try {
      const p = engine.requestAttention({
        session: r.session, kind: KIND[spec.hook], data: r.data ?? {}, capture: r.capture,
        ...(r.severity ? { severity: r.severity } : {}),
        ...(subject ? { subject } : {}),
        ...(cause ? { cause } : {}),
        ...(r.run ? { run: r.run } : {}),
        ...(spec.fields ? { fields: spec.fields } : {}),
        options: answerOptions(spec),
        ...(expiresInMs !== undefined ? { expiresInMs } : {}),
        validate,
        onRejected: (issues, cmd) => log(`aep claude-code: answer to ${String(cmd.subject)} nacked invalid: ${issues.map((i) => i.rule).join(', ')}`),
      });
      if (r.ref) remember(r.ref, p.id);
      return p;
    } catch (err) {
      log(`aep claude-code: AEP_CC_EMIT_FAILED: ${r.type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };

  const matches = (h: Held, r: DismissRule): boolean => {
    if (h.session !== r.session) return false;
    if (r.all) return true;
    if (r.toolUseId !== undefined) return h.spec.toolUseId === r.toolUseId;
    if (r.server !== undefined) return h.spec.hook === 'elicitation' && h.spec.request.subject === r.server;
    if (r.toolName !== undefined) return h.spec.hook === 'permission' && h.spec.toolName === r.toolName && h.spec.inputDigest === r.inputDigest;
    return false;
  };

  const openAttention = (spec: AttentionSpec, res: ServerResponse, send: (o: Record<string, unknown>) => void): void => {
    let output: Record<string, unknown> = NO_DECISION;
    const p = raise(spec, waitMs, (o) => { output = o; });
    if (!p) { send(NO_DECISION); return; }
    held.set(p.id, { spec, session: spec.request.session });
    // Relay lost while waiting: hand the question back to the terminal within ~1 s.
    const watchdog = setInterval(() => {
      if (disconnectedSince !== undefined && now() - disconnectedSince >= graceMs) engine.dismiss(p.id, 'relay unreachable');
    }, 100);
    // Claude Code cancelled the hook (user pressed Esc, hook timeout): the question went elsewhere.
    res.on('close', () => { if (!res.writableFinished) engine.dismiss(p.id, 'hook cancelled'); });
    void p.then((o) => {
      clearInterval(watchdog);
      held.delete(p.id);
      send(o.status === 'answered' ? output : NO_DECISION);
    });
  };

  const waitConnected = async (ms: number): Promise<boolean> => {
    const deadline = now() + ms;
    while (!uplink.connected()) {
      if (now() >= deadline || closing) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
    return true;
  };

  const handleHook = async (body: string, res: ServerResponse, send: (o: Record<string, unknown>) => void): Promise<void> => {
    let hook;
    try {
      hook = parseHookText(body);
    } catch (err) {
      const e = err instanceof AdapterError ? err : new AdapterError(ADAPTER_ERRORS.HOOK_INVALID, 'hook input could not be read');
      log(`aep claude-code: ${e.code}: ${e.message}`);
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: e.code, message: e.message }));
      return;
    }
    const result = mapper.map(hook, now());
    for (const rule of result.dismiss) {
      for (const [id, h] of [...held]) if (matches(h, rule)) engine.dismiss(id, 'answered elsewhere');
    }
    for (const d of result.events) emitDraft(d);
    if (!result.attention) { send(NO_DECISION); return; }
    // Relay unreachable (or no token): no decision within the grace (< 1 s), so Claude Code asks
    // in the terminal.
    if (!canAnswer || (!uplink.connected() && !(await waitConnected(graceMs)))) {
      const p = raise(result.attention, undefined, () => {});
      if (p) engine.dismiss(p.id, 'no relay');
      send(NO_DECISION);
      return;
    }
    openAttention(result.attention, res, send);
  };

  const server: Server = createServer((req, res) => {
    let answered = false;
    const send = (o: Record<string, unknown>): void => {
      if (answered) return;
      answered = true;
      if (res.writableEnded || res.destroyed) return;
      const body = JSON.stringify(o);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'GET' && path === '/health') {
      const body = JSON.stringify({ ok: true, connected: uplink.connected(), pending: engine.pending().length });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      return;
    }
    if (req.method !== 'POST' || !(path === '/' || path === '/hook' || path.startsWith('/hooks/'))) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'AEP_CC_NOT_FOUND', message: 'POST hook input to /hook' }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      if (tooLarge) return;
      size += c.length;
      if (size > maxBody) {
        tooLarge = true;
        log(`aep claude-code: ${ADAPTER_ERRORS.HOOK_TOO_LARGE}: hook body over ${maxBody} bytes`);
        res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
        res.end(JSON.stringify({ error: ADAPTER_ERRORS.HOOK_TOO_LARGE, message: `hook body exceeds ${maxBody} bytes` }));
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => { /* client went away; nothing to answer */ });
    req.on('end', () => {
      if (tooLarge) return;
      handleHook(Buffer.concat(chunks).toString('utf8'), res, send).catch((err: unknown) => {
        // Our fault, never the agent's: log and give no decision (style.md §6, §9).
        log(`aep claude-code: AEP_CC_INTERNAL: ${err instanceof Error ? err.message : String(err)}`);
        send(NO_DECISION);
      });
    });
  });
  server.on('clientError', (_err, socket) => { socket.destroy(); });

  const connWatch = setInterval(() => {
    if (uplink.connected()) disconnectedSince = undefined;
    else if (disconnectedSince === undefined) disconnectedSince = now();
  }, 50);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? DEFAULT_PORT, opts.host ?? '127.0.0.1', () => { server.off('error', reject); resolve(); });
  });
  const addr = server.address() as AddressInfo;
  const host = opts.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  let closed: Promise<void> | undefined;
  return {
    url,
    port: addr.port,
    pending: () => engine.pending(),
    close: () => {
      closed ??= (async () => {
        closing = true;
        clearInterval(connWatch);
        await engine.shutdown();
        const stopped = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        await stopped;
        await uplink.flush(2_000).catch(() => false);
        await uplink.close();
      })();
      return closed;
    },
  };
}

function redactionOf(cfg: MappingConfig): { home?: string; secretValues?: string[]; pii?: boolean } {
  const o: { home?: string; secretValues?: string[]; pii?: boolean } = {};
  if (cfg.home !== undefined) o.home = cfg.home;
  if (cfg.secretValues !== undefined) o.secretValues = cfg.secretValues;
  if (cfg.pii !== undefined) o.pii = cfg.pii;
  return o;
}
