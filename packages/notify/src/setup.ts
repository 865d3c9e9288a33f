// Building configurations from command-line flags (`aep notify ntfy|webhook|push …`) and from
// `aep up --notify SPEC`, so the CLI stays a thin layer.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { CaptureLevel } from '@aep/protocol';
import { ConfigError, parseConfig, validateConfig } from './config.js';
import type { ChannelType, NotifyConfig } from './config.js';
import { startNotifier } from './notifier.js';
import type { Notifier } from './notifier.js';
import { ensureVapidKeys } from './vapid.js';

/** Flags of one channel and its rule (durations in the rules-file syntax). */
export interface ChannelFlags {
  type: ChannelType;
  filter?: Record<string, unknown>;
  capture?: CaptureLevel;
  after?: string;
  repeat?: string;
  maxRepeats?: number;
  quiet?: Array<{ from: string; to: string }>;
  tz?: string;
  /** ntfy */
  server?: string;
  topic?: string;
  priority?: number;
  tokenFile?: string;
  /** webhook */
  url?: string;
  secretFile?: string;
  format?: 'json' | 'slack';
  /** push */
  vapidFile?: string;
  allowHttpLoopback?: boolean;
  /** action links */
  actionsListen?: string;
  actionsUrl?: string;
  actionTtl?: string;
  inboxUrl?: string;
}

/** One channel + one rule from flags, validated exactly like a rules file (errors name the flag's path). */
export function configFromFlags(f: ChannelFlags): NotifyConfig {
  const channel: Record<string, unknown> = { type: f.type };
  if (f.capture) channel['capture'] = f.capture;
  if (f.type === 'ntfy') {
    if (f.server !== undefined) channel['server'] = f.server;
    channel['topic'] = f.topic;
    if (f.priority !== undefined) channel['priority'] = f.priority;
    if (f.tokenFile !== undefined) channel['token_file'] = f.tokenFile;
  } else if (f.type === 'webhook') {
    channel['url'] = f.url;
    channel['secret_file'] = f.secretFile;
    if (f.format) channel['format'] = f.format;
  } else {
    if (f.vapidFile !== undefined) channel['vapid_file'] = f.vapidFile;
    if (f.allowHttpLoopback) channel['allow_http_loopback'] = true;
  }
  const rule: Record<string, unknown> = { name: f.type, channel: f.type };
  if (f.filter !== undefined) rule['filter'] = f.filter;
  if (f.after !== undefined) rule['after'] = f.after;
  if (f.repeat !== undefined) rule['repeat'] = f.repeat;
  if (f.maxRepeats !== undefined) rule['max_repeats'] = f.maxRepeats;
  const raw: Record<string, unknown> = { channels: { [f.type]: channel }, rules: [rule] };
  if (f.quiet?.length) raw['quiet'] = f.quiet.map((q) => ({ ...q, ...(f.tz ? { tz: f.tz } : {}) }));
  const actions: Record<string, unknown> = {};
  if (f.actionsListen !== undefined) actions['listen'] = f.actionsListen;
  if (f.actionsUrl !== undefined) actions['url'] = f.actionsUrl;
  if (f.actionTtl !== undefined) actions['ttl'] = f.actionTtl;
  if (Object.keys(actions).length) raw['actions'] = actions;
  if (f.inboxUrl !== undefined) raw['inbox_url'] = f.inboxUrl;
  const { config, issues } = validateConfig(raw);
  if (!config) throw new ConfigError(issues, 'flags');
  return config;
}

/** What `aep up --notify` needs: the relay's push option, and a way to start the notifiers. */
export interface UpNotify {
  /** Pass as `startRelay({push})`. */
  push: { vapidPublicKey: string };
  /** The VAPID key file (for `aep notify push` started separately). */
  vapidFile: string;
  /** Lines to print at start (what each spec does). */
  describe: string[];
  /** Start the notifiers once the relay listens. */
  start(relayUrl: string, token: string, log: (line: string) => void): Promise<{ close(): Promise<void> }>;
}

/**
 * Prepare `aep up`: VAPID keys (generated once, 0600, in `stateDir`), and the `--notify` specs:
 * `push` (Web Push to the installed inbox), `ntfy:URL` (server and topic, e.g.
 * `ntfy:https://ntfy.sh/my-topic`), `webhook:URL` (secret in `stateDir/webhook.secret`, created
 * 0600 when missing) or a rules file (`*.json`). Throws `ConfigError` for a bad spec.
 */
export function prepareUpNotify(stateDir: string, specs: readonly string[] = []): UpNotify {
  const vapid = ensureVapidKeys(stateDir);
  const configs: NotifyConfig[] = [];
  const describe: string[] = [];
  const channels: Record<string, unknown> = {};
  const rules: Array<Record<string, unknown>> = [];
  for (const spec of specs) {
    if (spec === 'push') {
      channels['push'] = { type: 'push', vapid_file: vapid.file };
      rules.push({ name: 'push', channel: 'push' });
      describe.push('Web Push to every browser that turned on notifications in the inbox');
    } else if (spec.startsWith('ntfy:')) {
      let u: URL;
      try {
        u = new URL(spec.slice(5));
      } catch {
        throw new ConfigError([{ path: '/notify', message: `"${spec}": ntfy:URL needs a URL such as ntfy:https://ntfy.sh/my-topic` }], '--notify');
      }
      const parts = u.pathname.split('/').filter(Boolean);
      const topic = parts.pop() ?? '';
      channels['ntfy'] = { type: 'ntfy', server: `${u.origin}${parts.length ? `/${parts.join('/')}` : ''}`, topic };
      rules.push({ name: 'ntfy', channel: 'ntfy' });
      describe.push(`ntfy topic ${topic} on ${u.origin} (capture metadata: structure only)`);
    } else if (spec.startsWith('webhook:')) {
      const secretFile = join(stateDir, 'webhook.secret');
      if (!existsSync(secretFile)) {
        mkdirSync(stateDir, { recursive: true, mode: 0o700 });
        writeFileSync(secretFile, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
        chmodSync(secretFile, 0o600);
      }
      channels['webhook'] = { type: 'webhook', url: spec.slice(8), secret_file: secretFile };
      rules.push({ name: 'webhook', channel: 'webhook' });
      describe.push(`webhook ${spec.slice(8).replace(/\?.*$/, '')} (signed with the secret in ${secretFile})`);
    } else if (spec.endsWith('.json')) {
      let text: string;
      try {
        text = readFileSync(spec, 'utf8');
      } catch (err) {
        throw new ConfigError([{ path: '', message: `cannot read ${spec}: ${(err as Error).message}` }], spec);
      }
      configs.push(parseConfig(text, spec));
      describe.push(`rules from ${spec}`);
    } else {
      throw new ConfigError([{ path: '/notify', message: `"${spec}" is not push, ntfy:URL, webhook:URL or a rules file (*.json)` }], '--notify');
    }
  }
  if (rules.length) {
    const { config, issues } = validateConfig({ channels, rules });
    if (!config) throw new ConfigError(issues, '--notify');
    configs.unshift(config);
  }
  return {
    push: { vapidPublicKey: vapid.publicKey },
    vapidFile: vapid.file,
    describe,
    async start(relayUrl, token, log) {
      const running: Notifier[] = [];
      try {
        for (const config of configs) running.push(await startNotifier({ url: relayUrl, token, config, vapidFile: vapid.file, log }));
      } catch (err) {
        for (const n of running) await n.close();
        throw err;
      }
      return {
        close: async () => {
          for (const n of running) await n.close();
        },
      };
    },
  };
}
