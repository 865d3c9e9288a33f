import type { ChildProcess } from 'node:child_process';
import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { tuneRelayGc } from '../util/gc.js';
import { quote, selfCommand } from '../util/self.js';

/** Options of `aep up` as commander parses them. */
interface UpOptions {
  port: string;
  host: string;
  store?: string;
  memory?: boolean;
  token?: string;
  demo?: boolean;
  open: boolean;
  notify?: string[];
  policy?: string;
}

/** `$XDG_DATA_HOME/aep` (absolute only), else `~/.local/share/aep`: where `aep up` keeps its token. */
async function stateDir(): Promise<string> {
  const { homedir } = await import('node:os');
  const { join } = await import('node:path');
  const xdg = process.env['XDG_DATA_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'share'), 'aep');
}

/**
 * The token: `--token`, else `AEP_TOKEN`, else the one saved by an earlier `aep up`, else a new
 * random one saved (mode 0600) so the inbox, which keeps it in the browser, works across restarts.
 */
async function resolveToken(given: string | undefined): Promise<{ token: string; file: string | null; created: boolean }> {
  if (given !== undefined && given !== '') return { token: given, file: null, created: false };
  const env = process.env['AEP_TOKEN'];
  if (env) return { token: env, file: null, created: false };
  const { readFile, writeFile, mkdir, chmod } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { randomBytes } = await import('node:crypto');
  const dir = await stateDir();
  const file = join(dir, 'token');
  try {
    const saved = (await readFile(file, 'utf8')).trim();
    if (/^[A-Za-z0-9._~+/=-]{16,}$/.test(saved)) return { token: saved, file, created: false };
  } catch {
    /* none saved yet */
  }
  const token = randomBytes(24).toString('base64url');
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(file, token + '\n', { mode: 0o600 });
    await chmod(file, 0o600);
  } catch (err) {
    throw new CliError('AEP_CLI_STATE_DIR', `cannot save the token in ${dir}: ${(err as Error).message} (pass --token or set XDG_DATA_HOME)`);
  }
  return { token, file, created: true };
}

function parsePort(s: string): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n > 65535) throw new CliError('AEP_CLI_BAD_OPTION', `--port must be an integer 0-65535, got "${s}"`, EXIT.USAGE);
  return n;
}

/** Open the inbox in the user's browser (best effort; never fails the command). */
async function openBrowser(url: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {
      /* no opener installed: the URL is printed anyway */
    });
    child.unref();
  } catch {
    /* ignore */
  }
}

/** argv that re-runs this same `aep` (compiled or from sources) with other arguments. */
function selfArgv(args: string[]): string[] {
  const script = process.argv[1];
  return [...process.execArgv, ...(script ? [script] : []), ...args];
}

/** The environment of a child: this one without any AEP credential (issue 11 item 4). */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^AEP_TOKEN/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** How long `aep up` waits on SIGINT/SIGTERM for the demo child to dismiss its requests and end its session. */
const CHILD_STOP_MS = 10_000;
/** The relay's drain on SIGINT/SIGTERM (contract C5): connected emitters may finish their final events. */
const DRAIN_MS = 3_000;

type Close = (opts?: { drainMs?: number }) => Promise<void>;

/** Who holds a locked store (contract C6: `RelayStartError.holder`, from `<store>.lock`). */
interface Holder {
  pid?: number;
  url?: string;
  started?: string;
}

/** The C6 store-lock refusal, or today's SQLite "database is locked" (until the relay's own code lands). */
function storeLocked(err: unknown): { holder?: Holder } | undefined {
  const e = err as { code?: unknown; message?: unknown; holder?: unknown };
  if (e?.code === 'AEP_RELAY_STORE_LOCKED') return e.holder !== null && typeof e.holder === 'object' ? { holder: e.holder as Holder } : {};
  if (typeof e?.message === 'string' && /database is locked|is another relay using it/.test(e.message)) return {};
  return undefined;
}

/** `aep up`: start the relay (SQLite store) with the web inbox, in this process: the main job. */
export function register(program: Command): void {
  program
    .command('up')
    .description('start the relay (SQLite store) and the web inbox in one process: the main job')
    .option('--port <n>', 'TCP port (0 picks a free port)', '8787')
    .option('--host <addr>', 'interface to bind', '127.0.0.1')
    .option('--store <path>', 'SQLite store file (default: $XDG_DATA_HOME/aep/relay.sqlite, else ~/.local/share/aep/relay.sqlite); one running relay per store')
    .option('--memory', 'keep events in memory only (no store file)', false)
    .option(
      '--token <t>',
      'bearer token for every endpoint (default: $AEP_TOKEN, else the token saved in the state dir, else a new random one saved there with mode 0600)',
    )
    .option(
      '--demo',
      'also start `aep demo agent` against this relay, so the inbox has a form to answer (the token reaches it through an inherited descriptor, never its command line or environment)',
      false,
    )
    .option('--no-open', 'do not open the inbox in a browser (default: open it when stdout is a terminal)')
    .option('--policy <file>', 'also run a policy delegate with this policy file (aep delegate; docs/delegates.md), with the owner token')
    .option(
      '--notify <spec>',
      'also run a notifier (repeatable): push, ntfy:URL (e.g. ntfy:https://ntfy.sh/TOPIC), webhook:URL, or a rules file *.json (see aep notify --help, docs/phone.md)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .addHelpText(
      'after',
      `
The inbox is served at the relay's origin (http://HOST:PORT/). Paste the printed token into it
once; the browser keeps it in local storage (never in the page address).

Stopping (Ctrl+C, SIGINT or SIGTERM): the demo agent, if any, first dismisses its pending
requests and ends its session (up to ${CHILD_STOP_MS / 1000} s); then the relay stops taking connections, lets the
connected emitters finish their last events for up to ${DRAIN_MS / 1000} s, commits them and exits. A second
Ctrl+C stops at once.

One relay per store: a second aep up on the same store exits 5 (AEP_CLI_RELAY_START_FAILED)
naming the running one; give it another --store, or --memory.

Exit codes: 0 stopped, 2 usage, 5 cannot listen (AEP_CLI_LISTEN_FAILED) or start
(AEP_CLI_RELAY_START_FAILED).

Examples:
  aep up                      relay + inbox on http://127.0.0.1:8787/, SQLite store, saved token
  aep up --memory --demo      throwaway relay with the demo agent's form waiting in the inbox
  aep up --port 0 --no-open   any free port, no browser`,
    )
    .action(
      action(async (opts: UpOptions) => {
        const port = parsePort(opts.port);
        if (opts.memory && opts.store) throw new CliError('AEP_CLI_BAD_OPTION', '--memory and --store exclude each other', EXIT.USAGE);
        const { token, file, created } = await resolveToken(opts.token);
        const [relayMod, { webRoot }, { existsSync }, { join }] = await Promise.all([
          import('@aep/relay'),
          import('@aep/web'),
          import('node:fs'),
          import('node:path'),
        ]);
        const { startRelay, defaultStorePath } = relayMod;
        tuneRelayGc(relayMod);
        const aep = selfCommand();
        const storePath = opts.memory ? null : (opts.store ?? defaultStorePath());
        // startRelay creates the store directory itself (0700) and fails fast on a bad path
        // (AEP_RELAY_STORE_UNAVAILABLE): a recursive mkdir here would hang under /proc.
        const built = existsSync(join(webRoot, 'index.html'));
        // Web Push keys (generated once, 0600, in the state dir) and the --notify specs (issue 17).
        const notify = await import('@aep/notify')
          .then(async (n) => n.prepareUpNotify(await stateDir(), opts.notify ?? []))
          .catch((e: Error & { code?: string }) => {
            throw new CliError(e.code === 'AEP_NOTIFY_RULES_INVALID' ? e.code : 'AEP_CLI_STATE_DIR', e.message, EXIT.USAGE);
          });
        let relay;
        try {
          relay = await startRelay({
            port,
            host: opts.host,
            token,
            storePath,
            staticDir: webRoot,
            push: notify.push,
            log: (line) => process.stderr.write(`relay: ${line}\n`),
          });
        } catch (err) {
          const e = err as NodeJS.ErrnoException & { code?: string };
          if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') {
            const other = e.code === 'EADDRINUSE' ? await whoListens(opts.host, port) : '';
            throw new CliError(
              'AEP_CLI_LISTEN_FAILED',
              `cannot listen on ${opts.host}:${port} (${e.code}${e.code === 'EADDRINUSE' ? ': the port is in use' : ''})${other}: pick another with --port, or 0 for any free port (${aep} up --port 0)`,
            );
          }
          if (e.code === 'AEP_RELAY_BAD_OPTION') throw new CliError('AEP_CLI_BAD_OPTION', e.message);
          const locked = storeLocked(err);
          if (locked) {
            const h = locked.holder;
            const who =
              h && (h.pid !== undefined || h.url !== undefined)
                ? `another relay is running on it${h.pid !== undefined ? ` (pid ${h.pid}` : ' ('}${h.url !== undefined ? `${h.pid !== undefined ? ', ' : ''}${h.url}` : ''}${h.started !== undefined ? `, since ${h.started}` : ''})`
                : 'another relay is running on it';
            throw new CliError(
              'AEP_CLI_RELAY_START_FAILED',
              `the store ${storePath ?? ''} is in use: ${who}. Use that one (its inbox, or stop it with Ctrl+C), or start this one on another store: ${aep} up --store PATH, or ${aep} up --memory`,
            );
          }
          throw new CliError('AEP_CLI_RELAY_START_FAILED', `the relay could not start: ${e.message}`);
        }
        const inbox = `${relay.url}/`;
        const tokenArg = file ? `--token-file ${quote(file)}` : `--token ${quote(token)}`;
        const lines = [
          `AEP relay listening on ${relay.url}`,
          ``,
          `  Inbox:   ${inbox}`,
          `  Token:   ${token}`,
          file ? `           (${created ? 'new, saved' : 'saved'} in ${file}; paste it into the inbox once)` : `           (paste it into the inbox once)`,
          `  Store:   ${storePath ?? 'memory only (events are lost on exit)'}`,
          ``,
          `  Connect Claude Code:   ${aep} claude-code install          (once: adds the hooks to ~/.claude/settings.json)`,
          `                         ${aep} claude-code serve --relay ${relay.url} ${tokenArg}`,
          `  Run the demo agent:    ${aep} demo agent --relay ${relay.url} ${tokenArg}`,
          `  Pending requests:      ${aep} inbox --relay ${relay.url} ${tokenArg}`,
          ``,
          `Press Ctrl+C to stop.`,
        ];
        process.stdout.write(lines.join('\n') + '\n');
        if (!['127.0.0.1', '::1', 'localhost'].includes(opts.host)) {
          // AEP-0003 §8.1: any off-host binding needs TLS and a token; TLS is deployment-owned.
          process.stderr.write(
            `aep: warning: listening on ${opts.host}, beyond this machine: put a TLS-terminating proxy in front (AEP-0003 §8.1); the token travels with every request\n`,
          );
        }
        if (!built) process.stderr.write('aep: warning: the inbox assets are not built (run `npm run build`); the relay runs without the web UI\n');

        const delegate = opts.policy
          ? await (
              await import('./delegate.js')
            )
              .startDelegateForUp({ url: relay.url, token, policyFile: opts.policy, log: (l) => process.stderr.write(`${l}\n`) })
              .catch(async (err: unknown) => {
                await relay.close();
                throw err;
              })
          : null;
        let demo: ChildProcess | null = null;
        let demoExited: Promise<void> = Promise.resolve();
        if (opts.demo) {
          const { spawn } = await import('node:child_process');
          // The token goes through descriptor 3 (a pipe closed after one line): never argv, never env.
          const child = spawn(process.execPath, selfArgv(['demo', 'agent', '--relay', relay.url, '--token-fd', '3']), {
            stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
            env: childEnv({ AEP_SELF_COMMAND: aep, AEP_HINT_ARGS: `--relay ${relay.url}${file ? ` --token-file ${quote(file)}` : ''}` }),
          });
          demo = child;
          const fd3 = child.stdio[3] as NodeJS.WritableStream | null;
          fd3?.on('error', () => {
            /* the child went away before reading: its own error says why */
          });
          fd3?.end(token + '\n');
          const prefix = (chunk: Buffer, out: NodeJS.WriteStream) => {
            for (const l of chunk.toString('utf8').split('\n')) if (l) out.write(`demo: ${l}\n`);
          };
          child.stdout?.on('data', (b: Buffer) => prefix(b, process.stdout));
          child.stderr?.on('data', (b: Buffer) => prefix(b, process.stderr));
          child.on('error', (err) => process.stderr.write(`aep: warning: the demo agent did not start: ${err.message}\n`));
          demoExited = new Promise<void>((resolve) => {
            child.on('exit', (code, signal) => {
              process.stdout.write(`demo: exited (${code ?? signal ?? 'signal'})\n`);
              demo = null;
              resolve();
            });
          });
        }
        const notifiers = await notify.start(relay.url, token, (l) => process.stderr.write(`notify: ${l}\n`));
        for (const d of notify.describe) process.stdout.write(`notify: ${d}\n`);
        if (opts.open && process.stdout.isTTY) await openBrowser(inbox);

        const close = relay.close.bind(relay) as Close;
        await new Promise<void>((resolve) => {
          let signals = 0;
          const stop = (sig: NodeJS.Signals) => {
            signals++;
            if (signals > 1) {
              // A second Ctrl+C: stop now (the store still closes cleanly, without the drain).
              process.stderr.write(`aep: ${sig} again: stopping now\n`);
              (demo as ChildProcess | null)?.kill('SIGKILL');
              close({ drainMs: 0 }).then(resolve, resolve);
              return;
            }
            void (async () => {
              // Ctrl+C reaches the demo too (same process group); SIGTERM from elsewhere may not.
              const child = demo as ChildProcess | null;
              if (child) {
                process.stderr.write('aep: stopping: waiting for the demo agent to dismiss its requests and end its session\n');
                child.kill('SIGTERM');
                let timer: NodeJS.Timeout | undefined;
                await Promise.race([
                  demoExited,
                  new Promise<void>((r) => {
                    timer = setTimeout(r, CHILD_STOP_MS);
                  }),
                ]);
                clearTimeout(timer);
                (demo as ChildProcess | null)?.kill('SIGKILL');
              }
              await notifiers.close().catch(() => {});
              await delegate?.close().catch(() => {});
              process.stderr.write(`aep: stopping the relay (drain up to ${DRAIN_MS / 1000} s)\n`);
              await close({ drainMs: DRAIN_MS }).catch((err: unknown) => process.stderr.write(`aep: warning: ${(err as Error).message}\n`));
              resolve();
            })();
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
      }),
    );
}

/** "; an AEP relay already answers at URL" when the port answers the relay's unauthenticated /healthz (`{"ok":true}`). */
async function whoListens(host: string, port: number): Promise<string> {
  const h = host.includes(':') ? `[${host}]` : host;
  try {
    const res = await fetch(`http://${h}:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
    const doc = (await res.json()) as { ok?: unknown };
    return doc.ok === true ? `; an AEP relay already answers at http://${h}:${port}/ (another aep up?)` : '';
  } catch {
    return '';
  }
}
