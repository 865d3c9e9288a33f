// What every command that talks to a relay shares: the `--relay`/`--token` options (and the
// token sources that keep it off command lines), URL checks, and how SDK failures become one
// coded line (docs/errors.md). No heavy imports: this module loads with `aep --help`.
import { closeSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Option } from 'commander';
import { CliError } from './errors.js';

/** Default relay URL when neither `--relay` nor `AEP_RELAY` is given. */
export const DEFAULT_RELAY = 'http://127.0.0.1:8787';

/**
 * Adds the shared `--relay` / `--token` options (env `AEP_RELAY`, `AEP_TOKEN`) and the two ways
 * to hand over a token without putting it on a command line (issue 11 item 4): `--token-file`
 * (a file, e.g. the 0600 one `aep up` saves) and `--token-fd` (an inherited descriptor, what
 * `aep up --demo` uses). Before the action runs, either one replaces `token`.
 */
export function addRelayOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--relay <url>', 'relay base URL').env('AEP_RELAY').default(DEFAULT_RELAY))
    .addOption(
      new Option(
        '--token <token>',
        'bearer token of the relay (required for commands; never printed; visible to other users in ps: prefer --token-file or AEP_TOKEN)',
      ).env('AEP_TOKEN'),
    )
    .addOption(new Option('--token-file <path>', 'read the token from this file (e.g. the one aep up saves, ~/.local/share/aep/token)'))
    .addOption(new Option('--token-fd <n>', 'read the token from this inherited file descriptor (how aep up --demo hands it over)'))
    .hook('preAction', (command) => {
      const o = command.opts<{ tokenFile?: string; tokenFd?: string }>();
      if (o.tokenFile === undefined && o.tokenFd === undefined) return;
      if (o.tokenFile !== undefined && o.tokenFd !== undefined) throw new CliError('AEP_CLI_USAGE', 'give one of --token-file and --token-fd');
      if (command.getOptionValueSource('token') === 'cli') throw new CliError('AEP_CLI_USAGE', 'give one of --token, --token-file and --token-fd');
      command.setOptionValueWithSource('token', o.tokenFile !== undefined ? tokenFromFile(o.tokenFile) : tokenFromFd(o.tokenFd ?? ''), 'cli');
    });
}

function checkToken(token: string, from: string): string {
  if (token === '' || /\s/.test(token)) throw new CliError('AEP_CLI_BAD_OPTION', `${from} must hold the token on one line (it is empty or contains spaces)`);
  return token;
}

function tokenFromFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError('AEP_CLI_UNREADABLE', `--token-file ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return checkToken(text.trim(), `--token-file ${path}`);
}

function tokenFromFd(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) < 3) throw new CliError('AEP_CLI_BAD_OPTION', `--token-fd must be a descriptor number >= 3, got "${value}"`);
  const fd = Number(value);
  let text: string;
  try {
    text = readFileSync(fd, 'utf8');
  } catch (err) {
    throw new CliError('AEP_CLI_UNREADABLE', `--token-fd ${fd} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
  return checkToken(text.trim(), `--token-fd ${fd}`);
}

/** Validates a relay URL option (http/https only) and returns it. */
export function relayUrl(value: unknown): string {
  const s = typeof value === 'string' ? value : DEFAULT_RELAY;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new CliError('AEP_CLI_BAD_RELAY', `--relay must be an http(s) URL, got "${s.replace(/\?.*$/, '')}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CliError('AEP_CLI_BAD_RELAY', `--relay must be an http(s) URL, got protocol "${u.protocol}"`);
  return s;
}

/** The origin of a relay URL, for messages (never credentials or a query). */
export function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '<invalid url>';
  }
}

/**
 * The HTTP status of a refusal the SDK reported only in its message ("refused the socket: HTTP
 * 401", "refused the stream: HTTP 403 {...}"), and the relay's `detail` when the body had one.
 */
export function refusalOf(err: unknown): { status: number; detail?: string } | undefined {
  const msg = err instanceof Error ? err.message : String(err);
  const m = /refused the (?:socket|stream): HTTP (\d{3})/.exec(msg);
  if (!m) return undefined;
  const detail = /"detail"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(msg)?.[1];
  return { status: Number(m[1]), ...(detail !== undefined ? { detail } : {}) };
}

/** The one line a refused credential gives, in every command (issue 14 item 5). */
export function refusedError(url: string, status: number, detail?: string): CliError {
  const safe = detail?.replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
  if (status === 401)
    return new CliError(
      'AEP_CLI_RELAY_REFUSED',
      `the relay at ${origin(url)} refused the token (HTTP 401): check --token, --token-file or AEP_TOKEN (aep up prints the token it uses)`,
    );
  if (status === 403)
    return new CliError(
      'AEP_CLI_RELAY_REFUSED',
      `the relay at ${origin(url)} refused this token (HTTP 403)${safe ? `: ${safe}` : ': it lacks a scope this command needs'}`,
    );
  return new CliError('AEP_CLI_RELAY_REFUSED', `the relay at ${origin(url)} refused the request (HTTP ${status})${safe ? `: ${safe}` : ''}`);
}

/**
 * Maps SDK errors (`ClientError`) to CLI errors: a refused credential (`AEP_CLIENT_REFUSED`,
 * or an HTTP 4xx reported in the message) → `AEP_CLI_RELAY_REFUSED` (exit 3), an unreachable
 * relay → `AEP_CLI_RELAY_UNREACHABLE` (exit 5). Anything else is rethrown (and reported as an
 * internal fault).
 */
export function mapClientError(err: unknown, url?: string): never {
  if (err instanceof CliError) throw err;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : '';
  const msg = err instanceof Error ? err.message : String(err);
  const status = (err as { status?: unknown })?.status;
  if (code === 'AEP_CLIENT_REFUSED') throw refusedError(url ?? '', typeof status === 'number' ? status : 401, refusalOf(err)?.detail);
  const refused = refusalOf(err);
  if (refused && refused.status >= 400 && refused.status < 500)
    throw refusedError(url ?? msg.match(/https?:\/\/[^\s/]+/)?.[0] ?? '', refused.status, refused.detail);
  if (code === 'AEP_CLIENT_UNREACHABLE' || code === 'AEP_CLIENT_CLOSED') throw new CliError('AEP_CLI_RELAY_UNREACHABLE', msg);
  if (code === 'AEP_CLIENT_HTTP') throw new CliError('AEP_CLI_RELAY_UNREACHABLE', `the relay answered with an error: ${msg}`);
  if (/timed out|did not finish/.test(msg)) throw new CliError('AEP_CLI_RELAY_UNREACHABLE', msg);
  throw err;
}

/** Parses a positive integer option. */
export function positiveInt(name: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliError('AEP_CLI_BAD_OPTION', `${name} must be a positive integer, got "${String(value)}"`);
  return n;
}
