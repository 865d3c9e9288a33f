import type { Command } from 'commander';
import { Option } from 'commander';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CaptureLevel } from '@aep/protocol';
import type { Sender } from '@aep/bridges/node';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { readLineBatches } from '../util/lines.js';
import { parseCeiling, stdoutWriter } from './downlevel.js';
import { addRelayOptions, positiveInt, relayUrl } from '../util/relay.js';

// ------------------------------------------------------------- shared by `aep ce|otlp|ocsf`

/** What mapping one line gives: the output value (`null` = no record), or an error, plus warnings. */
export interface LineOutcome {
  /** The JSON value printed for the line; `null` prints `null` ("no record"). */
  out: unknown;
  /** A rule-naming message: the line is bad (its output is `null`, the exit code 1). */
  error?: string;
  /** Rule-naming notes on stderr (something dropped; the rest still mapped). */
  warnings?: readonly string[];
}

/**
 * JSONL in, one JSON line out per input line, in input order (issue 15): a blank line gives a
 * blank line; a line that is not JSON, or that `fn` cannot map, gives `null` and one stderr line
 * naming the rule (the line is never quoted: it may carry content above any ceiling). Returns
 * the counts; sets exit code 1 when some line was bad. Unreadable input: exit 2.
 */
export async function mapBridgeLines(name: string, files: readonly string[], fn: (value: unknown) => LineOutcome): Promise<{ lines: number; failed: number }> {
  const out = stdoutWriter();
  let lines = 0;
  let failed = 0;
  try {
    for await (const batch of readLineBatches(files))
      for (const line of batch) {
        lines++;
        if (line.text.trim() === '') {
          await out.write('\n');
          continue;
        }
        const where = `${line.file === '-' ? 'stdin' : line.file}:${line.lineNo}`;
        let value: unknown;
        try {
          value = JSON.parse(line.text);
        } catch {
          failed++;
          process.stderr.write(`aep ${name}: ${where}: AEP_CLI_BAD_JSON: not valid JSON (AEP-0003 §3.1: one JSON value per line)\n`);
          await out.write('null\n');
          continue;
        }
        const r = fn(value);
        for (const w of r.warnings ?? []) process.stderr.write(`aep ${name}: ${where}: warning: ${w}\n`);
        if (r.error !== undefined) {
          failed++;
          process.stderr.write(`aep ${name}: ${where}: ${r.error}\n`);
          await out.write('null\n');
          continue;
        }
        await out.write(JSON.stringify(r.out ?? null) + '\n');
      }
  } catch (err) {
    await out.flush();
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e.code === 'string' && e.syscall)
      throw new CliError('AEP_CLI_UNREADABLE', `cannot read input: ${e.code} ${e.path ?? ''}`.trim(), EXIT.USAGE);
    throw err;
  }
  await out.flush();
  if (failed > 0) {
    process.stderr.write(`aep ${name}: ${failed} of ${lines} lines could not be mapped (null lines, reasons above)\n`);
    process.exitCode = EXIT.INVALID;
  }
  return { lines, failed };
}

/** The envelope check every offline bridge runs first: the first issue's rule and message, or undefined. */
export async function envelopeProblem(): Promise<(value: unknown) => string | undefined> {
  const { validateEnvelope } = await import('@aep/protocol');
  return (value) => {
    const issues = validateEnvelope(value);
    if (issues.length === 0) return undefined;
    const first = issues[0]!;
    return `AEP_BRIDGE_EVENT_INVALID: ${first.rule}: ${first.message}${issues.length > 1 ? ` (+${issues.length - 1} more issue${issues.length > 2 ? 's' : ''})` : ''}`;
  };
}

/** `--header` values (`Name: value` or `Name=value`), merged over `base` (names are case-insensitive: a later one replaces an earlier one). */
export function parseHeaders(list: readonly string[] | undefined, base: Record<string, string> = {}): Record<string, string> {
  const out = new Map<string, [string, string]>();
  for (const [k, v] of Object.entries(base)) out.set(k.toLowerCase(), [k, v]);
  for (const h of list ?? []) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*[:=]\s*(.*)$/.exec(h);
    if (!m) throw new CliError('AEP_CLI_BAD_OPTION', '--header must be "Name: value" (or Name=value) with an HTTP header name', EXIT.USAGE);
    out.set(m[1]!.toLowerCase(), [m[1]!, m[2]!]);
  }
  return Object.fromEntries(out.values());
}

/** `OTEL_EXPORTER_OTLP_HEADERS` / `_LOGS_HEADERS` (`k=v,k2=v2`, values URL-encoded; OTel SDK configuration). */
export function otelEnvHeaders(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of [process.env['OTEL_EXPORTER_OTLP_HEADERS'], process.env['OTEL_EXPORTER_OTLP_LOGS_HEADERS']]) {
    if (!v) continue;
    for (const part of v.split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      try {
        const name = decodeURIComponent(part.slice(0, eq).trim());
        if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) out[name] = decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        /* malformed entry: ignored, as the OTel SDKs do */
      }
    }
  }
  return out;
}

/** Parses `--filter`. */
export async function parseFilter(text: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError('AEP_CLI_BAD_FILTER', '--filter is not valid JSON (an attr-match filter is a JSON object, AEP-0003 §6.1)', EXIT.USAGE);
  }
  const { compileFilter } = await import('@aep/protocol');
  const c = compileFilter(parsed);
  if (!c.ok)
    throw new CliError(
      'AEP_CLI_BAD_FILTER',
      `invalid attr-match filter (AEP-0003 §6.2, fail closed): ${c.issues.map((i) => `${i.path || '/'}: ${i.message}`).join('; ')}`,
      EXIT.USAGE,
    );
  return parsed as Record<string, unknown>;
}

/** An http(s) URL option. */
export function httpUrlOption(name: string, value: unknown): string {
  try {
    const u = new URL(String(value));
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.toString();
  } catch {
    /* below */
  }
  throw new CliError('AEP_CLI_BAD_OPTION', `${name} must be an http(s) URL`, EXIT.USAGE);
}

/** Default state file of a live bridge: one per relay + target + filter + ceiling. */
export function defaultStatePath(kind: string, relay: string, target: string, filter: unknown, capture: string): string {
  const dir = process.env['AEP_STATE_DIR'] ?? join(homedir(), '.aep');
  const strip = (u: string) => {
    const x = new URL(u);
    return `${x.protocol}//${x.host}${x.pathname}`;
  };
  const h = createHash('sha256')
    .update(`${strip(relay)}\n${strip(target)}\n${JSON.stringify(filter ?? {})}\n${capture}`)
    .digest('hex')
    .slice(0, 16);
  return join(dir, 'bridges', `${kind}-${h}.json`);
}

/** Live options shared by `aep otlp --endpoint` and `aep ce --sink`. */
export interface LiveOpts {
  relay?: string;
  token?: string;
  capture: string;
  filter?: string;
  state?: string;
  batchSize: string;
  flushMs: string;
  maxQueue: string;
  maxQueueBytes: string;
  timeout: string;
  retryMaxMs: string;
  header?: string[];
  transport: 'sse' | 'ws';
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** Adds the live options (relay, ceiling, filter, state, batching, headers). */
export function addLiveOptions(cmd: Command, batchDefault: string): Command {
  addRelayOptions(cmd);
  return cmd
    .addOption(new Option('--capture <level>', 'capture ceiling of the subscription, enforced again locally: nothing above it is sent').default('metadata'))
    .option('--filter <json>', 'attr-match filter of the subscription (AEP-0003 §6), e.g. \'{"type":["tool.*","attention.*"]}\'')
    .option(
      '--state <path>',
      'resume state file, flushed after every acknowledged batch (default: $AEP_STATE_DIR/bridges/… or ~/.aep/bridges/…, one per relay + target + filter + ceiling)',
    )
    .option('--batch-size <n>', 'most items per request', batchDefault)
    .option('--flush-ms <ms>', 'longest wait for a batch to fill', '200')
    .option(
      '--max-queue <n>',
      'events held unacknowledged before reading from the relay pauses (bounded memory; each resume re-reads the relay buffer, so keep it well above --batch-size)',
      '10000',
    )
    .option('--max-queue-bytes <n>', 'bytes of held events before reading pauses', String(32 << 20))
    .option('--timeout <ms>', 'per-request timeout', '10000')
    .option('--retry-max-ms <ms>', 'longest backoff between retries (exponential from 250 ms, with jitter)', '30000')
    .option('--header <h>', 'extra request header for the receiver, "Name: value" (repeatable; never printed)', collect)
    .addOption(new Option('--transport <t>', 'how to subscribe to the relay').choices(['sse', 'ws']).default('sse'));
}

/** Runs a live bridge from the CLI: signals stop it gracefully; coded errors map to exit codes. */
export async function runLive<T>(
  name: string,
  kind: string,
  opts: LiveOpts,
  target: string,
  make: (capture: CaptureLevel) => { map: (e: Record<string, unknown>) => { item: T | null; problem?: string }; sender: Sender<T> },
): Promise<void> {
  const relay = relayUrl(opts.relay);
  const capture = parseCeiling(opts.capture);
  const filter = await parseFilter(opts.filter);
  const batchSize = positiveInt('--batch-size', opts.batchSize);
  const flushMs = positiveInt('--flush-ms', opts.flushMs);
  const maxQueue = positiveInt('--max-queue', opts.maxQueue);
  const maxQueueBytes = positiveInt('--max-queue-bytes', opts.maxQueueBytes);
  const retryMaxMs = positiveInt('--retry-max-ms', opts.retryMaxMs);
  const statePath = opts.state ?? defaultStatePath(kind, relay, target, filter, capture);
  const { runLiveBridge, ResumeState, BridgeNodeError, displayUrl } = await import('@aep/bridges/node');
  let state: InstanceType<typeof ResumeState>;
  try {
    state = new ResumeState(statePath).load();
  } catch (err) {
    if (err instanceof BridgeNodeError) throw new CliError(err.code, err.message, EXIT.USAGE);
    throw err;
  }
  const { map, sender } = make(capture);
  const log = (line: string) => process.stderr.write(`aep ${name}: ${line}\n`);
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const held = state.size;
  log(
    `AEP_BRIDGE_STARTED: ${displayUrl(relay)} -> ${sender.target}, capture ceiling ${capture}, state ${statePath} (${held.sessions} sessions, ${held.seqless} seq-less events acknowledged before)`,
  );
  try {
    const stats = await runLiveBridge({
      relay,
      ...(opts.token ? { token: opts.token } : {}),
      ...(filter ? { filter } : {}),
      capture,
      map,
      sender,
      state,
      batchSize,
      flushMs,
      maxQueue,
      maxQueueBytes,
      retry: { initialMs: Math.min(250, retryMaxMs), maxMs: retryMaxMs },
      transport: opts.transport,
      log,
      signal: ac.signal,
    });
    log(
      `AEP_BRIDGE_STOPPED: ${stats.acknowledged} events acknowledged (${stats.delivered} delivered, ${stats.rejected} refused by the receiver, ${stats.unmappable} unmappable), ${stats.skipped} skipped as already done, ${stats.retries} retries, ${stats.pauses} pauses`,
    );
  } catch (err) {
    if (err instanceof BridgeNodeError)
      throw new CliError(err.code, err.message, err.code === 'AEP_BRIDGE_STATE' || err.code === 'AEP_BRIDGE_OPTION' ? EXIT.USAGE : EXIT.UNAVAILABLE);
    throw err;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

// ------------------------------------------------------------------------------- aep otlp

interface OtlpOpts extends LiveOpts {
  maxCapture?: string;
  serviceName?: string;
  wire?: boolean;
  endpoint?: string;
}

/** `aep otlp`: AEP events as OTLP LogRecords, offline (JSONL) or live to an OTLP/HTTP receiver (AEP-0005 §3). */
export function register(program: Command): void {
  const cmd = program
    .command('otlp')
    .description(
      'AEP events as OpenTelemetry LogRecords (AEP-0005 §3): JSONL in -> one record per line, or live from a relay to an OTLP/HTTP JSON logs receiver',
    )
    .argument('[files...]', 'JSONL inputs, offline mode (default: stdin; "-" = stdin)')
    .option('--max-capture <level>', 'exporter ceiling: an event whose capture is above it exports no payload at all (default metadata; live: --capture)')
    .option('--service-name <name>', 'resource service.name for every record (default: the event agent)')
    .option('--wire', 'offline: print each record as an OTLP/HTTP JSON ExportLogsServiceRequest instead of the pinned shape')
    .option('--endpoint <url>', 'live mode: OTLP/HTTP receiver base URL (POST {url}/v1/logs), e.g. http://127.0.0.1:4318');
  addLiveOptions(cmd, '256').addHelpText(
    'after',
    `
Offline: each input line is an AEP event; each output line is its LogRecord in the pinned shape
(AEP-0005 §3: time_unix_nano as an exact decimal string, event_name "dev.aep." + type, severity,
trace_id/span_id/flags from traceparent, aep.* attributes with aep.capture always present,
gen_ai.* data members hoisted to attributes, the rest as body; no body when nothing remains).
An event whose capture is above --max-capture exports envelope attributes only. A line that is
not a valid AEP envelope gives null and one stderr line naming the rule; the rest still map.

Live (--endpoint): subscribes to the relay at --capture (default metadata) and exports every
event, batched (--batch-size) and retried with exponential backoff (408/429/502/503/504 and
network errors; Retry-After honoured). A 400 from the receiver drops that batch (logged,
counted); any other refusal (401, 403, 404, 500, …) stops the exporter (exit 5) without dropping
anything. The state file records what the receiver acknowledged after every batch: a restart
resumes without duplicates or gaps. While the receiver is down at most --max-queue events are
held; reading pauses and resumes from the relay's buffer. Headers: --header, and
$OTEL_EXPORTER_OTLP_HEADERS. Ctrl-C / SIGTERM: the request in flight finishes, then it stops.

Exit codes: 0 ok, 1 some line could not be mapped (offline), 2 usage / unreadable / bad state
file, 5 the relay or the receiver refused the bridge.

Examples:
  aep otlp events.jsonl
  aep otlp --max-capture redacted --wire < events.jsonl
  aep otlp --relay http://127.0.0.1:8787 --endpoint http://127.0.0.1:4318 --capture metadata`,
  );
  cmd.action(
    action(async (files: string[], opts: OtlpOpts) => {
      // Live only with an explicit --endpoint: an OTEL_EXPORTER_OTLP_ENDPOINT in the environment must
      // not turn an offline conversion into an exporter.
      const endpoint = opts.endpoint;
      const maxCapture = opts.maxCapture === undefined ? undefined : parseCeiling(opts.maxCapture);
      const { toOtlpLogRecord, otlpExportRequest } = await import('@aep/bridges');
      if (endpoint === undefined) {
        const problem = await envelopeProblem();
        const o = { ...(maxCapture ? { maxCapture } : {}), ...(opts.serviceName !== undefined ? { serviceName: opts.serviceName } : {}) };
        await mapBridgeLines('otlp', files, (value) => {
          const bad = problem(value);
          if (bad !== undefined) return { out: null, error: bad };
          const r = toOtlpLogRecord(value, o);
          if (!r.ok) return { out: null, error: `${r.issue.code}: ${r.issue.message}` };
          return {
            out: opts.wire ? otlpExportRequest([r.value]) : r.value,
            warnings: r.diagnostics.filter((d) => d.rule !== 'capture.above-max').map((d) => d.message),
          };
        });
        return;
      }
      if (files.length > 0) throw new CliError('AEP_CLI_USAGE', 'live mode (--endpoint) reads the relay, not files: drop the file arguments', EXIT.USAGE);
      const url = httpUrlOption('--endpoint', endpoint);
      const timeoutMs = positiveInt('--timeout', opts.timeout);
      const headers = parseHeaders(opts.header, otelEnvHeaders());
      const { otlpHttpSender, otlpLogsUrl } = await import('@aep/bridges/node');
      const { captureRank } = await import('@aep/protocol');
      await runLive('otlp', 'otlp', opts, otlpLogsUrl(url), (capture) => {
        // One knob by default: the ceiling of the subscription is also the exporter's max_capture.
        const max: CaptureLevel = maxCapture !== undefined && captureRank(maxCapture) < captureRank(capture) ? maxCapture : capture;
        const o = { maxCapture: max, ...(opts.serviceName !== undefined ? { serviceName: opts.serviceName } : {}) };
        return {
          sender: otlpHttpSender({ endpoint: url, headers, timeoutMs }),
          map: (e) => {
            const r = toOtlpLogRecord(e, o);
            return r.ok ? { item: r.value } : { item: null, problem: `${r.issue.code}: ${r.issue.message}` };
          },
        };
      });
    }),
  );
}
