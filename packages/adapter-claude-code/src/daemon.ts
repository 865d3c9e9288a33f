// The adapter daemon (`aep claude-code serve`): receives Claude Code HTTP hooks, owns each Claude
// Code session's AEP session through one authenticated relay connection (AEP-0003 §3.5), holds
// AskUserQuestion / PermissionRequest / Elicitation hooks open until a validated
// `control.attention.respond` arrives (AEP-0004 §5.3), and never breaks the agent (style.md §9):
// every hook path answers, at worst with "no decision", within its budget.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import type { CaptureLevel, Issue } from '@aep/protocol';
import { captureRank, gateAnswer } from '@aep/protocol';
import { EmitterConnection } from '@aep/client';
import type { CommandDecision, IncomingCommand, WireEvent } from '@aep/client';
import type { MappingConfig } from './config.js';
import { captureFor, mappingConfig } from './config.js';
import { ADAPTER_ERRORS, AdapterError, parseHookText } from './hook-input.js';
import type { AttentionSpec, DismissRule, EventDraft } from './mapper.js';
import { ClaudeCodeMapper } from './mapper.js';
import { NO_DECISION, applyAnswer } from './answers.js';
import { DEFAULT_PORT, DEFAULT_RELAY, DEFAULT_WAIT_MS } from './constants.js';
import type { HookAnswer } from './answers.js';


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

interface Pending {
  id: string;
  spec: AttentionSpec;
  session: string;
  run?: string;
  opened: number;
  capture: CaptureLevel;
  finish: (output: Record<string, unknown>) => void;
  timer: NodeJS.Timeout;
  watchdog: NodeJS.Timeout;
  settled: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The relay connection as an {@link Uplink}. */
function relayUplink(opts: DaemonOptions, cfg: MappingConfig): Uplink {
  const levels = [cfg.capture, ...cfg.overrides.map((o) => o.level)];
  const ceiling = levels.reduce((a, b) => (captureRank(b) > captureRank(a) ? b : a), 'metadata' as CaptureLevel);
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
  mapper.pendingProbe = (session) => [...pending.values()].some((p) => p.session === session);
  const waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  const graceMs = opts.connectGraceMs ?? 600;
  const maxBody = opts.maxBodyBytes ?? 1024 * 1024;
  const uplink = opts.uplink ?? relayUplink(opts, cfg);
  // Without a token the relay refuses every command (AEP-0004 §4.1): no answer can ever arrive,
  // so holding a hook would only delay Claude Code. Questions are recorded and handed back at once.
  const canAnswer = opts.uplink !== undefined || (opts.token !== undefined && opts.token !== '');
  if (!canAnswer) log('aep claude-code: no relay token: questions are recorded but answered in the terminal (commands need authentication, AEP-0004 §4.1)');
  const refs = new Map<string, string>();
  const pending = new Map<string, Pending>();
  /** Recently settled request ids: a late answer is refused, not "invalid" (AEP-0004 §5.3 step 3). */
  const settled = new Set<string>();
  let disconnectedSince: number | undefined = uplink.connected() ? undefined : now();
  let closing = false;

  const rememberSettled = (id: string): void => {
    settled.add(id);
    if (settled.size > 10_000) settled.delete(settled.values().next().value as string);
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
      if (d.ref) {
        refs.set(d.ref, ev.id);
        if (refs.size > 50_000) refs.delete(refs.keys().next().value as string);
      }
      return ev;
    } catch (err) {
      log(`aep claude-code: AEP_CC_EMIT_FAILED: ${d.type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };

  /** Ends a pending request with one terminal (AEP-0002 §7.2) and answers its hook. */
  const settle = (p: Pending, how: 'timeout' | 'dismissed', output: Record<string, unknown> = NO_DECISION): void => {
    if (p.settled) return;
    p.settled = true;
    clearTimeout(p.timer);
    clearInterval(p.watchdog);
    pending.delete(p.id);
    rememberSettled(p.id);
    const elapsed = Math.max(0, now() - p.opened);
    if (how === 'timeout') emitWithCause(p, 'attention.timeout', { after_ms: elapsed }, p.id);
    else emitWithCause(p, 'attention.resolved', { resolution: 'dismissed', latency_ms: elapsed }, p.id);
    p.finish(output);
  };

  const emitWithCause = (p: Pending, type: string, data: Record<string, unknown>, cause: string): WireEvent | undefined => {
    const attrs: Record<string, unknown> = { capture: captureFor(cfg, type), subject: p.id, cause };
    if (p.run) attrs['run'] = p.run;
    const capture = attrs['capture'] as CaptureLevel;
    try {
      return uplink.emit(p.session, type, capture === 'none' ? undefined : data, attrs);
    } catch (err) {
      log(`aep claude-code: AEP_CC_EMIT_FAILED: ${type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };

  const matches = (p: Pending, r: DismissRule): boolean => {
    if (p.session !== r.session) return false;
    if (r.all) return true;
    if (r.toolUseId !== undefined) return p.spec.toolUseId === r.toolUseId;
    if (r.server !== undefined) return p.spec.hook === 'elicitation' && p.spec.request.subject === r.server;
    if (r.toolName !== undefined) return p.spec.hook === 'permission' && p.spec.toolName === r.toolName && p.spec.inputDigest === r.inputDigest;
    return false;
  };

  /** Handles `control.attention.respond` for our sessions (AEP-0004 §5.3 steps 3-5). */
  uplink.onRespond((cmd) => {
    const ev = cmd.event;
    const subject = ev.subject;
    const p = subject ? pending.get(subject) : undefined;
    if (!p || p.session !== ev.session) {
      if (subject && settled.has(subject)) return { status: 'rejected', reason: 'refused', detail: 'the request is no longer pending (answered, timed out or dismissed)' };
      return { status: 'rejected', reason: 'invalid', detail: 'subject names no pending attention request of this session' };
    }
    const data = isObject(ev.data) ? ev.data : {};
    const result = applyAnswer(p.spec, data['answer']);
    if (!result.ok) {
      const issues: Issue[] = result.issues;
      log(`aep claude-code: answer to ${p.id} nacked invalid: ${issues.map((i) => i.rule).join(', ')}`);
      return { status: 'rejected', reason: 'invalid', issues, detail: issues.map((i) => i.message).join('; ') };
    }
    return {
      status: 'accepted',
      after: () => {
        if (p.settled) return;
        p.settled = true;
        clearTimeout(p.timer);
        clearInterval(p.watchdog);
        pending.delete(p.id);
        rememberSettled(p.id);
        const capture = captureFor(cfg, 'attention.answered');
        const recorded = gateAnswer(result.applied satisfies HookAnswer, capture, { fields: p.spec.fields ?? [], redaction: redactionOf(cfg) });
        const answeredData: Record<string, unknown> = { answer: recorded, via: 'control' };
        if (typeof ev.agent === 'string') answeredData['by'] = ev.agent;
        const answered = emitWithCause(p, 'attention.answered', answeredData, ev.id);
        emitWithCause(p, 'attention.resolved', { resolution: 'answered', latency_ms: Math.max(0, now() - p.opened) }, answered?.id ?? ev.id);
        p.finish(result.output);
      },
    };
  });

  const openAttention = (spec: AttentionSpec, res: ServerResponse, req: IncomingMessage, send: (o: Record<string, unknown>) => void): void => {
    const ev = emitDraft(spec.request);
    if (!ev) { send(NO_DECISION); return; }
    const p: Pending = {
      id: ev.id,
      spec,
      session: spec.request.session,
      opened: now(),
      capture: spec.request.capture,
      finish: send,
      settled: false,
      timer: setTimeout(() => settle(p, 'timeout'), waitMs),
      // Relay lost while waiting: hand the question back to the terminal within ~1 s.
      watchdog: setInterval(() => {
        if (disconnectedSince !== undefined && now() - disconnectedSince >= graceMs) settle(p, 'dismissed');
      }, 100),
    };
    if (spec.request.run) p.run = spec.request.run;
    pending.set(p.id, p);
    // Claude Code cancelled the hook (user pressed Esc, hook timeout): the question went elsewhere.
    res.on('close', () => { if (!res.writableFinished) settle(p, 'dismissed'); });
    void req;
  };

  const waitConnected = async (ms: number): Promise<boolean> => {
    const deadline = now() + ms;
    while (!uplink.connected()) {
      if (now() >= deadline || closing) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
    return true;
  };

  const handleHook = async (body: string, req: IncomingMessage, res: ServerResponse, send: (o: Record<string, unknown>) => void): Promise<void> => {
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
      for (const p of [...pending.values()]) if (matches(p, rule)) settle(p, 'dismissed');
    }
    for (const d of result.events) emitDraft(d);
    if (!result.attention) { send(NO_DECISION); return; }
    // Relay unreachable (or no token): no decision within the grace (< 1 s), so Claude Code asks
    // in the terminal.
    if (!canAnswer || (!uplink.connected() && !(await waitConnected(graceMs)))) {
      const ev = emitDraft(result.attention.request);
      if (ev) {
        const d: EventDraft = { type: 'attention.resolved', session: result.attention.request.session, capture: captureFor(cfg, 'attention.resolved'), subject: ev.id };
        if (result.attention.request.ref) d.causeRef = result.attention.request.ref;
        if (result.attention.request.run) d.run = result.attention.request.run;
        if (d.capture !== 'none') d.data = { resolution: 'dismissed', latency_ms: 0 };
        emitDraft(d);
        rememberSettled(ev.id);
      }
      send(NO_DECISION);
      return;
    }
    openAttention(result.attention, res, req, send);
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
      const body = JSON.stringify({ ok: true, connected: uplink.connected(), pending: pending.size });
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
      handleHook(Buffer.concat(chunks).toString('utf8'), req, res, send).catch((err: unknown) => {
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
    pending: () => [...pending.keys()],
    close: () => {
      closed ??= (async () => {
        closing = true;
        clearInterval(connWatch);
        for (const p of [...pending.values()]) settle(p, 'dismissed');
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
