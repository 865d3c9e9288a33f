import type { ChildProcess } from 'node:child_process';
import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';

/** Options of `aep up` as commander parses them. */
interface UpOptions {
  port: string;
  host: string;
  store?: string;
  memory?: boolean;
  token?: string;
  demo?: boolean;
  open: boolean;
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
  } catch { /* none saved yet */ }
  const token = randomBytes(24).toString('base64url');
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(file, token + '\n', { mode: 0o600 });
    await chmod(file, 0o600);
  } catch (err) {
    throw new CliError('AEP_CLI_STATE_DIR', `cannot save the token in ${dir}: ${(err as Error).message} (pass --token or set XDG_DATA_HOME)`, EXIT.USAGE);
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
    child.on('error', () => { /* no opener installed: the URL is printed anyway */ });
    child.unref();
  } catch { /* ignore */ }
}

/** argv that re-runs this same `aep` (compiled or from sources) with other arguments. */
function selfArgv(args: string[]): string[] {
  const script = process.argv[1];
  return [...process.execArgv, ...(script ? [script] : []), ...args];
}

/** `aep up`: start the relay (SQLite store) with the web inbox, in this process: the main job. */
export function register(program: Command): void {
  program
    .command('up')
    .description('start the relay (SQLite store) and the web inbox in one process: the main job')
    .option('--port <n>', 'TCP port (0 picks a free port)', '8787')
    .option('--host <addr>', 'interface to bind', '127.0.0.1')
    .option('--store <path>', 'SQLite store file (default: $XDG_DATA_HOME/aep/relay.sqlite, else ~/.local/share/aep/relay.sqlite)')
    .option('--memory', 'keep events in memory only (no store file)', false)
    .option('--token <t>', 'bearer token for every endpoint (default: $AEP_TOKEN, else the token saved in the state dir, else a new random one saved there with mode 0600)')
    .option('--demo', 'also start `aep demo agent` against this relay, so the inbox has a form to answer', false)
    .option('--no-open', 'do not open the inbox in a browser (default: open it when stdout is a terminal)')
    .option('--policy <file>', 'also run a policy delegate with this policy file (aep delegate; docs/delegates.md), with the owner token')
    .addHelpText('after', `
The inbox is served at the relay's origin (http://HOST:PORT/). Paste the printed token into it
once; the browser keeps it in local storage (never in the page address).

Examples:
  aep up                      relay + inbox on http://127.0.0.1:8787/, SQLite store, saved token
  aep up --memory --demo      throwaway relay with the demo agent's form waiting in the inbox
  aep up --port 0 --no-open   any free port, no browser`)
    .action(action(async (opts: UpOptions) => {
      const port = parsePort(opts.port);
      if (opts.memory && opts.store) throw new CliError('AEP_CLI_BAD_OPTION', '--memory and --store exclude each other', EXIT.USAGE);
      const { token, file, created } = await resolveToken(opts.token);
      const [{ startRelay, defaultStorePath }, { webRoot }, { existsSync }, { join }] = await Promise.all([
        import('@aep/relay'), import('@aep/web'), import('node:fs'), import('node:path'),
      ]);
      const storePath = opts.memory ? null : (opts.store ?? defaultStorePath());
      if (storePath !== null) {
        const { mkdir } = await import('node:fs/promises');
        const { dirname } = await import('node:path');
        await mkdir(dirname(storePath), { recursive: true });
      }
      const built = existsSync(join(webRoot, 'index.html'));
      let relay;
      try {
        relay = await startRelay({
          port, host: opts.host, token, storePath, staticDir: webRoot,
          log: (line) => process.stderr.write(`relay: ${line}\n`),
        });
      } catch (err) {
        const e = err as NodeJS.ErrnoException & { code?: string };
        if (e.code === 'EADDRINUSE') throw new CliError('AEP_CLI_PORT_IN_USE', `port ${port} on ${opts.host} is in use (pick another with --port, or 0 for any)`, EXIT.UNAVAILABLE);
        if (e.code === 'AEP_RELAY_BAD_OPTION') throw new CliError('AEP_CLI_BAD_OPTION', e.message, EXIT.USAGE);
        throw err;
      }
      const inbox = `${relay.url}/`;
      const lines = [
        `AEP relay listening on ${relay.url}`,
        ``,
        `  Inbox:   ${inbox}`,
        `  Token:   ${token}`,
        file ? `           (${created ? 'new, saved' : 'saved'} in ${file}; paste it into the inbox once)` : `           (paste it into the inbox once)`,
        `  Store:   ${storePath ?? 'memory only (events are lost on exit)'}`,
        ``,
        `  Connect Claude Code:   aep claude-code install          (once: adds the hooks to ~/.claude/settings.json)`,
        `                         aep claude-code serve --relay ${relay.url} --token ${token}`,
        `  Run the demo agent:    aep demo agent --relay ${relay.url} --token ${token}`,
        ``,
        `Press Ctrl+C to stop.`,
      ];
      process.stdout.write(lines.join('\n') + '\n');
      if (!['127.0.0.1', '::1', 'localhost'].includes(opts.host)) {
        // AEP-0003 §8.1: any off-host binding needs TLS and a token; TLS is deployment-owned.
        process.stderr.write(`aep: warning: listening on ${opts.host}, beyond this machine: put a TLS-terminating proxy in front (AEP-0003 §8.1); the token travels with every request\n`);
      }
      if (!built) process.stderr.write('aep: warning: the inbox assets are not built (run `npm run build`); the relay runs without the web UI\n');

      const delegate = opts.policy ? await (await import('./delegate.js')).startDelegateForUp({ url: relay.url, token, policyFile: opts.policy, log: (l) => process.stderr.write(`${l}\n`) }).catch(async (err: unknown) => { await relay.close(); throw err; }) : null;
      let demo: ChildProcess | null = null;
      if (opts.demo) {
        const { spawn } = await import('node:child_process');
        demo = spawn(process.execPath, selfArgv(['demo', 'agent', '--relay', relay.url, '--token', token]), { stdio: ['ignore', 'pipe', 'pipe'] });
        const prefix = (chunk: Buffer, out: NodeJS.WriteStream) => {
          for (const l of chunk.toString('utf8').split('\n')) if (l) out.write(`demo: ${l}\n`);
        };
        demo.stdout?.on('data', (b: Buffer) => prefix(b, process.stdout));
        demo.stderr?.on('data', (b: Buffer) => prefix(b, process.stderr));
        demo.on('error', (err) => process.stderr.write(`aep: warning: the demo agent did not start: ${err.message}\n`));
        demo.on('exit', (code) => { process.stdout.write(`demo: exited (${code ?? 'signal'})\n`); demo = null; });
      }
      if (opts.open && process.stdout.isTTY) await openBrowser(inbox);

      await new Promise<void>((resolve) => {
        let stopping = false;
        const stop = () => {
          if (stopping) return;
          stopping = true;
          demo?.kill('SIGTERM');
          void (delegate?.close() ?? Promise.resolve()).then(() => relay.close()).then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    }));
}
