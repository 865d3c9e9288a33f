import type { Command } from 'commander';
import { Option } from 'commander';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, relayUrl } from '../util/relay.js';
import { oneLine as clean } from '../util/render.js';

interface NotifyOpts {
  relay?: string;
  token?: string;
  rules?: string;
  filter?: string;
  capture?: 'none' | 'metadata' | 'redacted' | 'full';
  after?: string;
  repeat?: string;
  maxRepeats?: string;
  quiet?: string[];
  tz?: string;
  server?: string;
  topic?: string;
  priority?: string;
  ntfyTokenFile?: string;
  url?: string;
  secretFile?: string;
  format?: 'json' | 'slack';
  vapidFile?: string;
  allowHttpLoopback?: boolean;
  actionsListen?: string;
  actionsUrl?: string;
  actionTtl?: string;
  inboxUrl?: string;
  dryRun?: boolean;
  json?: boolean;
  verbose?: boolean;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `$XDG_DATA_HOME/aep` (absolute only), else `~/.local/share/aep`: `aep up`'s state dir (VAPID keys). */
function stateDir(): string {
  const xdg = process.env['XDG_DATA_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'share'), 'aep');
}

/** `aep notify push|ntfy|webhook` / `aep notify --rules FILE`: notifiers as ordinary AEP consumers. */
export function register(program: Command): void {
  const cmd = program
    .command('notify')
    .argument('[channel]', 'push, ntfy or webhook (or give --rules FILE)')
    .description('forward attention requests to a phone or a service (Web Push, ntfy, webhook), with escalation, quiet hours and one-tap answers')
    .option('--rules <file>', 'rules file (JSON: channels, rules, quiet hours, actions; see docs/phone.md) instead of a channel argument')
    .option('--filter <json>', 'attr-match filter of the requests to forward (AEP-0003 §6; type defaults to attention.requested)')
    .addOption(
      new Option(
        '--capture <level>',
        'capture ceiling of the subscription: what the channel may show (redacted/full only for a channel you trust, e.g. end-to-end encrypted)',
      )
        .choices(['none', 'metadata', 'redacted', 'full'])
        .default('metadata'),
    )
    .option('--after <duration>', 'notify once a request has been pending this long (seconds, or 30s, 10m, 2h)', '0')
    .option('--repeat <duration>', 're-notify this often while it stays pending (at least 10s; default: never)')
    .option('--max-repeats <n>', 'most re-notifications (default 3 with --repeat)')
    .option('--quiet <HH:MM-HH:MM>', 'quiet hours (repeatable); sends are deferred to their end', collect)
    .option('--tz <zone>', "IANA time zone of --quiet (default: this machine's)")
    .option('--server <url>', 'ntfy: server root', 'https://ntfy.sh')
    .option('--topic <topic>', 'ntfy: topic (required for ntfy)')
    .option('--priority <1-5>', "ntfy: base priority (default from the request's severity)")
    .option('--ntfy-token-file <file>', 'ntfy: file holding an ntfy access token')
    .option('--url <url>', 'webhook: URL to POST to (required for webhook)')
    .option('--secret-file <file>', 'webhook: file holding the HMAC-SHA256 secret, at least 16 bytes (required for webhook)')
    .addOption(new Option('--format <f>', 'webhook: body format').choices(['json', 'slack']).default('json'))
    .option('--vapid-file <file>', 'push: VAPID keys written by aep up', join(stateDir(), 'vapid.json'))
    .option('--allow-http-loopback', 'push: accept http: push endpoints on loopback (a local push server for testing)')
    .option('--actions-listen <host:port>', 'serve one-tap action links on this address (default: none, notifications only open the inbox)')
    .option('--actions-url <url>', 'base URL of the action listener as the phone reaches it (default http://HOST:PORT of --actions-listen)')
    .option('--action-ttl <duration>', 'lifetime of an action link (10s-1d)', '10m')
    .option('--inbox-url <url>', 'the inbox as the phone reaches it, for deep links (default: the relay URL)')
    .option('--dry-run', 'print what would be sent and when, for the requests pending now, and exit (sends nothing)')
    .option('--json', 'with --dry-run: one JSON object per planned send')
    .option('--verbose', 'print one line per delivery attempt')
    .addHelpText(
      'after',
      `
The notifier subscribes to the relay like any consumer, with the rule's filter at the channel's
capture ceiling (default metadata: structure only, e.g. "claude-code asks 2 questions"), emits
attention.routed for every request it forwards, and answers only through control.attention.respond
when a person uses a one-tap link (Deny, or a closed choice; Allow only at an opted-in ceiling
where the complete approval text is shown). Secrets are read from files, never from flags.

Examples:
  aep notify ntfy --topic my-agents-7f3a --actions-listen 100.64.0.2:8788
  aep notify webhook --url https://hooks.example/x --secret-file ~/.config/aep/hook.secret --format slack
  aep notify push                              Web Push to every browser that enabled it in the inbox
  aep notify --rules ~/.config/aep/notify.json --dry-run
Exit codes: 0 ok, 2 usage (bad rules, file unreadable), 5 relay unreachable or listen failed.`,
    );
  addRelayOptions(cmd).action(
    action(async (channel: string | undefined, opts: NotifyOpts) => {
      const url = relayUrl(opts.relay);
      const n = await import('@aep/notify');
      if ((channel === undefined) === (opts.rules === undefined))
        throw new CliError('AEP_CLI_USAGE', 'give a channel (push, ntfy, webhook) or --rules FILE, not both', EXIT.USAGE);
      let config;
      try {
        if (opts.rules !== undefined) {
          const { readFile } = await import('node:fs/promises');
          let text: string;
          try {
            text = await readFile(opts.rules, 'utf8');
          } catch (err) {
            throw new CliError('AEP_CLI_UNREADABLE', `cannot read ${opts.rules}: ${(err as Error).message}`, EXIT.USAGE);
          }
          config = n.parseConfig(text, opts.rules);
        } else {
          if (channel !== 'push' && channel !== 'ntfy' && channel !== 'webhook')
            throw new CliError('AEP_CLI_USAGE', `unknown channel "${clean(channel)}": use push, ntfy or webhook`, EXIT.USAGE);
          let filter: Record<string, unknown> | undefined;
          if (opts.filter !== undefined) {
            try {
              filter = JSON.parse(opts.filter) as Record<string, unknown>;
            } catch (err) {
              throw new CliError('AEP_CLI_BAD_FILTER', `--filter is not valid JSON: ${(err as Error).message}`, EXIT.USAGE);
            }
          }
          const quiet = (opts.quiet ?? []).map((q) => {
            const m = /^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)\s*$/.exec(q);
            if (!m) throw new CliError('AEP_CLI_BAD_OPTION', `--quiet must be HH:MM-HH:MM, got "${clean(q)}"`, EXIT.USAGE);
            return { from: m[1]!, to: m[2]! };
          });
          const num = (name: string, v: string | undefined) => {
            if (v === undefined) return undefined;
            const x = Number(v);
            if (!Number.isInteger(x)) throw new CliError('AEP_CLI_BAD_OPTION', `${name} must be an integer, got "${clean(v)}"`, EXIT.USAGE);
            return x;
          };
          const maxRepeats = num('--max-repeats', opts.maxRepeats);
          const priority = num('--priority', opts.priority);
          config = n.configFromFlags({
            type: channel,
            ...(filter !== undefined ? { filter } : {}),
            ...(opts.capture ? { capture: opts.capture } : {}),
            ...(opts.after !== undefined ? { after: opts.after } : {}),
            ...(opts.repeat !== undefined ? { repeat: opts.repeat } : {}),
            ...(maxRepeats !== undefined ? { maxRepeats } : {}),
            quiet,
            ...(opts.tz ? { tz: opts.tz } : {}),
            ...(channel === 'ntfy'
              ? {
                  server: opts.server ?? 'https://ntfy.sh',
                  ...(opts.topic !== undefined ? { topic: opts.topic } : {}),
                  ...(priority !== undefined ? { priority } : {}),
                  ...(opts.ntfyTokenFile ? { tokenFile: opts.ntfyTokenFile } : {}),
                }
              : {}),
            ...(channel === 'webhook'
              ? { ...(opts.url ? { url: opts.url } : {}), ...(opts.secretFile ? { secretFile: opts.secretFile } : {}), format: opts.format ?? 'json' }
              : {}),
            ...(channel === 'push'
              ? { ...(opts.vapidFile ? { vapidFile: opts.vapidFile } : {}), ...(opts.allowHttpLoopback ? { allowHttpLoopback: true } : {}) }
              : {}),
            ...(opts.actionsListen ? { actionsListen: opts.actionsListen } : {}),
            ...(opts.actionsUrl ? { actionsUrl: opts.actionsUrl } : {}),
            ...(opts.actionTtl ? { actionTtl: opts.actionTtl } : {}),
            ...(opts.inboxUrl ? { inboxUrl: opts.inboxUrl } : {}),
          });
        }
      } catch (err) {
        if (err instanceof n.ConfigError) throw new CliError('AEP_NOTIFY_RULES_INVALID', err.message, EXIT.USAGE);
        throw err;
      }
      const fail = (err: unknown): never => {
        const code = (err as { code?: string }).code ?? '';
        if (code === 'AEP_NOTIFY_SECRET_UNREADABLE') throw new CliError(code, (err as Error).message, EXIT.USAGE);
        if (code === 'AEP_NOTIFY_LISTEN_FAILED' || code === 'AEP_NOTIFY_RELAY_UNAVAILABLE') throw new CliError(code, (err as Error).message, EXIT.UNAVAILABLE);
        if (/fetch failed|ECONNREFUSED|unreachable/i.test((err as Error).message ?? ''))
          throw new CliError('AEP_CLI_RELAY_UNREACHABLE', `cannot reach the relay at ${new URL(url).origin}`, EXIT.UNAVAILABLE);
        throw err;
      };
      const vapidFile = opts.vapidFile ?? join(stateDir(), 'vapid.json');
      if (opts.dryRun) {
        let items;
        try {
          items = await n.dryRun({ url, ...(opts.token ? { token: opts.token } : {}), config, vapidFile });
        } catch (err) {
          fail(err);
        }
        if (opts.json) {
          for (const it of items!) process.stdout.write(JSON.stringify(it) + '\n');
          return;
        }
        if (items!.length === 0) {
          process.stdout.write('nothing pending matches the rules: nothing would be sent now\n');
          return;
        }
        for (const it of items!) {
          const when = it.inSeconds <= 0 ? 'now' : `in ${it.inSeconds} s`;
          process.stdout.write(
            `${it.at} (${when}${it.deferredByQuiet ? ', after quiet hours' : ''}) ${it.channel} [${it.type}] ${it.reason} ${clean(it.session)}/${clean(it.request)}\n`,
          );
          process.stdout.write(`    ${clean(it.title)}\n`);
          for (const l of it.body.split('\n')) process.stdout.write(`    | ${clean(l)}\n`);
          process.stdout.write(`    buttons: ${it.actions.length ? it.actions.map(clean).join(', ') : 'none (opens the inbox)'}\n`);
        }
        return;
      }
      let notifier;
      try {
        notifier = await n.startNotifier({
          url,
          ...(opts.token ? { token: opts.token } : {}),
          config,
          vapidFile,
          log: (line) => process.stderr.write(`aep notify: ${line}\n`),
          ...(opts.verbose
            ? {
                onSend: (s: { channel: string; reason: string; session: string; request: string; delivered: boolean; detail: string }) =>
                  process.stderr.write(
                    `aep notify: ${s.channel} ${s.reason} ${clean(s.session)}/${clean(s.request)}: ${s.delivered ? 'delivered' : 'not delivered'} (${clean(s.detail)})\n`,
                  ),
              }
            : {}),
        });
      } catch (err) {
        fail(err);
      }
      const channels = [...config.channels.values()].map((c) => `${c.name} (${c.type}, capture ${c.capture})`).join(', ');
      process.stdout.write(
        `aep notify: forwarding to ${channels}${notifier!.actionsUrl ? `; action links at ${notifier!.actionsUrl}` : '; no action links (give --actions-listen for one-tap answers)'}\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          void notifier!.close().then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    }),
  );
}
