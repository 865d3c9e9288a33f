import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import type { ExitCode } from '../util/exit.js';

// Defaults repeated here (not imported) so `aep --help` never loads the bridge.
const DEFAULT_RELAY = 'http://127.0.0.1:8787';
const DEFAULT_TIMEOUT_MS = 600_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
const DEFAULT_MAX_PENDING = 64;
const CAPTURES = ['metadata', 'redacted', 'full'] as const;

interface WrapOptions {
  relay?: string;
  token?: string;
  tokenFile?: string;
  agent?: string;
  session?: string;
  capture: string;
  timeoutMs: string;
  connectTimeoutMs: string;
  maxPending: string;
  aep: boolean;
}

/** The first line of a token file (`aep up` saves its token as one line, mode 0600). */
async function readTokenFile(path: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError('AEP_CLI_UNREADABLE', `cannot read --token-file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, EXIT.USAGE);
  }
  const token = text.split(/\r?\n/, 1)[0]?.trim() ?? '';
  if (token === '') throw new CliError('AEP_CLI_BAD_OPTION', `--token-file ${path} is empty`, EXIT.USAGE);
  return token;
}

function intOpt(name: string, v: string, min: number): number {
  if (!/^\d+$/.test(v)) throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be a non-negative integer, got "${v}"`, EXIT.USAGE);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be an integer >= ${min}, got ${v}`, EXIT.USAGE);
  return n;
}

const WRAP_HELP = `
Stdout is the MCP channel: only JSON-RPC lines are ever written there; logs go to stderr.

Elicitation outcomes (MCP ElicitResult <- AEP):
  answer with values (valid)       -> {action:"accept", content} (integers, booleans, arrays restored)
  answer option "decline"          -> {action:"decline"}
  answer option "cancel"           -> {action:"cancel"}
  no answer within --timeout-ms    -> {action:"cancel"}   (attention.timeout)
  host answered first              -> the host's result    (AEP request dismissed)
  unmappable schema / no relay     -> asked in the host if it supports elicitation, else {action:"decline"}
  URL mode                         -> kind "auth" request with options accept/decline/cancel (needs capture >= redacted)
  a non-integer for an integer     -> nacked invalid (form.not-integer); the request stays open

Steering (the session = this wrapped server; it keeps running):
  control.cancel (scope session)   -> open elicitations get {action:"cancel"}; the host's requests in flight are
                                      cancelled at the server (notifications/cancelled) and answered to the host
                                      with JSON-RPC error -32800 carrying the person's reason
  control.cancel (scope run)       -> nacked invalid (the bridge has no runs)
  control.pause / control.resume   -> nacked unsupported (MCP cannot pause a server)

The wrapped server never sees the token: it is not on the server's command line, and every
AEP_* variable except AEP_DEBUG, and any variable whose value holds the token, is removed from
the server's environment. Prefer AEP_TOKEN (set in the host's MCP "env" configuration) or
--token-file over --token: a command-line argument is visible to every local user (ps).

Examples:
  aep mcp wrap -- node ./server.js
  AEP_TOKEN=... aep mcp wrap --agent docs-bot -- npx -y some-mcp-server
  aep mcp wrap --token-file ~/.local/share/aep/token -- node ./server.js
  aep respond REQUEST_ID --values '{"name":"Ada","age":36}'     # answer it from a terminal
`;

/** `aep mcp`: MCP elicitation through AEP (`aep mcp wrap -- <server command...>`). */
export function register(program: Command): void {
  const mcp = program
    .command('mcp')
    .description('MCP elicitation through AEP: wrap an MCP server so its elicitations become AEP forms')
    .enablePositionalOptions();
  mcp
    .command('wrap')
    .description(
      'run an MCP stdio server behind a proxy: JSON-RPC passes through unchanged, elicitation/create becomes an AEP attention request (kind "form") answered from the inbox or terminal',
    )
    .argument('<command...>', 'the MCP server command and its arguments (put them after --)')
    .option('--relay <url>', `relay base URL (default: $AEP_RELAY or ${DEFAULT_RELAY})`)
    .option('--no-aep', 'do not connect to a relay: only advertise elicitation and answer from the host, or decline')
    .option('--token <t>', 'bearer token for the relay; needed to receive answers (default: $AEP_TOKEN; visible in ps: prefer $AEP_TOKEN or --token-file)')
    .option('--token-file <path>', 'read the token from the first line of this file (e.g. the one `aep up` saves)')
    .option('--agent <name>', 'agent name of the emitted events (default: mcp-<server name from the command>)')
    .option('--session <id>', 'AEP session id of this wrapped server (default: mcp-<random>)')
    .option(
      '--capture <level>',
      `capture level of the requests: ${CAPTURES.join(' | ')}; prompts and labels are real text only at redacted+ (redacted runs the redaction pipeline)`,
      'redacted',
    )
    .option('--timeout-ms <n>', 'how long a human has to answer through AEP before the server gets {action:"cancel"}', String(DEFAULT_TIMEOUT_MS))
    .option(
      '--connect-timeout-ms <n>',
      'how long to wait for the relay at start before proxying without it (it keeps retrying)',
      String(DEFAULT_CONNECT_TIMEOUT_MS),
    )
    .option('--max-pending <n>', 'most elicitations open through AEP at once; more go to the host, else are declined', String(DEFAULT_MAX_PENDING))
    .passThroughOptions()
    .addHelpText('after', WRAP_HELP)
    .action(
      action(async (command: string[], o: WrapOptions) => {
        const [bin, ...args] = command;
        if (bin === undefined || bin === '')
          throw new CliError('AEP_CLI_USAGE', 'missing the MCP server command: aep mcp wrap [options] -- <command...>', EXIT.USAGE);
        if (!(CAPTURES as readonly string[]).includes(o.capture)) {
          throw new CliError('AEP_CLI_BAD_OPTION', `--capture must be one of ${CAPTURES.join(', ')}, got "${o.capture}"`, EXIT.USAGE);
        }
        const timeoutMs = intOpt('timeout-ms', o.timeoutMs, 1);
        const connectTimeoutMs = intOpt('connect-timeout-ms', o.connectTimeoutMs, 0);
        const maxPending = intOpt('max-pending', o.maxPending, 1);
        const relay = o.aep ? (o.relay ?? process.env['AEP_RELAY'] ?? DEFAULT_RELAY) : null;
        if (relay !== null && !/^https?:\/\//.test(relay)) {
          throw new CliError('AEP_CLI_BAD_OPTION', `--relay must be an http(s) URL, got "${relay.replace(/\?.*$/, '?…')}"`, EXIT.USAGE);
        }
        if (o.token !== undefined && o.tokenFile !== undefined) throw new CliError('AEP_CLI_USAGE', 'give --token or --token-file, not both', EXIT.USAGE);
        const token = o.tokenFile !== undefined ? await readTokenFile(o.tokenFile) : (o.token ?? process.env['AEP_TOKEN']);
        // Stdout is the MCP channel: any stray console output (ours or a dependency's) goes to stderr.
        const { format } = await import('node:util');
        const toStderr = (...a: unknown[]): void => {
          process.stderr.write(`${format(...a)}\n`);
        };
        console.log = toStderr;
        console.info = toStderr;
        console.debug = toStderr;
        const bridge = await import('@aep/mcp-bridge');
        let code: number;
        try {
          code = await bridge.runMcpWrap({
            command: bin,
            args,
            relay,
            ...(token !== undefined && token !== '' ? { token } : {}),
            ...(o.agent !== undefined ? { agent: o.agent } : {}),
            ...(o.session !== undefined ? { session: o.session } : {}),
            capture: o.capture as (typeof CAPTURES)[number],
            timeoutMs,
            connectTimeoutMs,
            maxPending,
          });
        } catch (err) {
          // The bridge's error table gives the exit status (packages/mcp-bridge/src/errors.ts).
          if (err instanceof bridge.BridgeError) {
            const exit = (Object.values(EXIT) as number[]).includes(err.exit) ? (err.exit as ExitCode) : EXIT.UNAVAILABLE;
            throw new CliError(err.code, err.message, exit);
          }
          throw err;
        }
        process.exitCode = code;
      }),
    );
}
