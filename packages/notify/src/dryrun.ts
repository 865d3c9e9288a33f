// `aep notify --dry-run`: what would be sent, and when, for the requests pending now. Reads the
// relay like the notifier does (same subscriptions, replay only), plans with the same
// `planSends`, composes with the same `compose`, and sends nothing (no attention.routed, no
// listener, no answer).
import { subscribe } from '@aep/client/node';
import { downlevel } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { channelSender } from './channels.js';
import type { ChannelSender, Outgoing } from './channels.js';
import { compose } from './compose.js';
import type { RequestEvent } from './compose.js';
import type { NotifyConfig } from './config.js';
import { requestRoute, tracksOf } from './notifier.js';
import { isQuiet, planSends } from './plan.js';

/** One planned send. */
export interface DryRunItem {
  at: string;
  /** Seconds from now (negative: overdue, goes out at once). */
  inSeconds: number;
  /** It was due inside quiet hours and waits for their end. */
  deferredByQuiet: boolean;
  channel: string;
  type: string;
  rule: string;
  reason: Outgoing['reason'];
  request: string;
  session: string;
  title: string;
  body: string;
  actions: string[];
  request_preview: Record<string, unknown>;
}

/** Options of {@link dryRun}. */
export interface DryRunOptions {
  url: string;
  token?: string;
  config: NotifyConfig;
  vapidFile?: string;
  now?: () => number;
  senders?: Map<string, ChannelSender>;
}

/** Plan every send for the requests pending now; sorted by time. */
export async function dryRun(opts: DryRunOptions): Promise<DryRunItem[]> {
  const now = (opts.now ?? Date.now)();
  const relay = opts.url.replace(/\/+$/, '');
  const base = { url: relay, ...(opts.token ? { token: opts.token } : {}) };
  const senders = new Map<string, ChannelSender>();
  for (const c of opts.config.channels.values())
    senders.set(
      c.name,
      opts.senders?.get(c.name) ?? channelSender(c, { relayUrl: relay, token: opts.token, log: () => {}, defaultVapidFile: opts.vapidFile ?? '' }),
    );
  const tracks = tracksOf(opts.config, senders);
  const settled = new Set<string>();
  await subscribe(
    { ...base, filter: { type: ['attention.answered', 'attention.resolved', 'attention.timeout'] }, ceiling: 'none', from: 'all', live: false },
    (e) => {
      if (typeof e.session === 'string' && typeof e.subject === 'string') settled.add(`${e.session}\u0000${e.subject}`);
    },
  ).done;
  const items: DryRunItem[] = [];
  const inbox = (opts.config.inboxUrl ?? `${relay}/`).replace(/#.*$/, '');
  for (const t of tracks) {
    const seen: RequestEvent[] = [];
    await subscribe({ ...base, filter: t.rule.filter, ceiling: t.channel.capture, from: 'all', live: false }, (e) => {
      if (e.type === 'attention.requested' && typeof e.session === 'string' && !settled.has(`${e.session}\u0000${e.id}`))
        seen.push(downlevel(e, t.channel.capture as CaptureLevel) as unknown as RequestEvent);
    }).done;
    for (const e of seen) {
      const at = typeof e.time === 'string' ? Date.parse(e.time) : NaN;
      const since = Number.isFinite(at) ? Math.min(at, now) : now;
      const exp = typeof e.data?.['expires_at'] === 'string' ? Date.parse(e.data['expires_at']) : Infinity;
      for (const p of planSends(t.timing, since, opts.config.quiet)) {
        if (p.at >= exp) break;
        const when = Math.max(p.at, now);
        const c = compose(e, {
          ceiling: t.channel.capture,
          reason: p.reason,
          pendingMs: when - since,
          maxBody: t.sender.maxBody,
          maxActions: opts.config.actions.listen ? t.sender.maxActions : 0,
          now: when,
        });
        const route = requestRoute(e.session!, e.id);
        const o: Outgoing = {
          composed: c,
          reason: p.reason,
          request: { id: e.id, session: e.session!, ...(e.agent ? { agent: e.agent } : {}) },
          open: inbox + route,
          route,
          links: c.actions.map((a) => ({
            label: a.label,
            effect: a.effect,
            url: `${opts.config.actions.url ?? `http://${opts.config.actions.listen}`}/a/<signed when sent>`,
          })),
        };
        items.push({
          at: new Date(when).toISOString(),
          inSeconds: Math.round((p.at - now) / 1000),
          deferredByQuiet: p.at !== p.due && isQuiet(p.due, opts.config.quiet),
          channel: t.channel.name,
          type: t.channel.type,
          rule: t.rule.name,
          reason: p.reason,
          request: e.id,
          session: e.session!,
          title: c.title,
          body: c.body,
          actions: c.actions.map((a) => a.label),
          request_preview: t.sender.preview(o),
        });
      }
    }
  }
  items.sort((a, b) => a.at.localeCompare(b.at));
  return items;
}
