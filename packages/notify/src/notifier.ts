// The notifier: an ordinary AEP consumer (AEP-0003 §6) that forwards attention requests to
// channels, announces each forward with `attention.routed` (AEP-0002 §7.3: foreign emitter, own
// agent/source, the request's session, no seq, subject = request id), and answers only through
// `control.attention.respond` (AEP-0004 §5) when a person uses a one-tap action link.
//
// Every (rule, channel) pair is a *track* with its own subscription: the rule's attr-match filter
// at that channel's capture ceiling, so a channel only ever holds what its ceiling allows (the
// relay down-levels; the notifier down-levels again as defence in depth). One more subscription
// at ceiling `metadata` (structure only: it needs `attention.routed.to`) follows the lifecycle (answered / resolved / timeout / routed) so reminders
// stop and links are refused once a request is settled.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { CommandSender, subscribe } from '@aep/client/node';
import type { Subscription } from '@aep/client/node';
import { approvalProof, approvalView, createEmitter, downlevel, optionEffect, APPROVAL_PROOF_ATTR } from '@aep/protocol';
import type { CaptureLevel, EventBuilder } from '@aep/protocol';
import { channelSender } from './channels.js';
import type { ChannelSender, Delivery, Outgoing } from './channels.js';
import { compose, composeEvent } from './compose.js';
import type { RequestEvent } from './compose.js';
import type { Channel, NotifyConfig, Rule } from './config.js';
import { parseListen } from './config.js';
import { LinkSigner } from './links.js';
import type { LinkClaims, LinkRefusal } from './links.js';
import { planSends } from './plan.js';
import type { PlannedSend, TrackTiming } from './plan.js';

/** Options of {@link startNotifier}. */
export interface NotifierOptions {
  /** Relay base URL. */
  url: string;
  /** Relay token (the owner token today; a scoped `read` + `answer` token later, C7). */
  token?: string;
  config: NotifyConfig;
  /** Router identity (default `aep-notify`). */
  agent?: string;
  /** Router source (default `aep://{hostname}/agent/{agent}`). */
  source?: string;
  /** Where `aep up` keeps its VAPID keys (default push channel key file). */
  vapidFile?: string;
  log?: (line: string) => void;
  /** Clock (tests). */
  now?: () => number;
  /** Replace a channel's sender (tests). */
  senders?: Map<string, ChannelSender>;
  /** Called after each delivery attempt (tests, `--verbose`). */
  onSend?: (s: SendRecord) => void;
}

/** One delivery attempt. */
export interface SendRecord {
  channel: string;
  rule: string;
  reason: Outgoing['reason'];
  request: string;
  session: string;
  delivered: boolean;
  detail: string;
  outgoing: Outgoing;
}

/** The state of one request as the notifier sees it. */
export interface RequestStatus {
  id: string;
  session: string;
  open: boolean;
  answered: boolean;
  sends: number;
}

/** A running notifier. */
export interface Notifier {
  /** Resolves when every subscription is established. */
  ready: Promise<void>;
  /** Base URL of the action-link listener, when there is one. */
  actionsUrl: string | undefined;
  request(session: string, id: string): RequestStatus | undefined;
  close(): Promise<void>;
}

interface Track {
  id: string;
  rule: Rule;
  channel: Channel;
  sender: ChannelSender;
  timing: TrackTiming;
}

interface Req {
  key: string;
  id: string;
  session: string;
  pendingSince: number;
  closed: boolean;
  answered: boolean;
  expiresAt: number;
  copies: Map<string, RequestEvent>;
  timers: Map<string, NodeJS.Timeout>;
  /** Index of the next planned send per track. */
  next: Map<string, number>;
  /** Last `attention.routed` time per channel name (ours, also from before a restart). */
  routed: Map<string, number>;
  sends: number;
  /** A link of this request was used and its answer accepted: the others are refused. */
  linkAnswered: boolean;
}

const MAX_DELAY = 6 * 3_600_000;
const LIFECYCLE = ['attention.answered', 'attention.resolved', 'attention.timeout', 'attention.routed'];
const KEEP_CLOSED = 10_000;

/** Key of a request: its session and id (ids are unique per source; the lifecycle stays in session). */
function reqKey(session: string, id: string): string {
  return `${session}\u0000${id}`;
}

/** Deep link to a request in the inbox: `#/r/{session}/{id}` (packages/web routes). */
export function requestRoute(session: string, id: string): string {
  return `#/r/${encodeURIComponent(session)}/${encodeURIComponent(id)}`;
}

/** Build the tracks of a configuration. */
export function tracksOf(config: NotifyConfig, senders: Map<string, ChannelSender>): Track[] {
  const out: Track[] = [];
  for (const rule of config.rules) {
    const primary = config.channels.get(rule.channel);
    if (!primary) continue;
    out.push({
      id: `${rule.name}>${primary.name}`,
      rule,
      channel: primary,
      sender: senders.get(primary.name)!,
      timing: {
        afterMs: rule.afterMs,
        ...(rule.repeatMs !== undefined ? { repeatMs: rule.repeatMs } : {}),
        maxRepeats: rule.maxRepeats,
        escalation: false,
        quiet: rule.quiet,
      },
    });
    rule.escalate.forEach((e, j) => {
      const ch = config.channels.get(e.channel);
      if (!ch) return;
      out.push({
        id: `${rule.name}>esc${j}>${ch.name}`,
        rule,
        channel: ch,
        sender: senders.get(ch.name)!,
        timing: { afterMs: e.afterMs, maxRepeats: 0, escalation: true, quiet: rule.quiet },
      });
    });
  }
  return out;
}

function asRequest(e: unknown): RequestEvent | null {
  if (typeof e !== 'object' || e === null) return null;
  const o = e as Record<string, unknown>;
  if (typeof o['id'] !== 'string' || typeof o['type'] !== 'string') return null;
  return o as RequestEvent;
}

/** Start a notifier. Throws for an unusable channel (unreadable secret, bad listen address). */
export async function startNotifier(opts: NotifierOptions): Promise<Notifier> {
  const log = opts.log ?? (() => {});
  const now = opts.now ?? Date.now;
  const agent = opts.agent ?? 'aep-notify';
  const source = opts.source ?? `aep://${hostname().replace(/[^A-Za-z0-9.-]/g, '-') || 'localhost'}/agent/${agent}`;
  const relay = opts.url.replace(/\/+$/, '');
  const config = opts.config;
  const senders = new Map<string, ChannelSender>();
  for (const c of config.channels.values()) {
    senders.set(c.name, opts.senders?.get(c.name) ?? channelSender(c, { relayUrl: relay, token: opts.token, log, defaultVapidFile: opts.vapidFile ?? '' }));
  }
  const tracks = tracksOf(config, senders);
  const requests = new Map<string, Req>();
  const closedEarly = new Set<string>();
  /** Our own attention.routed seen before the request itself (replay order): channel -> time. */
  const routedEarly = new Map<string, Map<string, number>>();
  const builder: EventBuilder = createEmitter({ source, agent });
  const signer = new LinkSigner(now);
  const startedAt = now();
  let closing = false;
  const subs: Subscription[] = [];

  // ------------------------------------------------------------------ action links
  let server: Server | null = null;
  let actionsUrl: string | undefined;
  if (config.actions.listen) {
    const l = parseListen(config.actions.listen);
    if (!l) throw Object.assign(new Error(`--actions-listen must be HOST:PORT, got ${config.actions.listen}`), { code: 'AEP_NOTIFY_LISTEN_FAILED' });
    server = createServer((req, res) => {
      handleAction(req, res).catch((err: unknown) => {
        log(`action link fault: ${(err as Error).message}`);
        if (!res.headersSent)
          page(res, 500, 'AEP_NOTIFY_INTERNAL', 'Something went wrong', 'The notifier could not process this link. Open the inbox to answer.');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', (err: NodeJS.ErrnoException) =>
        reject(Object.assign(new Error(`cannot listen for action links on ${config.actions.listen}: ${err.message}`), { code: 'AEP_NOTIFY_LISTEN_FAILED' })),
      );
      server!.listen(l.port, l.host, () => resolve());
    });
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : l.port;
    actionsUrl = config.actions.url ?? `http://${l.host.includes(':') ? `[${l.host}]` : l.host}:${port}`;
  }

  let sender: CommandSender | null = null;
  const getSender = async (): Promise<CommandSender> => {
    sender ??= await CommandSender.connect({ url: relay, ...(opts.token ? { token: opts.token } : {}), agent, source });
    return sender;
  };

  const inbox = (config.inboxUrl ?? `${relay}/`).replace(/#.*$/, '');

  // ------------------------------------------------------------------ routing

  async function emitRouted(r: Req, channel: Channel): Promise<void> {
    const e = builder.build({ type: 'attention.routed', session: r.session, subject: r.id, cause: r.id, data: { to: channel.name, via: channel.type } });
    try {
      const res = await fetch(`${relay}/events`, {
        method: 'POST',
        body: JSON.stringify(e),
        signal: AbortSignal.timeout(10_000),
        headers: { 'Content-Type': 'application/json', 'AEP-Version': '0.1', ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}) },
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status !== 202) log(`attention.routed for ${r.id} refused by the relay (${res.status})`);
      r.routed.set(channel.name, now());
    } catch (err) {
      log(`attention.routed for ${r.id} not delivered: ${(err as Error).message}`);
    }
  }

  function outgoing(t: Track, r: Req, copy: RequestEvent, reason: 'first' | 'reminder' | 'escalation'): Outgoing {
    const composed = compose(copy, {
      ceiling: t.channel.capture,
      reason,
      pendingMs: now() - r.pendingSince,
      maxBody: t.sender.maxBody,
      maxActions: actionsUrl ? t.sender.maxActions : 0,
      now: now(),
    });
    const links = actionsUrl
      ? composed.actions.map((a) => ({
          label: a.label,
          effect: a.effect,
          url: `${actionsUrl}/a/${signer.sign({ r: r.id, s: r.session, t: t.id, a: a.answer }, Math.min(config.actions.ttlMs, Number.isFinite(r.expiresAt) ? Math.max(1000, r.expiresAt - now()) : Infinity)).token}`,
        }))
      : [];
    const route = requestRoute(r.session, r.id);
    return { composed, reason, request: { id: r.id, session: r.session, ...(copy.agent ? { agent: copy.agent } : {}) }, open: inbox + route, route, links };
  }

  function clearTimers(r: Req): void {
    for (const t of r.timers.values()) clearTimeout(t);
    r.timers.clear();
  }

  function settled(r: Req): boolean {
    return r.closed || r.answered || r.linkAnswered || (Number.isFinite(r.expiresAt) && now() >= r.expiresAt);
  }

  function schedule(t: Track, r: Req): void {
    if (closing || settled(r) || r.timers.has(t.id)) return;
    const plan = planSends(t.timing, r.pendingSince, config.quiet);
    let i = r.next.get(t.id);
    if (i === undefined) {
      // After a restart: skip what our own attention.routed says this channel already sent.
      const last = r.routed.get(t.channel.name);
      i = last === undefined ? 0 : plan.findIndex((p) => p.at > last);
      if (i < 0) i = plan.length;
      r.next.set(t.id, i);
    }
    const p = plan[i];
    if (!p) return;
    const delay = Math.max(0, p.at - now());
    r.timers.set(
      t.id,
      setTimeout(
        () => {
          r.timers.delete(t.id);
          if (p.at - now() > 0) {
            schedule(t, r);
            return;
          } // a long wait is split in MAX_DELAY steps
          void fire(t, r, p);
        },
        Math.min(delay, MAX_DELAY),
      ),
    );
  }

  async function fire(t: Track, r: Req, p: PlannedSend): Promise<void> {
    if (closing || settled(r)) return;
    const copy = r.copies.get(t.id);
    if (!copy) return;
    const o = outgoing(t, r, copy, p.reason === 'first' ? 'first' : p.reason);
    let d: Delivery;
    try {
      d = await t.sender.send(o, copy);
    } catch (err) {
      d = { delivered: false, detail: (err as Error).message };
    }
    r.next.set(t.id, p.index + 1);
    opts.onSend?.({
      channel: t.channel.name,
      rule: t.rule.name,
      reason: o.reason,
      request: r.id,
      session: r.session,
      delivered: d.delivered,
      detail: d.detail,
      outgoing: o,
    });
    if (d.delivered) {
      r.sends++;
      await emitRouted(r, t.channel);
    } else log(`${t.channel.name}: ${r.id} not delivered: ${d.detail}`);
    schedule(t, r);
  }

  function getReq(session: string, id: string): Req | undefined {
    return requests.get(reqKey(session, id));
  }

  function onRequest(t: Track, raw: RequestEvent): void {
    if (typeof raw.session !== 'string') return; // a request outside a session cannot be answered
    const key = reqKey(raw.session, raw.id);
    if (closedEarly.has(key)) return;
    // Defence in depth: whatever the relay sent, this channel keeps only its ceiling.
    const copy = downlevel(raw, t.channel.capture as CaptureLevel) as RequestEvent;
    let r = requests.get(key);
    if (!r) {
      const at = typeof raw.time === 'string' ? Date.parse(raw.time) : NaN;
      const exp = typeof raw.data?.['expires_at'] === 'string' ? Date.parse(raw.data['expires_at']) : NaN;
      r = {
        key,
        id: raw.id,
        session: raw.session,
        pendingSince: Number.isFinite(at) ? Math.min(at, now()) : now(),
        closed: false,
        answered: false,
        expiresAt: Number.isFinite(exp) ? exp : Infinity,
        copies: new Map(),
        timers: new Map(),
        next: new Map(),
        routed: new Map(),
        sends: 0,
        linkAnswered: false,
      };
      const early = routedEarly.get(key);
      if (early) {
        for (const [ch, at2] of early) r.routed.set(ch, at2);
        routedEarly.delete(key);
      }
      requests.set(key, r);
      prune();
    }
    if (!r.copies.has(t.id)) r.copies.set(t.id, copy);
    schedule(t, r);
  }

  function prune(): void {
    if (requests.size <= KEEP_CLOSED * 2) return;
    for (const [k, r] of requests) {
      if (requests.size <= KEEP_CLOSED) break;
      if (r.closed) requests.delete(k);
    }
  }

  function onEventRule(t: Track, e: RequestEvent): void {
    // One-off events ("run failed", "session ended"): notify once, live only (never for history).
    if (LIFECYCLE.includes(e.type) || e.type.startsWith('control.') || e.type === 'attention.requested') return;
    const at = typeof e.time === 'string' ? Date.parse(e.time) : NaN;
    if (!Number.isFinite(at) || at < startedAt - 60_000) return;
    const c = composeEvent(downlevel(e, t.channel.capture as CaptureLevel) as RequestEvent);
    const session = typeof e.session === 'string' ? e.session : '';
    const route = session ? `#/s/${encodeURIComponent(session)}` : '#/sessions';
    const o: Outgoing = {
      composed: { title: c.title, body: c.body, priority: c.priority, kind: 'event', shown: 'metadata', actions: [] },
      reason: 'event',
      request: { id: e.id, session, ...(e.agent ? { agent: e.agent } : {}) },
      open: inbox + route,
      route,
      links: [],
    };
    void t.sender.send(o, e).then(
      (d) =>
        opts.onSend?.({
          channel: t.channel.name,
          rule: t.rule.name,
          reason: 'event',
          request: e.id,
          session,
          delivered: d.delivered,
          detail: d.detail,
          outgoing: o,
        }),
      (err: unknown) => log(`${t.channel.name}: ${(err as Error).message}`),
    );
  }

  function onLifecycle(e: RequestEvent): void {
    if (typeof e.session !== 'string' || typeof e.subject !== 'string') return;
    const key = reqKey(e.session, e.subject);
    const r = requests.get(key);
    if (e.type === 'attention.routed') {
      if (e.source === source && typeof e.data?.['to'] === 'string') {
        const at = typeof e.time === 'string' ? Date.parse(e.time) : now();
        let m = r?.routed;
        if (!m) {
          m = routedEarly.get(key) ?? new Map<string, number>();
          routedEarly.set(key, m);
          if (routedEarly.size > KEEP_CLOSED) {
            const first = routedEarly.keys().next();
            if (!first.done) routedEarly.delete(first.value);
          }
        }
        const prev = m.get(e.data['to']) ?? -Infinity;
        if (at > prev) m.set(e.data['to'], at);
      }
      return;
    }
    if (!r) {
      if (e.type !== 'attention.answered') {
        closedEarly.add(key);
        if (closedEarly.size > KEEP_CLOSED) {
          const first = closedEarly.values().next();
          if (!first.done) closedEarly.delete(first.value);
        }
      }
      return;
    }
    if (e.type === 'attention.answered') r.answered = true;
    else r.closed = true;
    clearTimers(r);
  }

  // ------------------------------------------------------------------ action-link endpoint

  function page(
    res: ServerResponse,
    status: number,
    code: string,
    heading: string,
    text: string,
    form?: { action: string; label: string },
    json?: boolean,
  ): void {
    const headers: Record<string, string> = {
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    };
    if (json) {
      const body = JSON.stringify({ status: code === 'ok' ? 'accepted' : 'refused', ...(code === 'ok' ? {} : { error: code }), detail: text });
      res.writeHead(status, { ...headers, 'Content-Type': 'application/json' });
      res.end(body);
      return;
    }
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    const btn = form ? `<form method="post" action="${esc(form.action)}"><button type="submit">${esc(form.label)}</button></form>` : '';
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>${esc(heading)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;font:14px ui-monospace,monospace;background:#f4f4f4;padding:.5rem}button{font-size:1.1rem;padding:.6rem 1.2rem}</style></head>
<body><h1>${esc(heading)}</h1><p data-code="${esc(code)}">${esc(text).replace(/\n/g, '<br>')}</p>${btn}<p><a href="${esc(inbox)}">Open the inbox</a></p></body></html>`;
    res.writeHead(status, { ...headers, 'Content-Type': 'text/html; charset=utf-8' });
    res.end(html);
  }

  const REFUSAL: Record<LinkRefusal, [number, string, string]> = {
    forged: [403, 'AEP_NOTIFY_LINK_FORGED', 'This link is not one this notifier made (or it was altered). Nothing was sent.'],
    expired: [410, 'AEP_NOTIFY_LINK_EXPIRED', 'This link has expired. Nothing was sent. Open the inbox to answer.'],
    used: [409, 'AEP_NOTIFY_LINK_USED', 'This link was already used. Nothing more was sent.'],
  };

  /** Describe what a link does, at the level its channel shows. */
  function describe(claims: LinkClaims, r: Req): { heading: string; text: string; label: string } {
    const copy = r.copies.get(claims.t);
    const a = claims.a;
    const label =
      'option' in a
        ? `${optionEffect(a.option) === 'other' ? 'Choose' : optionEffect(a.option) === 'allow' ? 'Allow' : 'Deny'}: ${a.option}`
        : `Answer ${Object.entries(a.values)
            .map(([k, v]) => `${k} = ${v}`)
            .join(', ')}`;
    const track = tracks.find((t) => t.id === claims.t);
    const c =
      copy && track
        ? compose(copy, { ceiling: track.channel.capture, reason: 'first', pendingMs: now() - r.pendingSince, maxBody: 20_000, maxActions: 0, now: now() })
        : undefined;
    return { heading: c?.title ?? 'An agent needs you', text: c ? `${c.body}` : '', label };
  }

  async function handleAction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://notifier.invalid');
    const json = (req.headers['accept'] ?? '').includes('application/json') || req.headers['x-aep-action'] !== undefined;
    const m = /^\/a\/([A-Za-z0-9_.-]{1,4096})$/.exec(url.pathname);
    if (!m) {
      req.resume();
      return page(res, 404, 'AEP_NOTIFY_NOT_FOUND', 'Not found', 'There is nothing here.', undefined, json);
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      req.resume();
      return page(res, 405, 'AEP_NOTIFY_NOT_FOUND', 'Not allowed', 'Use the button.', undefined, json);
    }
    // Never read more than a little of a body: the link is the whole request.
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 4096) req.destroy();
    });
    const token = m[1]!;
    const v = signer.verify(token);
    if (!v.ok) {
      const [st, code, text] = REFUSAL[v.reason];
      return page(res, st, code, 'Link refused', text, undefined, json);
    }
    const claims = v.claims;
    const r = getReq(claims.s, claims.r);
    if (!r)
      return page(
        res,
        404,
        'AEP_NOTIFY_LINK_UNKNOWN',
        'Unknown request',
        'This notifier does not know that request any more. Nothing was sent.',
        undefined,
        json,
      );
    if (r.closed || r.answered || r.linkAnswered)
      return page(res, 409, 'AEP_NOTIFY_LINK_RESOLVED', 'Already settled', 'This request was already answered or closed. Nothing was sent.', undefined, json);
    if (Number.isFinite(r.expiresAt) && now() >= r.expiresAt)
      return page(res, 410, 'AEP_NOTIFY_LINK_EXPIRED', 'Link refused', REFUSAL.expired[2], undefined, json);
    const d = describe(claims, r);
    if (req.method === 'GET') {
      // A GET never acts: link previews and prefetchers must not answer for the person.
      return page(res, 200, 'confirm', d.heading, `${d.text}\n\nThis sends one answer: ${d.label}.`, { action: `/a/${token}`, label: d.label }, json);
    }
    // Permissive answers to approval requests carry the proof (C1), computed from the complete
    // text this channel received and showed; the link exists only when that text was complete.
    const extensions: Record<string, string> = {};
    const a = claims.a;
    const copy = r.copies.get(claims.t);
    if ('option' in a && optionEffect(a.option) !== 'deny' && copy && approvalView(copy).required) {
      const view = approvalView(copy);
      if (!view.complete || view.text === undefined)
        return page(
          res,
          409,
          'AEP_NOTIFY_LINK_RESOLVED',
          'Cannot allow from here',
          'The complete request is not in view on this channel. Nothing was sent. Open the inbox.',
          undefined,
          json,
        );
      extensions[APPROVAL_PROOF_ATTR] = approvalProof(r.id, view.text);
    }
    signer.use(claims);
    const cmd = builder.build({
      type: 'control.attention.respond',
      session: r.session,
      subject: r.id,
      cause: r.id,
      data: { answer: 'option' in a ? { option: a.option } : { values: a.values } },
      ...(Object.keys(extensions).length ? { extensions } : {}),
    });
    let result;
    try {
      const s = await getSender();
      result = await s.send(cmd as unknown as Parameters<CommandSender['send']>[0]);
    } catch (err) {
      void sender?.close().catch(() => {});
      sender = null;
      return page(
        res,
        502,
        'AEP_NOTIFY_RELAY_UNAVAILABLE',
        'Not sent',
        `The relay could not be reached (${(err as Error).message}). Open the inbox to answer.`,
        undefined,
        json,
      );
    }
    if (result.status === 'accepted') {
      r.linkAnswered = true;
      clearTimers(r);
      return page(res, 200, 'ok', 'Sent', `The agent accepted the answer: ${d.label}.`, undefined, json);
    }
    if (result.status === 'rejected')
      return page(
        res,
        422,
        'AEP_NOTIFY_ANSWER_REJECTED',
        'Rejected by the agent',
        `The agent rejected the answer (${result.reason ?? 'rejected'}). Open the inbox to answer.`,
        undefined,
        json,
      );
    if (result.status === 'refused')
      return page(
        res,
        502,
        'AEP_NOTIFY_ANSWER_REFUSED',
        'Not delivered',
        `The relay refused the answer (${result.reason ?? 'refused'}${result.reason === 'no-route' ? ': the agent is offline' : ''}).`,
        undefined,
        json,
      );
    return page(
      res,
      504,
      'AEP_NOTIFY_ANSWER_TIMEOUT',
      'No answer from the agent',
      'The agent did not acknowledge the answer in time. Check the inbox.',
      undefined,
      json,
    );
  }

  // ------------------------------------------------------------------ subscriptions

  const onError = (err: Error) => log(`subscription: ${err.message}`);
  // Lifecycle first, replayed to its end, so requests already settled are not notified at start.
  const base = { url: relay, ...(opts.token ? { token: opts.token } : {}) };
  const lifecycleFilter = { type: LIFECYCLE };
  await subscribe({ ...base, filter: lifecycleFilter, ceiling: 'metadata', from: 'all', live: false, onError }, (e) => {
    const x = asRequest(e);
    if (x) onLifecycle(x);
  }).done.catch((err: unknown) => {
    throw Object.assign(new Error(`cannot reach the relay at ${relay}: ${(err as Error).message}`), { code: 'AEP_NOTIFY_RELAY_UNAVAILABLE' });
  });
  subs.push(
    subscribe({ ...base, filter: lifecycleFilter, ceiling: 'metadata', from: 'all', reconnect: {}, onError }, (e) => {
      const x = asRequest(e);
      if (x) onLifecycle(x);
    }),
  );
  const groups = new Map<string, Track[]>();
  for (const t of tracks) {
    const k = `${JSON.stringify(t.rule.filter)}|${t.channel.capture}`;
    const g = groups.get(k);
    if (g) g.push(t);
    else groups.set(k, [t]);
  }
  for (const g of groups.values()) {
    const first = g[0]!;
    subs.push(
      subscribe({ ...base, filter: first.rule.filter, ceiling: first.channel.capture, from: 'all', reconnect: {}, onError }, (e) => {
        const x = asRequest(e);
        if (!x) return;
        for (const t of g) {
          if (x.type === 'attention.requested') onRequest(t, x);
          else onEventRule(t, x);
        }
      }),
    );
  }
  const ready = Promise.all(subs.map((s) => s.ready)).then(() => undefined);
  ready.catch(() => {});

  return {
    ready,
    actionsUrl,
    request(session, id) {
      const r = getReq(session, id);
      return r ? { id: r.id, session: r.session, open: !r.closed, answered: r.answered || r.linkAnswered, sends: r.sends } : undefined;
    },
    async close() {
      closing = true;
      for (const r of requests.values()) clearTimers(r);
      for (const s of subs) s.close();
      await Promise.allSettled(subs.map((s) => s.done));
      await sender?.close().catch(() => {});
      if (server)
        await new Promise<void>((resolve) => {
          server!.close(() => resolve());
          server!.closeAllConnections();
        });
    },
  };
}
