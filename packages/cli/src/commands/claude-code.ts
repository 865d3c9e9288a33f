import type { Command } from 'commander';
import type { InstallOptions, MappingConfig } from '@aep/adapter-claude-code';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { readAll } from '../util/lines.js';
import { addRelayOptions } from '../util/relay.js';
import { quote, selfCommand } from '../util/self.js';

// Defaults repeated here (not imported) so `aep --help` never loads the adapter; the adapter's
// CLI test pins them against the package constants.
const D = {
  port: 8377,
  host: '127.0.0.1',
  relay: 'http://127.0.0.1:8787',
  waitMs: 300_000,
  agent: 'claude-code',
  daemonUrl: 'http://127.0.0.1:8377',
  blockingTimeoutS: 330,
  lifecycleTimeoutS: 10,
  maxHeld: 64,
  maxQuestions: 16,
  maxFields: 64,
  maxHookBytes: 1024 * 1024,
};
/** AEP-0003 §9.1: the RECOMMENDED default override, applied when neither --capture nor --override is given. */
const DEFAULT_OVERRIDE = 'attention.*=redacted';

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

interface CaptureCliOptions {
  capture?: string;
  override?: string[];
  agent: string;
  pii?: boolean;
  secretEnv?: string[];
}

function intOpt(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(v)) throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be a non-negative integer, got "${v}"`, EXIT.USAGE);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new CliError('AEP_CLI_BAD_OPTION', `--${name} must be an integer between ${min} and ${max}, got ${v}`, EXIT.USAGE);
  return n;
}

/** Converts an adapter error (AEP_CC_*) into a CLI error with the same code. */
function cliError(err: unknown, exitCode: (typeof EXIT)[keyof typeof EXIT]): never {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  if (err instanceof Error && typeof code === 'string' && code.startsWith('AEP_CC_')) throw new CliError(code, err.message, exitCode);
  throw err;
}

async function mappingFrom(o: CaptureCliOptions): Promise<Partial<MappingConfig>> {
  const mod = await import('@aep/adapter-claude-code');
  try {
    const overridesText = o.override ?? (o.capture === undefined ? [DEFAULT_OVERRIDE] : []);
    const cfg: Partial<MappingConfig> = {
      agent: o.agent,
      capture: mod.parseCaptureLevel(o.capture ?? 'metadata'),
      overrides: overridesText.map((t) => mod.parseCaptureOverride(t)),
    };
    if (o.pii === false) cfg.pii = false;
    const secrets = (o.secretEnv ?? []).map((n) => process.env[n]).filter((v): v is string => typeof v === 'string' && v.length >= 4);
    if (secrets.length) cfg.secretValues = secrets;
    if (o.agent.trim() === '') throw new CliError('AEP_CLI_BAD_OPTION', '--agent must not be empty', EXIT.USAGE);
    return cfg;
  } catch (err) {
    return cliError(err, EXIT.USAGE);
  }
}

function captureOptions(cmd: Command): Command {
  return cmd
    .option('--capture <level>', 'capture level of every event: none | metadata | redacted | full (default: metadata, with attention.* at redacted)')
    .option(
      '--override <pattern=level>',
      'per-type capture override, e.g. "attention.*=redacted" or "tool.requested=full"; repeatable (default when neither --capture nor --override is given: attention.*=redacted)',
      collect,
    )
    .option('--agent <name>', 'AEP agent name (envelope agent, synthesized prompts)', D.agent)
    .option('--no-pii', 'at redacted, do not redact e-mail addresses and phone numbers (AEP-0003 §9.4 d)')
    .option('--secret-env <NAME>', 'environment variable whose value is a secret to redact (AEP-0003 §9.4 b); repeatable', collect);
}

/** Where `aep up` saves its token: `$XDG_DATA_HOME/aep/token` (absolute only), else `~/.local/share/aep/token`. */
async function savedTokenFile(): Promise<string> {
  const [{ homedir }, { join }] = await Promise.all([import('node:os'), import('node:path')]);
  const xdg = process.env['XDG_DATA_HOME'];
  return join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'share'), 'aep', 'token');
}

/** `aep claude-code`: the Claude Code adapter (daemon, settings install, dry-run mapping). */
export function register(program: Command): void {
  const cc = program
    .command('claude-code')
    .description('Claude Code adapter: hooks -> AEP events; AskUserQuestion, permissions and MCP elicitations answered from anywhere');

  addRelayOptions(
    captureOptions(
      cc
        .command('serve')
        .description(
          'run the hook daemon: receives Claude Code hooks (the command-hook shim over a private Unix socket, or HTTP hooks with the secret), emits AEP events to the relay, holds questions open until answered (control.attention.respond)',
        )
        .option(
          '--socket <path>',
          'Unix socket of the command-hook shim, in a directory only you can enter (default: $XDG_RUNTIME_DIR/aep/claude-code.sock, else ~/.local/state/aep/run/claude-code.sock)',
        )
        .option(
          '--secret-file <path>',
          'per-install hook secret, created 0600 when missing; every hook must prove it (default: $XDG_CONFIG_HOME/aep/claude-code/hook-secret, else ~/.config/aep/claude-code/hook-secret)',
        )
        .option('--port <n>', 'loopback TCP port for GET /health and HTTP hooks, which must present the secret (0 picks a free one)', String(D.port))
        .option('--host <addr>', 'interface to bind (a loopback address; requests must name a loopback Host)', D.host)
        .option(
          '--wait-ms <n>',
          'how long a question waits for an answer before Claude Code asks in the terminal (keep below the hook timeout)',
          String(D.waitMs),
        )
        .option('--state-dir <dir>', 'directory for the durable epoch counter (default: epoch from the clock)')
        .option(
          '--max-held <n>',
          'blocking hooks held open at once; beyond it a hook gets no decision at once (Claude Code asks in its own dialog), logged AEP_CC_TOO_MANY_HELD',
          String(D.maxHeld),
        )
        .option(
          '--max-questions <n>',
          'questions of one AskUserQuestion; a larger form is not forwarded (no decision, AEP_CC_TOO_MANY_QUESTIONS)',
          String(D.maxQuestions),
        )
        .option('--max-fields <n>', 'fields of one MCP elicitation; a larger form is not forwarded (no decision, AEP_CC_TOO_MANY_FIELDS)', String(D.maxFields))
        .option('--max-hook-bytes <n>', 'bytes of one hook body; a larger hook gets no decision (HTTP 413, AEP_CC_HOOK_TOO_LARGE)', String(D.maxHookBytes))
        .option('--quiet', 'no log lines on stderr', false)
        .addHelpText(
          'after',
          `
The relay token is needed to receive answers; it is never logged. Give it as --token-file
(e.g. the file aep up saves), --token-fd, AEP_TOKEN, or --token (visible to other users in ps).`,
        ),
    ),
  ).action(
    action(
      async (
        o: CaptureCliOptions & {
          socket?: string;
          secretFile?: string;
          port: string;
          host: string;
          relay?: string;
          token?: string;
          waitMs: string;
          stateDir?: string;
          quiet?: boolean;
          maxHeld: string;
          maxQuestions: string;
          maxFields: string;
          maxHookBytes: string;
        },
      ) => {
        const mapping = await mappingFrom(o);
        const port = intOpt('port', o.port, 0, 65535);
        const waitMs = intOpt('wait-ms', o.waitMs, 1);
        const limits = {
          maxHeld: intOpt('max-held', o.maxHeld, 1),
          maxQuestions: intOpt('max-questions', o.maxQuestions, 1),
          maxFields: intOpt('max-fields', o.maxFields, 1),
          maxHookBytes: intOpt('max-hook-bytes', o.maxHookBytes, 1024, 64 * 1024 * 1024),
        };
        const relay = o.relay ?? process.env['AEP_RELAY'] ?? D.relay;
        try {
          new URL(relay);
        } catch {
          throw new CliError('AEP_CLI_BAD_OPTION', `--relay must be a URL, got "${relay}"`, EXIT.USAGE);
        }
        const token = o.token ?? process.env['AEP_TOKEN'];
        const log = o.quiet ? () => {} : (line: string) => process.stderr.write(`${line}\n`);
        if (waitMs >= D.blockingTimeoutS * 1000)
          log(
            `aep claude-code: warning: --wait-ms ${waitMs} is not below the default hook timeout (${D.blockingTimeoutS} s); Claude Code would cancel the hook first (install --timeout raises it)`,
          );
        const mod = await import('@aep/adapter-claude-code');
        let handle;
        try {
          handle = await mod.startDaemon({
            port,
            host: o.host,
            relay,
            waitMs,
            mapping,
            log,
            limits,
            ...(token ? { token } : {}),
            ...(o.stateDir ? { stateDir: o.stateDir } : {}),
            ...(o.socket ? { socket: o.socket } : {}),
            ...(o.secretFile ? { secretFile: o.secretFile } : {}),
          });
        } catch (err) {
          // AEP_CC_ADDRESS_IN_USE / AEP_CC_LISTEN_FAILED (exit 5), AEP_CC_SECRET_UNSAFE /
          // AEP_CC_SOCKET_UNSAFE (exit 2): nothing keeps running.
          const code = (err as { code?: unknown }).code;
          cliError(err, code === 'AEP_CC_SECRET_UNSAFE' || code === 'AEP_CC_SOCKET_UNSAFE' ? EXIT.USAGE : EXIT.UNAVAILABLE);
        }
        process.stdout.write(
          `AEP claude-code adapter listening on ${handle.url}${handle.socket ? ` and ${handle.socket}` : ''} (relay ${new URL(relay).origin}${token ? '' : ', no token: answers cannot arrive'})\n`,
        );
        await new Promise<void>((resolve) => {
          const stop = (): void => {
            resolve();
          };
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        await handle.close();
      },
    ),
  );

  const scopeOpt = (cmd: Command): Command =>
    cmd
      .option('--scope <scope>', 'settings file: user (~/.claude/settings.json), project (.claude/settings.json), local (.claude/settings.local.json)', 'user')
      .option('--settings <file>', 'explicit settings file (overrides --scope)')
      .option('--project-dir <dir>', 'project root for the project and local scopes (default: the current directory)');

  const checkScope = (s: string): 'user' | 'project' | 'local' => {
    if (s !== 'user' && s !== 'project' && s !== 'local')
      throw new CliError('AEP_CLI_BAD_OPTION', `--scope must be user, project or local, got "${s}"`, EXIT.USAGE);
    return s;
  };

  scopeOpt(
    cc
      .command('install')
      .description(
        "merge the adapter's hook entries into a Claude Code settings file (existing hooks untouched; idempotent; a backup of the original bytes is kept for uninstall)",
      ),
  )
    .option(
      '--handler <type>',
      "hook handler type: command (the aep-claude-hook shim over the daemon's private Unix socket, with mutual proof of the secret) or http (Claude Code >= 2.1.63; presents the secret from $AEP_CC_HOOK_SECRET; a process squatting the port would receive it)",
      'command',
    )
    .option('--socket <path>', 'daemon socket the command hooks use (same default as serve --socket)')
    .option('--secret-file <path>', 'per-install hook secret, created 0600 in a 0700 directory when missing (same default as serve --secret-file)')
    .option('--url <url>', 'daemon base URL of http hooks', D.daemonUrl)
    .option(
      '--timeout <s>',
      'timeout in seconds of the hooks that wait for answers (PreToolUse, PermissionRequest, Elicitation); keep above serve --wait-ms',
      String(D.blockingTimeoutS),
    )
    .option('--lifecycle-timeout <s>', 'timeout in seconds of the other hooks', String(D.lifecycleTimeoutS))
    .option('--print', 'print the hooks snippet instead of writing any file', false)
    .action(
      action(
        async (o: {
          scope: string;
          settings?: string;
          projectDir?: string;
          url: string;
          handler: string;
          socket?: string;
          secretFile?: string;
          timeout: string;
          lifecycleTimeout: string;
          print?: boolean;
        }) => {
          const scope = checkScope(o.scope);
          if (o.handler !== 'http' && o.handler !== 'command')
            throw new CliError('AEP_CLI_BAD_OPTION', `--handler must be http or command, got "${o.handler}"`, EXIT.USAGE);
          try {
            new URL(o.url);
          } catch {
            throw new CliError('AEP_CLI_BAD_OPTION', `--url must be a URL, got "${o.url}"`, EXIT.USAGE);
          }
          const mod = await import('@aep/adapter-claude-code');
          const opts: InstallOptions = {
            scope,
            url: o.url,
            handler: o.handler,
            blockingTimeoutS: intOpt('timeout', o.timeout, 1),
            lifecycleTimeoutS: intOpt('lifecycle-timeout', o.lifecycleTimeout, 1),
          };
          if (o.settings) opts.settingsPath = o.settings;
          if (o.projectDir) opts.projectDir = o.projectDir;
          if (o.socket) opts.socketPath = o.socket;
          if (o.secretFile) opts.secretPath = o.secretFile;
          if (o.handler === 'command') {
            const { fileURLToPath } = await import('node:url');
            const hookJs = fileURLToPath(new URL('../../../adapter-claude-code/dist/hook.js', import.meta.url));
            opts.hookCommand = `node ${mod.shellQuote(hookJs)}`;
          }
          if (o.print) {
            process.stdout.write(JSON.stringify(mod.hookSnippet(opts), null, 2) + '\n');
            return;
          }
          let r;
          try {
            r = mod.install(opts);
          } catch (err) {
            cliError(err, EXIT.USAGE);
          }
          process.stdout.write(r.status === 'installed' ? `installed AEP hooks in ${r.path}\n` : `AEP hooks already installed in ${r.path} (unchanged)\n`);
          const secretFile = opts.secretPath ?? mod.defaultSecretPath();
          if (o.handler === 'http')
            process.stdout.write(
              `http hooks present the secret from $${mod.HOOK_SECRET_ENV}: export ${mod.HOOK_SECRET_ENV}="$(cat ${mod.shellQuote(secretFile)})" before starting Claude Code\n`,
            );
          else
            process.stdout.write(
              `hook secret in ${secretFile}; the hooks reach the daemon at ${opts.socketPath ?? mod.defaultSocketPath()} (run: ${selfCommand()} claude-code serve --token-file ${quote(await savedTokenFile())}, the token aep up saved)\n`,
            );
        },
      ),
    );

  scopeOpt(
    cc
      .command('uninstall')
      .description("remove the adapter's hook entries; restores the settings file byte-identically when nothing else changed since install"),
  ).action(
    action(async (o: { scope: string; settings?: string; projectDir?: string }) => {
      const scope = checkScope(o.scope);
      const mod = await import('@aep/adapter-claude-code');
      const opts: InstallOptions = { scope };
      if (o.settings) opts.settingsPath = o.settings;
      if (o.projectDir) opts.projectDir = o.projectDir;
      let r;
      try {
        r = mod.uninstall(opts);
      } catch (err) {
        cliError(err, EXIT.USAGE);
      }
      const msg = {
        restored: `removed AEP hooks; ${r.path} restored to its exact original bytes`,
        removed: `removed AEP hooks from ${r.path} (other changes since install kept)`,
        'not-installed': `no AEP hooks in ${r.path} (unchanged)`,
        installed: '',
        'already-installed': '',
      }[r.status];
      process.stdout.write(`${msg}\n`);
    }),
  );

  captureOptions(
    cc
      .command('map')
      .description(
        'dry run: read ONE hook payload (JSON) on stdin or from a file and print, as JSONL, the events a freshly started daemon would emit for it; contacts nothing',
      )
      .argument('[file]', 'hook payload file (default: stdin)'),
  ).action(
    action(async (file: string | undefined, o: CaptureCliOptions) => {
      const mapping = await mappingFrom(o);
      let text: string;
      try {
        if (file && file !== '-') {
          const { readFileSync } = await import('node:fs');
          text = readFileSync(file, 'utf8');
        } else {
          text = await readAll();
        }
      } catch (err) {
        throw new CliError('AEP_CLI_UNREADABLE', `cannot read ${file ?? 'stdin'}: ${err instanceof Error ? err.message : String(err)}`, EXIT.USAGE);
      }
      const mod = await import('@aep/adapter-claude-code');
      let events: Record<string, unknown>[];
      try {
        const payload = mod.parseHookText(text);
        events = mod.dryRun(payload, mod.mappingConfig(mapping));
      } catch (err) {
        cliError(err, EXIT.INVALID);
      }
      process.stdout.write(events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : ''));
    }),
  );
}
