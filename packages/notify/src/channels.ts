// The three channels: ntfy (JSON publish), a generic webhook (HMAC-signed JSON), Web Push (RFC
// 8030/8291/8292 through `web-push`, to the subscriptions the inbox registered on the relay, C10).
// Each takes a composed notification and its links and reports whether it was delivered.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import webpush from 'web-push';
import { compileFilter } from '@aep/protocol';
import type { Composed, RequestEvent } from './compose.js';
import type { Channel, NtfyChannel, PushChannel, WebhookChannel } from './config.js';

/** One notification to deliver. */
export interface Outgoing {
  composed: Composed;
  reason: 'first' | 'reminder' | 'escalation' | 'event';
  request: { id: string; session: string; agent?: string };
  /** Deep link to the request in the inbox (absolute). */
  open: string;
  /** Deep link relative to the inbox (`#/r/{session}/{id}`), for Web Push (same origin as the service worker). */
  route: string;
  /** One-tap answers: label, effect and the signed link. */
  links: Array<{ label: string; effect: string; url: string }>;
}

/** Delivery result. */
export interface Delivery {
  delivered: boolean;
  detail: string;
}

/** A channel's sender. */
export interface ChannelSender {
  readonly channel: Channel;
  /** Most characters of body this channel shows. */
  readonly maxBody: number;
  /** Most one-tap buttons. */
  readonly maxActions: number;
  send(o: Outgoing, event: RequestEvent): Promise<Delivery>;
  /** The request that would be sent (dry run; secrets and signatures left out). */
  preview(o: Outgoing): Record<string, unknown>;
}

/** Context the channels need. */
export interface ChannelContext {
  relayUrl: string;
  token: string | undefined;
  log: (line: string) => void;
  /** Default VAPID file (aep up's state dir). */
  defaultVapidFile: string;
  timeoutMs?: number;
}

const TIMEOUT = 10_000;

function readSecret(file: string, what: string): string {
  let s: string;
  try {
    s = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw Object.assign(new Error(`cannot read the ${what} file ${file}: ${(err as Error).message}`), { code: 'AEP_NOTIFY_SECRET_UNREADABLE' });
  }
  if (s.length === 0) throw Object.assign(new Error(`the ${what} file ${file} is empty`), { code: 'AEP_NOTIFY_SECRET_UNREADABLE' });
  return s;
}

/** Escape text for Slack-compatible `text` (mrkdwn): no injected links or mentions. */
export function slackEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

async function post(url: string, body: string | Buffer, headers: Record<string, string>, timeoutMs: number): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  const text = await res.text().catch(() => '');
  return { status: res.status, text: text.slice(0, 300) };
}

/** ntfy: `POST {server}/` with the JSON publish format (topic, title, message, priority, tags, click, actions). */
export class NtfySender implements ChannelSender {
  readonly maxBody = 3500;
  readonly maxActions = 3;
  private readonly token: string | undefined;
  constructor(
    readonly channel: NtfyChannel,
    private readonly ctx: ChannelContext,
  ) {
    this.token = channel.tokenFile ? readSecret(channel.tokenFile, 'ntfy token') : undefined;
  }
  body(o: Outgoing): Record<string, unknown> {
    const c = o.composed;
    const prio = Math.min(5, Math.max(1, (this.channel.priority ?? 3) + (c.priority - 3)));
    return {
      topic: this.channel.topic,
      title: c.title,
      message: c.body,
      priority: prio,
      tags: ['aep', c.kind],
      click: o.open,
      markdown: false,
      actions: o.links.map((l) => ({ action: 'http', label: l.label, url: l.url, method: 'POST', headers: { 'X-AEP-Action': '1' }, clear: true })),
    };
  }
  preview(o: Outgoing): Record<string, unknown> {
    return { method: 'POST', url: `${this.channel.server}/`, body: this.body(o) };
  }
  async send(o: Outgoing): Promise<Delivery> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'aep-notify' };
    if (this.token) headers['Authorization'] = `Bearer ${this.token}`;
    const r = await post(`${this.channel.server}/`, JSON.stringify(this.body(o)), headers, this.ctx.timeoutMs ?? TIMEOUT);
    return r.status >= 200 && r.status < 300
      ? { delivered: true, detail: `ntfy answered ${r.status}` }
      : { delivered: false, detail: `ntfy answered ${r.status}` };
  }
}

/** Sign a webhook body: `t={unix seconds},v1={hex HMAC-SHA256(secret, "{t}.{body}")}`. */
export function webhookSignature(secret: string, body: string, t: number): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** A generic webhook: JSON POST signed with `X-AEP-Signature` (docs/phone.md "Webhook"). */
export class WebhookSender implements ChannelSender {
  readonly maxBody = 3000;
  readonly maxActions = 3;
  private readonly secret: string;
  constructor(
    readonly channel: WebhookChannel,
    private readonly ctx: ChannelContext,
    private readonly now: () => number = Date.now,
  ) {
    this.secret = readSecret(channel.secretFile, 'webhook secret');
    if (Buffer.byteLength(this.secret) < 16)
      throw Object.assign(new Error(`the webhook secret in ${channel.secretFile} is shorter than 16 bytes`), { code: 'AEP_NOTIFY_SECRET_UNREADABLE' });
  }
  body(o: Outgoing): Record<string, unknown> {
    const c = o.composed;
    const text = slackEscape(`${c.title}\n${c.body}`);
    if (this.channel.format === 'slack') {
      const buttons: Array<Record<string, unknown>> = o.links.map((l) => ({
        type: 'button',
        text: { type: 'plain_text', text: l.label },
        url: l.url,
        ...(l.effect === 'deny' ? { style: 'danger' } : {}),
      }));
      buttons.push({ type: 'button', text: { type: 'plain_text', text: 'Open the inbox' }, url: o.open });
      return {
        text,
        blocks: [
          { type: 'section', text: { type: 'plain_text', text: `${c.title}\n${c.body}`.slice(0, 2900) } },
          { type: 'actions', elements: buttons },
        ],
      };
    }
    return {
      text: `${text}\n${o.open}`,
      aep: {
        version: 1,
        reason: o.reason,
        request: o.request.id,
        session: o.request.session,
        agent: o.request.agent ?? null,
        kind: c.kind,
        capture: c.shown,
        title: c.title,
        body: c.body,
        priority: c.priority,
        open: o.open,
        actions: o.links.map((l) => ({ label: l.label, effect: l.effect, url: l.url, method: 'POST' })),
        ...(c.approvalText !== undefined ? { approval: { text: c.approvalText, complete: true } } : {}),
      },
    };
  }
  preview(o: Outgoing): Record<string, unknown> {
    return { method: 'POST', url: this.channel.url, headers: { 'X-AEP-Signature': 't=…,v1=…' }, body: this.body(o) };
  }
  async send(o: Outgoing): Promise<Delivery> {
    const body = JSON.stringify(this.body(o));
    const t = Math.floor(this.now() / 1000);
    const r = await post(
      this.channel.url,
      body,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'aep-notify',
        'X-AEP-Signature': webhookSignature(this.secret, body, t),
        'X-AEP-Delivery': randomUUID(),
      },
      this.ctx.timeoutMs ?? TIMEOUT,
    );
    return r.status >= 200 && r.status < 300
      ? { delivered: true, detail: `webhook answered ${r.status}` }
      : { delivered: false, detail: `webhook answered ${r.status}` };
  }
}

/** VAPID keys as `aep up` stores them. */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
}

/** A subscription as the relay lists it (C10). */
interface RelaySubscription {
  id: string;
  endpoint: string;
  expirationTime: number | null;
  keys: { p256dh: string; auth: string };
  filter?: Record<string, unknown>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * Web Push: reads the subscriptions from the relay (`GET /push/subscriptions`, owner token),
 * encrypts with `web-push` (aes128gcm, VAPID) and POSTs to each push service; a 404/410 answer
 * means the subscription is gone and it is deleted on the relay.
 */
export class PushSender implements ChannelSender {
  readonly maxBody = 1800;
  readonly maxActions = 0;
  private readonly vapid: VapidKeys;
  private cache: { at: number; subs: RelaySubscription[] } | null = null;
  /** Pushes sent, subscriptions pruned (for tests and logs). */
  readonly stats = { sent: 0, pruned: 0, failed: 0 };
  constructor(
    readonly channel: PushChannel,
    private readonly ctx: ChannelContext,
    vapid?: VapidKeys,
  ) {
    this.vapid = vapid ?? readVapidFile(channel.vapidFile ?? ctx.defaultVapidFile);
  }
  payload(o: Outgoing): Record<string, unknown> {
    const c = o.composed;
    return {
      v: 1,
      title: c.title,
      body: c.body,
      url: o.route,
      tag: o.request.id,
      request: o.request.id,
      session: o.request.session,
      kind: c.kind,
      reason: o.reason,
      renotify: o.reason !== 'first',
    };
  }
  preview(o: Outgoing): Record<string, unknown> {
    return { method: 'POST', url: '(each push subscription registered on the relay)', payload: this.payload(o) };
  }
  private async subscriptions(): Promise<RelaySubscription[]> {
    if (this.cache && Date.now() - this.cache.at < 15_000) return this.cache.subs;
    const res = await fetch(`${this.ctx.relayUrl}/push/subscriptions`, {
      headers: this.ctx.token ? { Authorization: `Bearer ${this.ctx.token}` } : {},
      signal: AbortSignal.timeout(this.ctx.timeoutMs ?? TIMEOUT),
    });
    if (!res.ok) throw new Error(`the relay answered ${res.status} to GET /push/subscriptions`);
    const j = (await res.json()) as { subscriptions?: RelaySubscription[] };
    const subs = Array.isArray(j.subscriptions) ? j.subscriptions : [];
    this.cache = { at: Date.now(), subs };
    return subs;
  }
  /** Forget the cached list (a subscription was added). */
  refresh(): void {
    this.cache = null;
  }
  async send(o: Outgoing, event: RequestEvent): Promise<Delivery> {
    let subs: RelaySubscription[];
    try {
      subs = await this.subscriptions();
    } catch (err) {
      return { delivered: false, detail: (err as Error).message };
    }
    const payload = JSON.stringify(this.payload(o));
    let ok = 0;
    const notes: string[] = [];
    for (const s of subs) {
      if (s.filter) {
        const f = compileFilter(s.filter);
        if (!f.ok || !f.match(event)) continue;
      }
      let u: URL;
      try {
        u = new URL(s.endpoint);
      } catch {
        continue;
      }
      if (u.protocol !== 'https:' && !(this.channel.allowHttpLoopback && u.protocol === 'http:' && LOOPBACK.has(u.hostname))) {
        notes.push(`skipped a non-https endpoint`);
        continue;
      }
      try {
        const d = webpush.generateRequestDetails({ endpoint: s.endpoint, keys: s.keys }, payload, {
          vapidDetails: { subject: this.vapid.subject, publicKey: this.vapid.publicKey, privateKey: this.vapid.privateKey },
          TTL: 3600,
          urgency: o.composed.priority >= 4 ? 'high' : 'normal',
        });
        const res = await fetch(d.endpoint, {
          method: d.method,
          headers: d.headers as Record<string, string>,
          body: d.body as Buffer,
          signal: AbortSignal.timeout(this.ctx.timeoutMs ?? TIMEOUT),
          redirect: 'error',
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.status === 404 || res.status === 410) {
          await this.prune(s.id);
          notes.push(`pruned an expired subscription (${res.status})`);
        } else if (res.status >= 200 && res.status < 300) {
          ok++;
          this.stats.sent++;
        } else {
          this.stats.failed++;
          notes.push(`push service answered ${res.status}`);
        }
      } catch (err) {
        this.stats.failed++;
        notes.push(`push failed: ${(err as Error).message}`);
      }
    }
    return { delivered: ok > 0, detail: `${ok} of ${subs.length} subscriptions${notes.length ? `; ${notes.join('; ')}` : ''}` };
  }
  private async prune(id: string): Promise<void> {
    this.stats.pruned++;
    if (this.cache) this.cache.subs = this.cache.subs.filter((s) => s.id !== id);
    try {
      await fetch(`${this.ctx.relayUrl}/push/subscriptions/${encodeURIComponent(id)}`, {
        method: 'DELETE',
        headers: this.ctx.token ? { Authorization: `Bearer ${this.ctx.token}` } : {},
        signal: AbortSignal.timeout(this.ctx.timeoutMs ?? TIMEOUT),
      });
    } catch (err) {
      this.ctx.log(`could not delete an expired push subscription on the relay: ${(err as Error).message}`);
    }
  }
}

/** Read VAPID keys from a file written by `ensureVapidKeys`. */
export function readVapidFile(file: string): VapidKeys {
  let j: Partial<VapidKeys>;
  try {
    j = JSON.parse(readFileSync(file, 'utf8')) as Partial<VapidKeys>;
  } catch (err) {
    throw Object.assign(new Error(`cannot read the VAPID keys in ${file} (run aep up once, or pass --vapid-file): ${(err as Error).message}`), {
      code: 'AEP_NOTIFY_SECRET_UNREADABLE',
    });
  }
  if (typeof j.publicKey !== 'string' || typeof j.privateKey !== 'string')
    throw Object.assign(new Error(`${file} does not hold {publicKey, privateKey}`), { code: 'AEP_NOTIFY_SECRET_UNREADABLE' });
  return { publicKey: j.publicKey, privateKey: j.privateKey, subject: typeof j.subject === 'string' ? j.subject : 'mailto:aep-notify@localhost.invalid' };
}

/** Build the sender of one channel. */
export function channelSender(c: Channel, ctx: ChannelContext): ChannelSender {
  switch (c.type) {
    case 'ntfy':
      return new NtfySender(c, ctx);
    case 'webhook':
      return new WebhookSender(c, ctx);
    case 'push':
      return new PushSender(c, ctx);
  }
}
