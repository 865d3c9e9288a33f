// The policy delegate at run time (issue 18): an ordinary AEP consumer and control sender with
// its own identity. It reads `attention.*` at capture `metadata` (so its rules can only see
// structural facts), decides each pending request by the policy (decide.ts), announces every
// request it considers with `attention.routed` (foreign emitter: its own agent/source, the
// request's session, no seq, subject = request id, the rule in the `policyrule` attribute),
// answers with `control.attention.respond` carrying `policyrule` (and `approvalproof` computed
// from the exact approval text of the rule or grant, contract C1), and writes every decision to
// its JSONL log. It owns a session of its own that accepts `control.pause`/`control.resume`
// (the kill switch over the bus) and the vendor commands `x.aep.control.grant`/`.revoke`, and
// emits `x.aep.policy.*` events with structural members only.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { APPROVAL_PROOF_ATTR, approvalProof } from '@aep/protocol';
import { AttentionFold, CommandSender, EmitterConnection, POLICY_RULE_ATTR, subscribe } from '@aep/client/node';
import type { CommandDecision, IncomingCommand, Subscription, WireEvent } from '@aep/client/node';
import { BuiltinEngine } from './builtin.js';
import { createCedarEngine } from './cedar.js';
import { pendingMs } from './clock.js';
import { decide } from './decide.js';
import type { Decision } from './decide.js';
import type { DecisionEngine, EvalContext } from './engine.js';
import { DelegateError } from './errors.js';
import { answerableByControl, requestFacts } from './facts.js';
import type { RequestFacts } from './facts.js';
import { GrantStore, grantFromCommand, grantSummary } from './grants.js';
import type { GrantSummary } from './grants.js';
import { DecisionLog, factsRecord } from './log.js';
import type { DecisionRecord, Outcome } from './log.js';
import type { Policy, RateLimit } from './policy.js';

/** Defaults of the delegate's identity. */
export const DELEGATE_AGENT = 'aep-delegate';
export const DELEGATE_SESSION = 'aep-delegate';
/** Vendor commands the delegate's own session accepts (declared in `control.accepts`). */
export const GRANT_COMMAND = 'x.aep.control.grant';
export const REVOKE_COMMAND = 'x.aep.control.revoke';
/** Vendor events of the delegate's session (structural members only). */
export const GRANTED_EVENT = 'x.aep.policy.granted';
export const REVOKED_EVENT = 'x.aep.policy.revoked';
export const SNAPSHOT_EVENT = 'x.aep.policy.snapshot';
/** The delegate's commands, as its `hello` declares them. */
export const DELEGATE_ACCEPTS = ['control.pause', 'control.resume', GRANT_COMMAND, REVOKE_COMMAND] as const;

/** The default state directory: `$XDG_DATA_HOME/aep/delegate`, else `~/.local/share/aep/delegate`. */
export function defaultStateDir(): string {
  const xdg = process.env['XDG_DATA_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'share'), 'aep', 'delegate');
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}

/** Creates the engine a policy names (the built-in rules, or Cedar). */
export async function createEngine(policy: Policy): Promise<DecisionEngine> {
  return policy.engine === 'cedar' ? createCedarEngine(policy) : new BuiltinEngine(policy);
}

export interface DelegateOptions {
  url: string;
  /** A token scoped to what the delegate may answer (docs/delegates.md "Token"). Never logged. */
  token?: string;
  policy: Policy;
  /** Default: the engine the policy names. */
  engine?: DecisionEngine;
  agent?: string;
  /** The delegate's own session (commands, grants, state). */
  session?: string;
  /** Decision log, grants file and pause flag live here (0700); default {@link defaultStateDir}. */
  stateDir?: string;
  /** Overrides the policy's `kill_switch` (default `<stateDir>/STOP`). */
  killSwitch?: string;
  /** Ack window of its answers; default 10 000 ms. */
  ackWindowMs?: number;
  /** A request is considered this long after it was seen, so a replayed request that is already closed is not answered; default 100 ms. */
  settleMs?: number;
  now?: () => number;
  log?: (line: string) => void;
  /** Called with every decision record (tests, `--verbose`). */
  onDecision?: (record: DecisionRecord) => void;
}

export interface DelegateStats {
  considered: number;
  answered: number;
  shadowed: number;
  asked: number;
  paused: number;
  rateLimited: number;
  failed: number;
}

export interface DelegateHandle {
  readonly session: string;
  readonly agent: string;
  readonly logFile: string;
  readonly killSwitch: string;
  /** Paused by `control.pause` (the kill switch file is checked separately, before every answer). */
  paused(): boolean;
  grants(): GrantSummary[];
  stats(): DelegateStats;
  close(): Promise<void>;
}

/** Sliding-window counter of answers. */
class Window {
  private hits: number[] = [];
  constructor(readonly limit: RateLimit) {}
  full(now: number): boolean {
    this.hits = this.hits.filter((t) => t > now - this.limit.perMs);
    return this.hits.length >= this.limit.max;
  }
  /** When the oldest hit leaves the window. */
  freeAt(): number {
    return (this.hits[0] ?? 0) + this.limit.perMs;
  }
  hit(now: number): void {
    this.hits.push(now);
  }
}

interface Tracked {
  facts: RequestFacts;
  firstSeen: number;
  /** `via` + rule of the last routed event (re-announced only when it changes). */
  lastRouted?: string;
  /** An answer was sent for it (never twice in a run). */
  sent: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

const MAX_TRACKED = 10_000;
const MAX_RECHECK_MS = 24 * 3_600_000;

/**
 * Starts a delegate: connects its emitter (own session), its command sender and its metadata
 * subscription, and decides every pending request. Rejects with the client's connection errors
 * (`AEP_CLIENT_REFUSED`, `AEP_CLIENT_UNREACHABLE`) or `AEP_DELEGATE_STATE`.
 */
export async function startDelegate(o: DelegateOptions): Promise<DelegateHandle> {
  const now = o.now ?? Date.now;
  const log = o.log ?? (() => {});
  const agent = o.agent ?? DELEGATE_AGENT;
  const session = o.session ?? DELEGATE_SESSION;
  const stateDir = expandHome(o.stateDir ?? defaultStateDir());
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DelegateError('AEP_DELEGATE_STATE', `cannot create the state directory ${stateDir}: ${(err as Error).message}`);
  }
  const policy = o.policy;
  const engine = o.engine ?? (await createEngine(policy));
  const decisions = new DecisionLog(join(stateDir, 'decisions.jsonl'));
  const grants = new GrantStore(join(stateDir, 'grants.json'));
  const pauseFile = join(stateDir, 'paused');
  const killSwitch = expandHome(o.killSwitch ?? policy.killSwitch ?? join(stateDir, 'STOP'));
  let pausedFlag = existsSync(pauseFile);
  const stats: DelegateStats = { considered: 0, answered: 0, shadowed: 0, asked: 0, paused: 0, rateLimited: 0, failed: 0 };
  const globalWindow = new Window(policy.rateLimit);
  const ruleWindows = new Map<string, Window>();
  const tracked = new Map<string, Tracked>();
  let closed = false;

  const conn = await EmitterConnection.connect({
    url: o.url,
    ...(o.token ? { token: o.token } : {}),
    agent,
    capture: 'redacted',
    control: { accepts: [...DELEGATE_ACCEPTS] },
    emits: ['session', 'attention', 'progress', 'control', 'x'],
    stateDir,
    log,
  });
  const sender = new CommandSender({
    url: o.url,
    ...(o.token ? { token: o.token } : {}),
    agent,
    ...(o.ackWindowMs !== undefined ? { ackWindowMs: o.ackWindowMs } : {}),
  });

  const safeEmit = (
    s: string,
    type: string,
    data: Record<string, unknown> | undefined,
    attrs: Parameters<EmitterConnection['emit']>[3],
  ): WireEvent | undefined => {
    try {
      return conn.emit(s, type, data, attrs);
    } catch (err) {
      log(`aep delegate: could not emit ${type}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  };

  const snapshot = (cause?: string) =>
    safeEmit(
      session,
      SNAPSHOT_EVENT,
      {
        grants: grants.active(now()).map(grantSummary),
        paused: pausedFlag,
        shadow: policy.shadow,
        engine: engine.name,
        policy: policy.hash,
        rules: policy.rules.length,
      },
      { capture: 'metadata', ...(cause ? { cause } : {}) },
    );

  // The own session: claimed by its first sequenced event, so its commands are routed here.
  safeEmit(session, 'session.started', { client: { name: 'aep delegate', version: '0.1.0' } }, { capture: 'metadata' });
  for (const g of grants.expire(now())) safeEmit(session, REVOKED_EVENT, { grant: g.id, reason: 'expired' }, { capture: 'metadata', subject: g.id });
  snapshot();

  const stopped = (): boolean => pausedFlag || existsSync(killSwitch);

  const windowOf = (rule: string, limit: RateLimit): Window => {
    let w = ruleWindows.get(rule);
    if (!w || w.limit.max !== limit.max || w.limit.perMs !== limit.perMs) {
      w = new Window(limit);
      ruleWindows.set(rule, w);
    }
    return w;
  };

  const schedule = (t: Tracked, at: number | undefined) => {
    if (t.timer) {
      clearTimeout(t.timer);
      t.timer = undefined;
    }
    if (at === undefined || closed || t.sent) return;
    const wait = Math.max(0, at - now());
    if (wait > MAX_RECHECK_MS) return;
    t.timer = setTimeout(() => {
      t.timer = undefined;
      consider(t);
    }, wait);
    (t.timer as { unref?: () => void }).unref?.();
  };

  const route = (t: Tracked, via: Outcome, rule: string | undefined) => {
    const key = `${via} ${rule ?? ''}`;
    if (t.lastRouted === key) return false;
    t.lastRouted = key;
    // AEP-0002 §7.3: a foreign event in the request's session; the rule id rides as an extension
    // attribute because relays drop unannotated payload members below full.
    safeEmit(
      t.facts.session,
      'attention.routed',
      { to: via === 'policy' ? 'delegate' : 'person', via },
      {
        subject: t.facts.id,
        cause: t.facts.id,
        capture: 'metadata',
        ...(rule !== undefined ? { extensions: { [POLICY_RULE_ATTR]: rule } } : {}),
      },
    );
    return true;
  };

  const record = (t: Tracked, ctx: EvalContext, d: Decision, outcome: Outcome): DecisionRecord => {
    const v = d.verdict;
    const r: DecisionRecord = {
      type: 'decision',
      time: new Date(ctx.now).toISOString(),
      ...factsRecord(t.facts, pendingMs(ctx.now, t.facts.time, t.firstSeen)),
      engine: engine.name,
      policy: policy.hash,
      outcome,
      ...(v.action === 'answer' ? { rule: v.rule, tier: v.tier, answer: v.answer } : v.rule !== undefined ? { rule: v.rule } : {}),
      ...(v.action === 'ask' ? { reason: v.reason } : {}),
      trace: d.trace,
    };
    return r;
  };

  const write = (r: DecisionRecord) => {
    try {
      decisions.append(r);
    } catch (err) {
      log(`aep delegate: ${(err as DelegateError).code ?? 'AEP_DELEGATE_STATE'}: ${(err as Error).message}`);
    }
    try {
      o.onDecision?.(r);
    } catch {
      /* a test hook never breaks the delegate */
    }
  };

  const send = async (t: Tracked, v: Extract<Decision['verdict'], { action: 'answer' }>) => {
    const extensions: Record<string, string> = { [POLICY_RULE_ATTR]: v.rule };
    if (v.proofText !== undefined) extensions[APPROVAL_PROOF_ATTR] = approvalProof(t.facts.id, v.proofText);
    let status = 'error';
    let reason: string | undefined;
    let command = '';
    try {
      const res = await sender.respond({
        session: t.facts.session,
        requestId: t.facts.id,
        capture: 'metadata',
        extensions,
        answer: {
          ...(v.answer.option !== undefined ? { option: v.answer.option } : {}),
          ...(v.answer.values !== undefined ? { values: v.answer.values } : {}),
        },
      });
      status = res.status;
      command = res.command.id;
      reason = res.reason;
    } catch (err) {
      reason = err instanceof Error ? ((err as { code?: string }).code ?? 'error') : 'error';
    }
    if (status !== 'accepted') {
      stats.failed++;
      log(`aep delegate: the answer to ${t.facts.id} (${v.rule}) was ${status}${reason ? ` (${reason})` : ''}: it stays for a person`);
    }
    try {
      decisions.append({
        type: 'result',
        time: new Date(now()).toISOString(),
        request: t.facts.id,
        command,
        rule: v.rule,
        status,
        ...(reason !== undefined ? { reason } : {}),
      });
    } catch (err) {
      log(`aep delegate: ${(err as Error).message}`);
    }
  };

  function consider(t: Tracked): void {
    if (closed || t.sent || !tracked.has(t.facts.id)) return;
    const ctx: EvalContext = { now: now(), timezone: policy.timezone, firstSeen: t.firstSeen };
    let d: Decision;
    try {
      d = decide(engine, grants.active(ctx.now), t.facts, ctx);
    } catch (err) {
      log(`aep delegate: could not decide ${t.facts.id}: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const v = d.verdict;
    let outcome: Outcome;
    let recheckAt = d.recheckAt;
    if (v.action === 'ask') {
      outcome = v.reason === 'no-match' ? 'no-match' : v.reason === 'never' || v.reason === 'cannot-deny' ? 'never' : 'ask';
    } else if (policy.shadow || v.shadow) {
      outcome = 'shadow';
    } else if (stopped()) {
      outcome = 'paused';
      recheckAt = Math.min(recheckAt ?? Infinity, ctx.now + 2_000);
    } else {
      const rw = v.rateLimit ? windowOf(v.rule, v.rateLimit) : undefined;
      if (globalWindow.full(ctx.now) || rw?.full(ctx.now)) {
        outcome = 'rate-limited';
        const free = Math.max(globalWindow.full(ctx.now) ? globalWindow.freeAt() : 0, rw?.full(ctx.now) ? rw.freeAt() : 0);
        recheckAt = Math.min(recheckAt ?? Infinity, free);
      } else {
        outcome = 'policy';
      }
    }
    const changed = route(t, outcome, v.action === 'answer' || v.rule !== undefined ? v.rule : undefined);
    if (changed) {
      write(record(t, ctx, d, outcome));
      if (outcome === 'policy') stats.answered++;
      else if (outcome === 'shadow') stats.shadowed++;
      else if (outcome === 'paused') stats.paused++;
      else if (outcome === 'rate-limited') stats.rateLimited++;
      else stats.asked++;
    }
    if (outcome === 'shadow' && changed && v.action === 'answer') {
      // A shadow answer counts against the limits, so shadow mode shows what the limits would do.
      globalWindow.hit(ctx.now);
      if (v.rateLimit) windowOf(v.rule, v.rateLimit).hit(ctx.now);
    }
    if (outcome === 'policy' && v.action === 'answer') {
      // The kill switch was checked in this same synchronous step: nothing runs in between.
      t.sent = true;
      globalWindow.hit(ctx.now);
      if (v.rateLimit) windowOf(v.rule, v.rateLimit).hit(ctx.now);
      void send(t, v);
      return;
    }
    schedule(t, recheckAt === Infinity ? undefined : recheckAt);
  }

  const reconsiderAll = () => {
    for (const t of tracked.values()) if (!t.sent) consider(t);
  };

  const fold = new AttentionFold();
  const onEvent = (e: WireEvent) => {
    const change = fold.push(e);
    if (change === 'opened') {
      if (e.session === session) return;
      const facts = requestFacts(e);
      if (!facts || !answerableByControl(facts)) return;
      if (tracked.size >= MAX_TRACKED) {
        log(`aep delegate: more than ${MAX_TRACKED} pending requests: ${facts.id} is left to a person`);
        return;
      }
      const t: Tracked = { facts, firstSeen: now(), sent: false };
      tracked.set(facts.id, t);
      stats.considered++;
      // Settle first: a replayed request may be closed a few events later in the same replay.
      t.timer = setTimeout(() => {
        t.timer = undefined;
        consider(t);
      }, o.settleMs ?? 100);
      (t.timer as { unref?: () => void }).unref?.();
      return;
    }
    if ((change === 'answered' || change === 'closed') && typeof e.subject === 'string') {
      const t = tracked.get(e.subject);
      if (t && (change === 'closed' || !t.sent)) {
        if (t.timer) clearTimeout(t.timer);
        tracked.delete(e.subject);
      }
    }
  };

  const sub: Subscription = subscribe(
    {
      url: o.url,
      ...(o.token ? { token: o.token } : {}),
      filter: { type: 'attention.*' },
      ceiling: 'metadata',
      from: 'all',
      transport: 'sse',
      reconnect: {},
      onError: (err) => log(`aep delegate: subscription: ${err.message}`),
    },
    onEvent,
  );

  // Commands to the delegate's own session.
  const ack = (after?: () => void): CommandDecision => ({ status: 'accepted', ...(after ? { after } : {}) });
  const nack = (detail: string): CommandDecision => ({ status: 'rejected', reason: 'invalid', detail, capture: 'redacted' });
  conn.onCommand('control.pause', ({ event }: IncomingCommand) =>
    ack(() => {
      pausedFlag = true;
      try {
        writeFileSync(pauseFile, `${new Date(now()).toISOString()}\n`, { mode: 0o600 });
      } catch (err) {
        log(`aep delegate: cannot persist the pause: ${(err as Error).message}`);
      }
      safeEmit(session, 'progress.status', { phase: 'paused' }, { capture: 'metadata', cause: event.id });
    }),
  );
  conn.onCommand('control.resume', ({ event }: IncomingCommand) =>
    ack(() => {
      pausedFlag = false;
      try {
        rmSync(pauseFile, { force: true });
      } catch {
        /* already gone */
      }
      safeEmit(session, 'progress.status', { phase: 'active' }, { capture: 'metadata', cause: event.id });
      reconsiderAll();
    }),
  );
  conn.onCommand(GRANT_COMMAND, ({ event }: IncomingCommand) => {
    if (event.session !== session) return nack("grants go to the delegate's own session");
    const r = grantFromCommand(event.data, now(), policy.grants, event.agent);
    if (!r.ok) return nack(`${r.path}: ${r.message}`);
    try {
      grants.add(r.grant);
    } catch (err) {
      return { status: 'rejected', reason: 'busy', detail: (err as Error).message, capture: 'redacted' };
    }
    return ack(() => {
      safeEmit(session, GRANTED_EVENT, { ...grantSummary(r.grant) }, { capture: 'metadata', subject: r.grant.id, cause: event.id });
      scheduleExpiry();
      reconsiderAll();
    });
  });
  conn.onCommand(REVOKE_COMMAND, ({ event }: IncomingCommand) => {
    const id = event.data?.['grant'];
    if (typeof id !== 'string') return nack('/data/grant: the id of the grant to revoke is required');
    let g;
    try {
      g = grants.revoke(id);
    } catch (err) {
      return { status: 'rejected', reason: 'busy', detail: (err as Error).message, capture: 'redacted' };
    }
    if (!g) return nack('/data/grant: no active grant has that id');
    return ack(() => {
      safeEmit(session, REVOKED_EVENT, { grant: g.id, reason: 'revoked' }, { capture: 'metadata', subject: g.id, cause: event.id });
    });
  });

  // Grants always expire: each is announced revoked (reason expired) when its time passes.
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;
  function scheduleExpiry(): void {
    if (expiryTimer) clearTimeout(expiryTimer);
    expiryTimer = undefined;
    const next = grants.all().reduce<number | undefined>((m, g) => (m === undefined || g.expires < m ? g.expires : m), undefined);
    if (next === undefined || closed) return;
    expiryTimer = setTimeout(
      () => {
        let gone: ReturnType<GrantStore['expire']>;
        try {
          gone = grants.expire(now());
        } catch (err) {
          log(`aep delegate: ${(err as Error).message}`);
          gone = [];
        }
        for (const g of gone) safeEmit(session, REVOKED_EVENT, { grant: g.id, reason: 'expired' }, { capture: 'metadata', subject: g.id });
        scheduleExpiry();
      },
      Math.min(MAX_RECHECK_MS, Math.max(0, next - now()) + 1),
    );
    (expiryTimer as { unref?: () => void }).unref?.();
  }
  scheduleExpiry();

  try {
    await sub.ready;
  } catch (err) {
    closed = true;
    sub.close();
    await sender.close();
    await conn.close(0);
    throw err;
  }
  log(
    `aep delegate: ${agent} deciding by ${engine.name} policy ${policy.hash} (${policy.rules.length} rules${policy.shadow ? ', shadow mode' : ''}); own session ${session}; log ${decisions.file}`,
  );

  return {
    session,
    agent,
    logFile: decisions.file,
    killSwitch,
    paused: () => pausedFlag,
    grants: () => grants.active(now()).map(grantSummary),
    stats: () => ({ ...stats }),
    close: async () => {
      if (closed) return;
      closed = true;
      sub.close();
      if (expiryTimer) clearTimeout(expiryTimer);
      for (const t of tracked.values()) if (t.timer) clearTimeout(t.timer);
      await sender.close();
      // No session.ended: the own session id is reused across runs and a session has at most one terminal (AEP-0002 §2 rule 5).
      await conn.close();
    },
  };
}
