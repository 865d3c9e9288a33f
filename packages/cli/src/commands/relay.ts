import type { Command } from 'commander';
import { Option } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { tuneRelayGc } from '../util/gc.js';

// Defaults repeated here (not imported) so `aep --help` never loads the relay; a relay test pins
// them against RELAY_DEFAULTS.
const D = {
  port: 8787,
  host: '127.0.0.1',
  bufferDepth: 10_000,
  maxSessions: 1_000,
  totalBytes: 256 * 1024 * 1024,
  maxBodyBytes: 4 * 1024 * 1024,
  maxBatchEvents: 10_000,
  maxSubscriptions: 64,
  slowConsumerBytes: 1024 * 1024,
  maxConsumerBytes: 8 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  offlineTtlMs: 24 * 60 * 60 * 1000,
};
/** Drain period on SIGINT/SIGTERM (contract C5): connected emitters get this long to send their last Events. */
const DRAIN_MS = 3000;

interface RelayCliOptions {
  port: string;
  host: string;
  token?: string;
  memory?: boolean;
  store?: string;
  buffer: string;
  maxSessions: string;
  maxBody: string;
  maxBatch: string;
  maxFrom?: string;
  maxSubscriptions: string;
  retainBytes: string;
  slowConsumerBytes: string;
  maxConsumerBytes: string;
  headersTimeout: string;
  requestTimeout: string;
  static?: string;
  quiet?: boolean;
  allowOrigin: string[];
  insecureNoAuth?: boolean;
  offlineTtl: string;
  drain: string;
  nats?: string;
  natsStream: string;
  natsCreds?: string;
}

function intOpt(name: string, v: string, min: number): number {
  if (!/^\d+$/.test(v)) throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be a non-negative integer, got "${v}"`, EXIT.USAGE);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be an integer >= ${min}, got ${v}`, EXIT.USAGE);
  return n;
}

/** `aep relay`: run the AEP relay (HTTP ingest, SSE, WebSocket, control routing, durable store). */
export function register(program: Command): void {
  program
    .command('relay')
    .description('run the AEP relay: POST /events, GET /stream (SSE), /socket (WebSocket), command routing, durable SQLite store')
    .option('--port <n>', 'TCP port (0 picks a free one)', String(D.port))
    .option('--host <addr>', 'interface to bind', D.host)
    .option('--token <t>', 'bearer token required on every endpoint (default: $AEP_TOKEN; none = observe-only, every command refused)')
    .option('--memory', 'keep Events in memory only (no store file)', false)
    .option('--store <path>', 'SQLite store file (default: $XDG_DATA_HOME/aep/relay.sqlite or ~/.local/share/aep/relay.sqlite)')
    .option('--buffer <n>', 'Events held per session = advertised replay.buffer', String(D.bufferDepth))
    .option('--max-sessions <n>', 'sessions held; least recently written evicted past it', String(D.maxSessions))
    .option('--retain-bytes <n>', 'total raw bytes held across sessions (retention cap)', String(D.totalBytes))
    .option('--max-body <n>', 'largest POST body / WebSocket message in bytes (413 above)', String(D.maxBodyBytes))
    .option('--max-batch <n>', 'most Events in one POST (413 above)', String(D.maxBatchEvents))
    .option('--max-from <n>', 'most from positions in one subscription (default: --max-sessions)')
    .option('--max-subscriptions <n>', 'subscriptions per WebSocket connection', String(D.maxSubscriptions))
    .option('--slow-consumer-bytes <n>', 'queued bytes above which debug/info are dropped for a consumer', String(D.slowConsumerBytes))
    .option('--max-consumer-bytes <n>', 'queued bytes above which a consumer is disconnected', String(D.maxConsumerBytes))
    .option('--headers-timeout <ms>', 'time to receive request headers (slowloris guard)', String(D.headersTimeoutMs))
    .option('--request-timeout <ms>', 'time to receive a whole request', String(D.requestTimeoutMs))
    .option('--static <dir>', 'serve this directory at / (the web inbox)')
    .addOption(
      new Option('--allow-origin <origin>', "a browser origin (scheme://host[:port], or *) allowed to open /socket besides the relay's own; repeatable")
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "only the relay's own origin"),
    )
    .option('--insecure-no-auth', 'allow a non-loopback --host without a token (anyone who can reach it may read and write)', false)
    .option('--offline-ttl <ms>', "how long a pending request whose emitter is gone stays in the roster's offline list", String(D.offlineTtlMs))
    .option('--drain <ms>', 'on SIGINT/SIGTERM: how long connected emitters may still send before the relay stops', String(DRAIN_MS))
    .option(
      '--nats <url>',
      'scale out: keep Events, ordering, dedupe, claims, roster and command routing on NATS JetStream at this URL (nats://HOST:4222; comma-separated for several servers) instead of the SQLite store; every relay started with the same --nats and --nats-stream serves the same Events (docs/scale-out.md)',
    )
    .option('--nats-stream <name>', 'JetStream stream name, also the prefix of the KV buckets (one cluster = one name)', 'AEP')
    .option('--nats-creds <file>', 'NATS credentials file (JWT + nkey seed; never logged)')
    .option('--quiet', 'no operational log lines on stderr', false)
    .addHelpText(
      'after',
      `
Security: with --token every endpoint needs a token (the owner token, or a scoped one from
"aep token create"); without one the relay is observe-only (commands refused) and must stay on
loopback (a non-loopback --host refuses to start unless --insecure-no-auth). Browser pages of
other origins cannot open /socket (see --allow-origin). The store directory is created 0700 and
its files 0600; a second relay on the same store refuses to start (exit 5), naming the first.
On SIGINT/SIGTERM the relay stops accepting connections, lets connected emitters finish for up
to --drain ms (less when none is connected), commits, sends closing frames and exits 0; a second
signal stops it at once.

Scale-out (--nats): no store file (--store/--memory do not apply); 202 only after JetStream
acknowledged; while NATS is unreachable ingest answers 503 nats-unavailable and /healthz 503,
and the relay recovers by itself. Every relay of a cluster needs the same --nats-stream,
--buffer and --token; NATS 2.9 works, >= 2.10 is the production floor (docs/scale-out.md).

Garbage collection: AEP_RELAY_SCAVENGE=auto (default) runs each young-generation collection as one
task on machines of up to 2 CPUs (shorter pauses there) and leaves V8's own setting above;
single or parallel forces either (docs/cli.md, Environment).`,
    )
    .action(
      action(async (o: RelayCliOptions) => {
        const token = o.token ?? process.env['AEP_TOKEN'];
        const relayMod = await import('@aep/relay');
        if (o.nats !== undefined && (o.memory || o.store !== undefined))
          throw new CliError('AEP_CLI_BAD_OPTION', '--nats keeps the Events on JetStream: it cannot be combined with --store or --memory', EXIT.USAGE);
        if (o.nats === undefined && (o.natsCreds !== undefined || o.natsStream !== 'AEP'))
          throw new CliError('AEP_CLI_BAD_OPTION', '--nats-stream and --nats-creds need --nats URL', EXIT.USAGE);
        const natsServers = o.nats
          ?.split(',')
          .map((u) => u.trim())
          .filter((u) => u !== '');
        if (natsServers !== undefined && (natsServers.length === 0 || natsServers.some((u) => !/^(nats|tls):\/\/[^\s/]+$/.test(u))))
          throw new CliError('AEP_CLI_BAD_OPTION', '--nats must be nats://HOST:PORT (or tls://HOST:PORT), comma-separated for several servers', EXIT.USAGE);
        const natsMod = natsServers ? await import('@aep/relay-nats') : null;
        const log = o.quiet ? () => {} : (line: string) => process.stderr.write(`relay: ${line}\n`);
        const gc = tuneRelayGc(relayMod);
        const opts = {
          port: intOpt('port', o.port, 0),
          host: o.host,
          ...(token !== undefined && token !== '' ? { token } : {}),
          storePath: o.memory || natsServers ? null : (o.store ?? relayMod.defaultStorePath()),
          ...(natsMod && natsServers
            ? { backend: natsMod.natsBackend({ servers: natsServers, stream: o.natsStream, ...(o.natsCreds !== undefined ? { credsFile: o.natsCreds } : {}) }) }
            : {}),
          bufferDepth: intOpt('buffer', o.buffer, 1),
          maxSessions: intOpt('max-sessions', o.maxSessions, 1),
          totalBytes: intOpt('retain-bytes', o.retainBytes, 1024),
          maxBodyBytes: intOpt('max-body', o.maxBody, 1024),
          maxBatchEvents: intOpt('max-batch', o.maxBatch, 1),
          ...(o.maxFrom !== undefined ? { maxFromPositions: intOpt('max-from', o.maxFrom, 1) } : {}),
          maxSubscriptions: intOpt('max-subscriptions', o.maxSubscriptions, 1),
          slowConsumerBytes: intOpt('slow-consumer-bytes', o.slowConsumerBytes, 1024),
          maxConsumerBytes: intOpt('max-consumer-bytes', o.maxConsumerBytes, 1024),
          headersTimeoutMs: intOpt('headers-timeout', o.headersTimeout, 100),
          requestTimeoutMs: intOpt('request-timeout', o.requestTimeout, 100),
          ...(o.static !== undefined ? { staticDir: o.static } : {}),
          ...(o.allowOrigin.length ? { allowOrigins: o.allowOrigin } : {}),
          insecureNoAuth: o.insecureNoAuth === true,
          offlineTtlMs: intOpt('offline-ttl', o.offlineTtl, 0),
          log,
        };
        const drainMs = intOpt('drain', o.drain, 0);
        let handle;
        try {
          handle = await relayMod.startRelay(opts);
        } catch (err) {
          if (err instanceof relayMod.RelayOptionError) throw new CliError(err.code, err.message, EXIT.USAGE);
          if (natsMod && err instanceof natsMod.NatsStartError)
            throw new CliError('AEP_CLI_RELAY_START_FAILED', `relay could not start (${err.code}): ${err.message}`, EXIT.UNAVAILABLE);
          if (err instanceof relayMod.RelayStartError) {
            // Contract C6: name the running instance and what to do instead.
            const h = err.holder;
            const who = h ? ` (pid ${h.pid}${h.url ? `, ${h.url}` : ''})` : '';
            throw new CliError(
              'AEP_CLI_RELAY_START_FAILED',
              err.code === 'AEP_RELAY_STORE_LOCKED'
                ? `another relay${who} is using the store ${opts.storePath ?? ''}; stop it, or pass --store PATH for another store, or --memory`
                : `relay could not start: ${err.message}`,
              EXIT.UNAVAILABLE,
            );
          }
          const e = err as NodeJS.ErrnoException;
          if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
            throw new CliError('AEP_CLI_LISTEN_FAILED', `cannot listen on ${o.host}:${o.port} (${e.code})`, EXIT.UNAVAILABLE);
          }
          throw new CliError('AEP_CLI_RELAY_START_FAILED', `relay could not start: ${e.message}`, EXIT.UNAVAILABLE);
        }
        process.stdout.write(`AEP relay listening on ${handle.url}\n`);
        log(
          `${natsServers ? `events on NATS JetStream stream ${o.natsStream}` : `store ${handle.storePath ?? '(memory)'}`}; ${token ? 'token required on every endpoint' : 'no token: observe-only, commands refused'}`,
        );
        log(
          `limits: buffer ${opts.bufferDepth}/session, ${opts.maxSessions} sessions, ${opts.totalBytes} bytes retained, body ${opts.maxBodyBytes} bytes, batch ${opts.maxBatchEvents} Events, consumer queue ${opts.slowConsumerBytes}/${opts.maxConsumerBytes} bytes`,
        );
        log(`gc: ${gc}`);
        const h = handle;
        await new Promise<void>((resolve) => {
          let stopping = false;
          const stop = (sig: string) => {
            if (stopping) {
              log(`${sig} again: stopping now`);
              void h.close({ drainMs: 0 });
              return;
            }
            stopping = true;
            log(`${sig}: draining for up to ${drainMs} ms, then shutting down`);
            h.close({ drainMs }).then(resolve, resolve);
          };
          process.on('SIGTERM', () => stop('SIGTERM'));
          process.on('SIGINT', () => stop('SIGINT'));
        });
      }),
    );
}
