import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { addRelayOptions, origin, positiveInt, refusedError, relayUrl } from '../util/relay.js';

interface TokenOpts {
  relay?: string;
  token?: string;
  json?: boolean;
  timeout: string;
}
interface CreateOpts extends TokenOpts {
  scope: string[];
  name?: string;
  expires?: string;
}

/** Untrusted text on one terminal line (token names come from whoever created them). */
function clean(text: unknown): string {
  return [...String(text)]
    .map((c) => {
      const n = c.codePointAt(0)!;
      return n < 0x20 || (n >= 0x7f && n < 0xa0) || (n >= 0x202a && n <= 0x202e) || (n >= 0x2066 && n <= 0x2069) ? '?' : c;
    })
    .join('');
}

/**
 * The owner token to authenticate with: `--token` / `--token-file` / `--token-fd` / `AEP_TOKEN`
 * (the shared relay options), else the one `aep up` saved (`$XDG_DATA_HOME/aep/token`, absolute
 * only, else `~/.local/share/aep/token`; the same place `aep up` writes it). Never printed.
 */
async function ownerToken(given: string | undefined): Promise<string | undefined> {
  if (given) return given;
  const [{ readFile }, { homedir }, { join }] = await Promise.all([import('node:fs/promises'), import('node:os'), import('node:path')]);
  const xdg = process.env['XDG_DATA_HOME'];
  const file = join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'share'), 'aep', 'token');
  try {
    const saved = (await readFile(file, 'utf8')).trim();
    return saved === '' ? undefined : saved;
  } catch {
    return undefined;
  }
}

/** `30d`, `12h`, `15m`, `45s` from now, or an RFC 3339 date-time as is. */
function expiresAt(v: string): string {
  const m = /^(\d{1,6})([smhd])$/.exec(v);
  if (m) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(Date.now() + Number(m[1]) * unit).toISOString();
  }
  if (Number.isNaN(Date.parse(v)))
    throw new CliError('AEP_CLI_BAD_OPTION', `--expires must be a duration (30d, 12h, 15m, 45s) or an RFC 3339 date-time, got "${clean(v)}"`);
  return v;
}

/** One call of the relay's token API; relay errors become CLI errors with the relay's detail. */
async function call(opts: TokenOpts, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const base = relayUrl(opts.relay);
  const token = await ownerToken(opts.token);
  const timeoutMs = positiveInt('--timeout', opts.timeout);
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new CliError('AEP_CLI_RELAY_UNREACHABLE', `cannot reach the relay at ${origin(base)}: ${(err as Error).message}`);
  }
  let json: Record<string, unknown> = {};
  try {
    json = (await res.json()) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  if (res.ok) return json;
  const detail = typeof json['detail'] === 'string' ? clean(json['detail']) : undefined;
  if (res.status === 404 && method === 'DELETE') throw new CliError('AEP_CLI_UNKNOWN_TOKEN', `the relay holds no token ${clean(path.split('/').pop())}`);
  if (res.status === 400) throw new CliError('AEP_CLI_BAD_OPTION', detail ?? 'the relay refused the request (HTTP 400)');
  if (res.status >= 500) throw new CliError('AEP_CLI_RELAY_UNREACHABLE', `the relay answered ${res.status}${detail ? `: ${detail}` : ''}`);
  // 401 (wrong token), 403 (not the owner nor admin) and anything else: one refusal line (exit 3).
  throw refusedError(base, res.status, detail);
}

function withRelay(cmd: Command): Command {
  return addRelayOptions(cmd)
    .option('--json', "print the relay's JSON answer")
    .option('--timeout <ms>', 'bound on the request', '15000')
    .addHelpText(
      'after',
      '\nThe token must be the owner token (or an admin-scoped one); without --token, --token-file, --token-fd\nor AEP_TOKEN, the token `aep up` saved is used.',
    );
}

/** `aep token create|list|revoke`: scoped tokens of a relay (contract C7). */
export function register(program: Command): void {
  const token = program
    .command('token')
    .description('manage scoped tokens of a relay: create (shown once), list, revoke')
    .addHelpText(
      'after',
      `
Scopes (repeat --scope; a key repeated = any of its values):
  read[:LEVEL]              read (SSE, WebSocket, roster) at most at LEVEL: none, metadata, redacted, full (bare read = read:metadata)
  emit[:agent=A,session=S]  send Events, optionally only for these agents/sessions
  answer[:agent=A,session=S,kind=K]  answer attention requests (not permission ones)
  permit[:agent=A,session=S]         answer kind:"permission" requests
  steer[:agent=A,session=S]          control.cancel, control.pause, control.resume, x.*.control.*
  admin                     manage tokens
The owner token (the one \`aep up\` prints, or --token of \`aep relay\`) holds every scope.
Exit codes: 0 ok, 2 usage (bad scope, unknown token), 3 refused (AEP_CLI_RELAY_REFUSED: not the
owner nor an admin token), 5 relay unreachable.

Examples:
  aep token create --name phone --scope read:redacted --scope answer --expires 30d
  aep token create --name ci --scope emit:agent=ci-bot
  aep token list
  aep token revoke 0123456789abcdef`,
    );

  withRelay(token.command('create').description('create a token; prints it once (the relay keeps only its hash)'))
    .requiredOption('--scope <scope>', 'a scope (repeatable; see `aep token --help`)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .option('--name <name>', 'a label to recognise it by')
    .option('--expires <when>', 'expiry: a duration (30d, 12h, 15m, 45s) or an RFC 3339 date-time (default: never)')
    .action(
      action(async (opts: CreateOpts) => {
        const body = {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          scopes: opts.scope,
          ...(opts.expires !== undefined ? { expires: expiresAt(opts.expires) } : {}),
        };
        const r = await call(opts, 'POST', 'tokens', body);
        if (opts.json) {
          process.stdout.write(JSON.stringify(r) + '\n');
          return;
        }
        process.stdout.write(
          [
            `${String(r['token'])}`,
            `  id ${clean(r['id'])}${r['name'] ? ` · name ${clean(r['name'])}` : ''} · scopes ${(r['scopes'] as unknown[]).map(clean).join(' ')}${r['expires'] ? ` · expires ${clean(r['expires'])}` : ''}`,
            '  shown once: the relay keeps only its hash',
          ].join('\n') + '\n',
        );
      }),
    );

  withRelay(token.command('list').description('list tokens (never their secrets)')).action(
    action(async (opts: TokenOpts) => {
      const r = await call(opts, 'GET', 'tokens');
      if (opts.json) {
        process.stdout.write(JSON.stringify(r) + '\n');
        return;
      }
      const list = Array.isArray(r['tokens']) ? (r['tokens'] as Array<Record<string, unknown>>) : [];
      if (list.length === 0) {
        process.stdout.write('no scoped tokens\n');
        return;
      }
      for (const t of list) {
        const state = t['revoked'] ? `revoked ${clean(t['revoked'])}` : t['expires'] ? `expires ${clean(t['expires'])}` : 'no expiry';
        process.stdout.write(
          `${clean(t['id'])}  ${clean(t['name'] || '-')}  ${(t['scopes'] as unknown[]).map(clean).join(' ')}  created ${clean(t['created'])}  ${state}\n`,
        );
      }
    }),
  );

  withRelay(
    token
      .command('revoke')
      .description('revoke a token: it stops working at once, its live connections are closed')
      .argument('<id>', 'the token id (from `aep token list`)'),
  ).action(
    action(async (id: string, opts: TokenOpts) => {
      if (!/^[0-9a-f]{16}$/.test(id)) throw new CliError('AEP_CLI_BAD_OPTION', `a token id is 16 hex characters (see \`aep token list\`), got "${clean(id)}"`);
      const r = await call(opts, 'DELETE', `tokens/${id}`);
      if (opts.json) {
        process.stdout.write(JSON.stringify(r) + '\n');
        return;
      }
      process.stdout.write(`revoked ${clean(r['id'])}\n`);
    }),
  );
}
