// Notifier configuration: channels, escalation rules, quiet hours, action links. The rules are
// data (a JSON file, docs/phone.md "Rules file"); `parseConfig` validates one and every error
// names the line, column and JSON pointer of what is wrong. `aep notify ntfy|webhook|push` with
// flags builds the same structure for one channel and one rule.
import { homedir } from 'node:os';
import { CAPTURE_LEVELS, compileFilter } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { JsonPosError, parseWithPositions } from './jsonpos.js';

/** A channel type. */
export type ChannelType = 'ntfy' | 'webhook' | 'push';

interface ChannelBase {
  /** The channel's name (the key in `channels`); `attention.routed.to`. */
  name: string;
  type: ChannelType;
  /** Capture ceiling of this channel's subscription (default `metadata`). */
  capture: CaptureLevel;
}

/** ntfy: one JSON POST per notification (https://docs.ntfy.sh/publish/#publish-as-json). */
export interface NtfyChannel extends ChannelBase {
  type: 'ntfy';
  /** Server root, e.g. `https://ntfy.sh`. */
  server: string;
  topic: string;
  /** Base priority 1-5 (default from the request's severity). */
  priority?: number;
  /** File holding an ntfy access token (sent as `Authorization: Bearer`). */
  tokenFile?: string;
}

/** A generic webhook: JSON POST, body signed with HMAC-SHA256 (`X-AEP-Signature`). */
export interface WebhookChannel extends ChannelBase {
  type: 'webhook';
  url: string;
  /** File holding the shared secret (at least 16 bytes). */
  secretFile: string;
  /** `json` (default: Slack-compatible `text` plus an `aep` object) or `slack` (`text` + `blocks`). */
  format: 'json' | 'slack';
}

/** Web Push to the installed inbox (subscriptions read from the relay, C10). */
export interface PushChannel extends ChannelBase {
  type: 'push';
  /** File with the VAPID keys `{publicKey, privateKey, subject}` written by `aep up`. */
  vapidFile?: string;
  /** Accept `http:` push endpoints on loopback (a local push server in tests). */
  allowHttpLoopback?: boolean;
}

/** A channel. */
export type Channel = NtfyChannel | WebhookChannel | PushChannel;

/** A quiet window: no notification is sent inside it (sends are deferred to its end). */
export interface QuietWindow {
  /** Minutes after local midnight (0-1439). */
  from: number;
  to: number;
  /** Days the window starts on (0 = Sunday); all days when absent. */
  days?: number[];
  /** IANA time zone (default: the process's local zone). */
  tz?: string;
}

/** One escalation step: notify `channel` once when the request is still pending `after` seconds. */
export interface Escalation {
  afterMs: number;
  channel: string;
}

/** One rule: which requests, which channel, when. */
export interface Rule {
  name: string;
  /** attr-match filter of the rule's subscription (AEP-0003 §6.1); `type` defaults to `attention.requested`. */
  filter: Record<string, unknown>;
  channel: string;
  /** Notify once the request has been pending this long (default 0). */
  afterMs: number;
  /** Re-notify this often while it stays pending (absent: never). */
  repeatMs?: number;
  /** Most re-notifications (default 3 when `repeat` is set). */
  maxRepeats: number;
  escalate: Escalation[];
  /** Respect quiet hours (default true). */
  quiet: boolean;
}

/** Action links (one-tap answers), served by the notifier's own listener. */
export interface ActionsConfig {
  /** `HOST:PORT` to listen on; absent = no action links (notifications only open the inbox). */
  listen?: string;
  /** Base URL of the listener as the phone reaches it (default `http://{listen}`). */
  url?: string;
  /** Lifetime of a link (default 10 minutes). */
  ttlMs: number;
}

/** The whole configuration. */
export interface NotifyConfig {
  channels: Map<string, Channel>;
  rules: Rule[];
  quiet: QuietWindow[];
  actions: ActionsConfig;
  /** The inbox as the phone reaches it (default: the relay URL). Deep links hang off it. */
  inboxUrl?: string;
}

/** A configuration error with its place. */
export interface ConfigIssue {
  path: string;
  line?: number;
  col?: number;
  message: string;
}

/** Thrown by `parseConfig` with every problem found. */
export class ConfigError extends Error {
  readonly code = 'AEP_NOTIFY_RULES_INVALID';
  constructor(
    readonly issues: ConfigIssue[],
    file = 'rules',
  ) {
    super(issues.map((i) => `${file}${i.line !== undefined ? `:${i.line}:${i.col}` : ''} ${i.path || '/'}: ${i.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Default action-link lifetime. */
export const DEFAULT_ACTION_TTL_MS = 10 * 60_000;

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** Parse a duration: a number of seconds, or `"30s"`, `"10m"`, `"2h"`, `"1d"`; milliseconds, or undefined when malformed. */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.round(v * 1000) : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const mult = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : unit === 'h' ? 3_600_000 : 86_400_000;
  return Math.round(n * mult);
}

/** Parse `HH:MM` (24 h) into minutes after midnight. */
export function parseClock(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(v.trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) : undefined;
}

/** True when `tz` is a time zone this runtime knows. */
export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Parse `HH:MM-HH:MM` (the `--quiet` flag form). */
export function parseQuietFlag(v: string, tz?: string): QuietWindow | undefined {
  const m = /^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)\s*$/.exec(v);
  if (!m) return undefined;
  const from = parseClock(m[1]);
  const to = parseClock(m[2]);
  if (from === undefined || to === undefined || from === to) return undefined;
  return tz ? { from, to, tz } : { from, to };
}

/** A path from a rules file or flag: a leading `~/` is the home directory. */
export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? homedir() + p.slice(1) : p;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validate a parsed configuration object; `at` maps pointers to positions (for messages). */
export function validateConfig(raw: unknown, at: Map<string, { line: number; col: number }> = new Map()): { config?: NotifyConfig; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const add = (path: string, message: string) => {
    // A missing member has no position of its own: name the object that lacks it.
    let q = path;
    while (!at.has(q) && q !== '') q = q.slice(0, q.lastIndexOf('/'));
    const p = at.get(q);
    issues.push(p ? { path, line: p.line, col: p.col, message } : { path, message });
  };
  if (!isObject(raw)) {
    add('', 'the rules file must be a JSON object with "channels" and "rules"');
    return { issues };
  }
  const known = new Set(['channels', 'rules', 'quiet', 'actions', 'inbox_url']);
  for (const k of Object.keys(raw)) if (!known.has(k)) add(`/${k}`, `unknown member "${k}" (expected channels, rules, quiet, actions, inbox_url)`);

  const channels = new Map<string, Channel>();
  const rawChannels = raw['channels'];
  if (!isObject(rawChannels) || Object.keys(rawChannels).length === 0) add('/channels', 'channels must be an object naming at least one channel');
  else {
    for (const [name, c] of Object.entries(rawChannels)) {
      const p = `/channels/${name}`;
      if (!/^[a-z0-9][a-z0-9._-]{0,31}$/.test(name)) {
        add(p, 'a channel name is 1-32 characters of a-z, 0-9, ".", "_", "-" (it becomes attention.routed.to)');
        continue;
      }
      const ch = channel(name, c, p, add);
      if (ch) channels.set(name, ch);
    }
  }

  const quiet = quietList(raw['quiet'], '/quiet', add);

  const rules: Rule[] = [];
  const rawRules = raw['rules'];
  if (!Array.isArray(rawRules) || rawRules.length === 0) add('/rules', 'rules must be a non-empty array');
  else
    rawRules.forEach((r, i) => {
      const rule = ruleOf(r, `/rules/${i}`, i, channels, add);
      if (rule) rules.push(rule);
    });

  const actions: ActionsConfig = { ttlMs: DEFAULT_ACTION_TTL_MS };
  const ra = raw['actions'];
  if (ra !== undefined) {
    if (!isObject(ra)) add('/actions', 'actions must be an object {listen, url, ttl}');
    else {
      for (const k of Object.keys(ra)) if (!['listen', 'url', 'ttl'].includes(k)) add(`/actions/${k}`, `unknown member "${k}" (expected listen, url, ttl)`);
      if (ra['listen'] !== undefined) {
        if (typeof ra['listen'] !== 'string' || !parseListen(ra['listen'])) add('/actions/listen', 'listen must be "HOST:PORT" (e.g. "127.0.0.1:8788")');
        else actions.listen = ra['listen'];
      }
      if (ra['url'] !== undefined) {
        if (!httpUrl(ra['url'])) add('/actions/url', 'url must be an http(s) URL (the listener as the phone reaches it)');
        else actions.url = String(ra['url']).replace(/\/+$/, '');
      }
      if (ra['ttl'] !== undefined) {
        const t = parseDuration(ra['ttl']);
        if (t === undefined || t < 10_000 || t > 86_400_000) add('/actions/ttl', 'ttl must be a duration between 10s and 1d');
        else actions.ttlMs = t;
      }
    }
  }
  let inboxUrl: string | undefined;
  if (raw['inbox_url'] !== undefined) {
    if (!httpUrl(raw['inbox_url'])) add('/inbox_url', 'inbox_url must be an http(s) URL (the inbox as the phone reaches it)');
    else inboxUrl = String(raw['inbox_url']);
  }
  if (issues.length) return { issues };
  const config: NotifyConfig = { channels, rules, quiet, actions };
  if (inboxUrl !== undefined) config.inboxUrl = inboxUrl;
  return { config, issues };
}

/** Parse and validate a rules file's text; throws `ConfigError` naming each problem's line. */
export function parseConfig(text: string, file = 'rules.json'): NotifyConfig {
  let located;
  try {
    located = parseWithPositions(text);
  } catch (err) {
    if (err instanceof JsonPosError) throw new ConfigError([{ path: '', line: err.line, col: err.col, message: `not JSON: ${err.message}` }], file);
    throw err;
  }
  const { config, issues } = validateConfig(located.value, located.at);
  if (!config) throw new ConfigError(issues, file);
  return config;
}

/** `HOST:PORT` -> parts, or undefined. */
export function parseListen(v: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

function httpUrl(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
  } catch {
    return false;
  }
}

function capture(v: unknown, p: string, add: (p: string, m: string) => void): CaptureLevel {
  if (v === undefined) return 'metadata';
  if (typeof v === 'string' && (CAPTURE_LEVELS as readonly string[]).includes(v)) return v as CaptureLevel;
  add(p, 'capture must be one of none, metadata, redacted, full');
  return 'metadata';
}

function channel(name: string, c: unknown, p: string, add: (p: string, m: string) => void): Channel | undefined {
  if (!isObject(c)) {
    add(p, 'a channel must be an object with a "type"');
    return undefined;
  }
  const allowed: Record<string, string[]> = {
    ntfy: ['type', 'capture', 'server', 'topic', 'priority', 'token_file'],
    webhook: ['type', 'capture', 'url', 'secret_file', 'format'],
    push: ['type', 'capture', 'vapid_file', 'allow_http_loopback'],
  };
  const type = c['type'];
  if (typeof type !== 'string' || !allowed[type]) {
    add(`${p}/type`, 'type must be "ntfy", "webhook" or "push"');
    return undefined;
  }
  for (const k of Object.keys(c))
    if (!allowed[type]!.includes(k)) add(`${p}/${k}`, `unknown member "${k}" for a ${type} channel (expected ${allowed[type]!.join(', ')})`);
  const cap = capture(c['capture'], `${p}/capture`, add);
  if (type === 'ntfy') {
    const server = c['server'] ?? 'https://ntfy.sh';
    if (!httpUrl(server)) add(`${p}/server`, 'server must be an http(s) URL (e.g. "https://ntfy.sh")');
    const topic = c['topic'];
    if (typeof topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(topic))
      add(`${p}/topic`, 'topic must be 1-64 characters of A-Z, a-z, 0-9, "-", "_" (ntfy topic rules)');
    const prio = c['priority'];
    if (prio !== undefined && (!Number.isInteger(prio) || (prio as number) < 1 || (prio as number) > 5))
      add(`${p}/priority`, 'priority must be an integer 1-5');
    if (c['token_file'] !== undefined && typeof c['token_file'] !== 'string') add(`${p}/token_file`, 'token_file must be a path');
    const ch: NtfyChannel = { name, type: 'ntfy', capture: cap, server: String(server).replace(/\/+$/, ''), topic: String(topic) };
    if (typeof prio === 'number') ch.priority = prio;
    if (typeof c['token_file'] === 'string') ch.tokenFile = expandHome(c['token_file']);
    return ch;
  }
  if (type === 'webhook') {
    if (!httpUrl(c['url'])) add(`${p}/url`, 'url must be an http(s) URL');
    if (typeof c['secret_file'] !== 'string' || c['secret_file'] === '')
      add(`${p}/secret_file`, 'secret_file is required: a file holding the HMAC secret (never the secret itself)');
    const format = c['format'] ?? 'json';
    if (format !== 'json' && format !== 'slack') add(`${p}/format`, 'format must be "json" or "slack"');
    return {
      name,
      type: 'webhook',
      capture: cap,
      url: String(c['url']),
      secretFile: expandHome(String(c['secret_file'])),
      format: format === 'slack' ? 'slack' : 'json',
    };
  }
  if (c['vapid_file'] !== undefined && typeof c['vapid_file'] !== 'string') add(`${p}/vapid_file`, 'vapid_file must be a path');
  if (c['allow_http_loopback'] !== undefined && typeof c['allow_http_loopback'] !== 'boolean')
    add(`${p}/allow_http_loopback`, 'allow_http_loopback must be true or false');
  const ch: PushChannel = { name, type: 'push', capture: cap };
  if (typeof c['vapid_file'] === 'string') ch.vapidFile = expandHome(c['vapid_file']);
  if (c['allow_http_loopback'] === true) ch.allowHttpLoopback = true;
  return ch;
}

function quietList(v: unknown, p: string, add: (p: string, m: string) => void): QuietWindow[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    add(p, 'quiet must be an array of {from, to, days?, tz?}');
    return [];
  }
  const out: QuietWindow[] = [];
  v.forEach((w, i) => {
    const q = `${p}/${i}`;
    if (!isObject(w)) {
      add(q, 'a quiet window is an object {from: "22:00", to: "07:00", days?, tz?}');
      return;
    }
    for (const k of Object.keys(w)) if (!['from', 'to', 'days', 'tz'].includes(k)) add(`${q}/${k}`, `unknown member "${k}" (expected from, to, days, tz)`);
    const from = parseClock(w['from']);
    const to = parseClock(w['to']);
    if (from === undefined) add(`${q}/from`, 'from must be a 24-hour time "HH:MM"');
    if (to === undefined) add(`${q}/to`, 'to must be a 24-hour time "HH:MM"');
    if (from !== undefined && to !== undefined && from === to) add(q, 'from and to must differ');
    const win: QuietWindow = { from: from ?? 0, to: to ?? 0 };
    if (w['days'] !== undefined) {
      const days = w['days'];
      if (!Array.isArray(days) || days.length === 0 || days.some((d) => typeof d !== 'string' || !DAYS.includes(d.toLowerCase())))
        add(`${q}/days`, 'days must be a non-empty array of "mon", "tue", "wed", "thu", "fri", "sat", "sun"');
      else win.days = [...new Set(days.map((d) => DAYS.indexOf(String(d).toLowerCase())))].sort();
    }
    if (w['tz'] !== undefined) {
      if (typeof w['tz'] !== 'string' || !validTimeZone(w['tz'])) add(`${q}/tz`, 'tz must be an IANA time zone such as "Europe/Berlin" or "UTC"');
      else win.tz = w['tz'];
    }
    out.push(win);
  });
  return out;
}

function ruleOf(r: unknown, p: string, i: number, channels: Map<string, Channel>, add: (p: string, m: string) => void): Rule | undefined {
  if (!isObject(r)) {
    add(p, 'a rule must be an object {filter?, channel, after?, repeat?, escalate?, quiet?}');
    return undefined;
  }
  const known = ['name', 'filter', 'channel', 'after', 'repeat', 'max_repeats', 'escalate', 'quiet'];
  for (const k of Object.keys(r)) if (!known.includes(k)) add(`${p}/${k}`, `unknown member "${k}" (expected ${known.join(', ')})`);
  const name = r['name'] ?? `rule-${i + 1}`;
  if (typeof name !== 'string' || name.length === 0 || name.length > 64) add(`${p}/name`, 'name must be a string of 1-64 characters');
  let filter: Record<string, unknown> = { type: 'attention.requested' };
  if (r['filter'] !== undefined) {
    const f = r['filter'];
    const c = compileFilter(f);
    if (!isObject(f) || !c.ok)
      add(`${p}/filter`, `filter is not a valid attr-match filter: ${c.ok ? 'must be an object' : c.issues.map((x) => x.message).join('; ')} (AEP-0003 §6.1)`);
    else filter = f['type'] === undefined ? { ...f, type: 'attention.requested' } : f;
  }
  const ch = r['channel'];
  if (typeof ch !== 'string' || !channels.has(ch))
    add(`${p}/channel`, `channel must name a channel defined under "channels"${typeof ch === 'string' ? ` (no channel "${ch}")` : ''}`);
  const afterMs = r['after'] === undefined ? 0 : parseDuration(r['after']);
  if (afterMs === undefined) add(`${p}/after`, 'after must be a duration: seconds, or "30s", "10m", "2h", "1d"');
  let repeatMs: number | undefined;
  if (r['repeat'] !== undefined) {
    repeatMs = parseDuration(r['repeat']);
    if (repeatMs === undefined || repeatMs < 10_000) add(`${p}/repeat`, 'repeat must be a duration of at least 10s');
  }
  let maxRepeats = repeatMs !== undefined ? 3 : 0;
  if (r['max_repeats'] !== undefined) {
    const m = r['max_repeats'];
    if (!Number.isInteger(m) || (m as number) < 0 || (m as number) > 100) add(`${p}/max_repeats`, 'max_repeats must be an integer 0-100');
    else if (repeatMs === undefined) add(`${p}/max_repeats`, 'max_repeats needs "repeat"');
    else maxRepeats = m as number;
  }
  const escalate: Escalation[] = [];
  if (r['escalate'] !== undefined) {
    if (!Array.isArray(r['escalate'])) add(`${p}/escalate`, 'escalate must be an array of {after, channel}');
    else
      r['escalate'].forEach((e, j) => {
        const q = `${p}/escalate/${j}`;
        if (!isObject(e)) {
          add(q, 'an escalation is an object {after, channel}');
          return;
        }
        for (const k of Object.keys(e)) if (!['after', 'channel'].includes(k)) add(`${q}/${k}`, `unknown member "${k}" (expected after, channel)`);
        const a = parseDuration(e['after']);
        if (a === undefined) add(`${q}/after`, 'after is required: a duration such as "15m"');
        if (typeof e['channel'] !== 'string' || !channels.has(e['channel'])) add(`${q}/channel`, 'channel must name a channel defined under "channels"');
        if (a !== undefined && typeof e['channel'] === 'string') escalate.push({ afterMs: a, channel: e['channel'] });
      });
  }
  const quiet = r['quiet'] ?? true;
  if (typeof quiet !== 'boolean') add(`${p}/quiet`, 'quiet must be true (respect quiet hours, the default) or false');
  if (typeof name !== 'string' || typeof ch !== 'string' || afterMs === undefined) return undefined;
  const rule: Rule = { name, filter, channel: ch, afterMs, maxRepeats, escalate, quiet: quiet !== false };
  if (repeatMs !== undefined) rule.repeatMs = repeatMs;
  return rule;
}
