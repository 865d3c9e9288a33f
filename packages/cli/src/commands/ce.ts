import type { Command } from 'commander';
import { Option } from 'commander';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addLiveOptions, envelopeProblem, httpUrlOption, mapBridgeLines, parseHeaders, runLive } from './otlp.js';
import type { LiveOpts } from './otlp.js';
import { positiveInt, relayUrl } from '../util/relay.js';

interface ForwardOpts extends LiveOpts {
  sink?: string;
  mode: 'structured' | 'batch';
}

/** `aep ce`: the CloudEvents bridge (AEP-0005 §1-2): encode, decode, forward live, receive. */
export function register(program: Command): void {
  const ce = program
    .command('ce')
    .description(
      'CloudEvents 1.0 bridge (AEP-0005 §1-2): `ce encode`/`ce decode` JSONL offline, `ce --sink URL` forwards the relay stream, `ce serve` ingests CloudEvents into a relay',
    )
    .option('--sink <url>', 'forward the relay stream to this CloudEvents HTTP sink (structured mode: application/cloudevents+json)')
    .addOption(
      new Option('--mode <mode>', 'structured: one event per request; batch: application/cloudevents-batch+json')
        .choices(['structured', 'batch'])
        .default('structured'),
    );
  addLiveOptions(ce, '64').addHelpText(
    'after',
    `
Forwarding (--sink): subscribes to the relay at --capture (default metadata) and POSTs every
event as a CloudEvent (CE HTTP binding, structured content mode), in order. Retries with
exponential backoff (408/429/502/503/504 and network errors); a 400 drops that event (logged);
any other refusal stops the forwarder (exit 5) without dropping anything. The state file records
what the sink acknowledged: a restart resumes without duplicates or gaps. While the sink is
down at most --max-queue events are held; reading pauses and resumes from the relay's buffer.

Exit codes: 0 stopped by a signal, 2 usage / bad state file, 5 the relay or the sink refused.

Examples:
  aep ce encode events.jsonl > cloudevents.jsonl
  aep ce decode cloudevents.jsonl
  aep ce --relay http://127.0.0.1:8787 --sink http://127.0.0.1:9000/events
  aep ce serve --port 8788 --relay http://127.0.0.1:8787`,
  );
  ce.action(
    action(async (opts: ForwardOpts, cmd: Command) => {
      if (opts.sink === undefined) {
        cmd.outputHelp({ error: true });
        throw new CliError('AEP_CLI_USAGE', 'give a subcommand (encode, decode, serve) or --sink URL to forward the relay stream', EXIT.USAGE);
      }
      const sink = httpUrlOption('--sink', opts.sink);
      const timeoutMs = positiveInt('--timeout', opts.timeout);
      const headers = parseHeaders(opts.header);
      const { encodeCloudEvent } = await import('@aep/bridges');
      const { ceHttpSender } = await import('@aep/bridges/node');
      await runLive('ce', `ce-${opts.mode}`, opts, sink, () => ({
        sender: ceHttpSender({ sink, headers, timeoutMs, mode: opts.mode }),
        map: (e) => {
          const r = encodeCloudEvent(e);
          if (!r.ok) return { item: null, problem: `${r.issue.code}: ${r.issue.message}` };
          // An extension CloudEvents cannot carry is dropped; say so, the rest still goes.
          for (const d of r.diagnostics) process.stderr.write(`aep ce: warning: event ${JSON.stringify(String(e['id']).slice(0, 64))}: ${d.message}\n`);
          return { item: r.value };
        },
      }));
    }),
  );

  ce.command('encode')
    .description('AEP events -> CloudEvents 1.0 JSON, structured mode (AEP-0005 §1): one line per line')
    .argument('[files...]', 'JSONL inputs (default: stdin; "-" = stdin)')
    .addHelpText(
      'after',
      `
Each input line is an AEP event; each output line its CloudEvent: specversion "1.0", type
"dev.aep." + type, id/source/subject/time/data verbatim, the other attributes as aep* extensions
(aepversion, aepagentid, aepsessionid, aeprunid, aepstep, aepsequence, aepepoch, aepcausationid,
aepseverity, aepcapture), traceparent unprefixed, extension attributes under their own names;
datacontenttype only with data; no defaults materialized. An extension named like an attribute
the mapping writes is dropped with a warning (ce.reserved-name). A line that is not a valid AEP
envelope gives null and one stderr line naming the rule; the rest still map.

Exit codes: 0 ok, 1 some line could not be mapped, 2 usage / unreadable input.

Examples:
  aep ce encode events.jsonl
  aep tail --json --count 10 | aep ce encode`,
    )
    .action(
      action(async (files: string[]) => {
        const { encodeCloudEvent } = await import('@aep/bridges');
        const problem = await envelopeProblem();
        await mapBridgeLines('ce encode', files, (value) => {
          const bad = problem(value);
          if (bad !== undefined) return { out: null, error: bad };
          const r = encodeCloudEvent(value);
          if (!r.ok) return { out: null, error: `${r.issue.code}: ${r.issue.message}` };
          return { out: r.value, warnings: r.diagnostics.map((d) => d.message) };
        });
      }),
    );

  ce.command('decode')
    .description('CloudEvents 1.0 JSON -> AEP events (AEP-0005 §2): one line per line, null for foreign types')
    .argument('[files...]', 'JSONL inputs, one structured CloudEvent per line (default: stdin; "-" = stdin)')
    .addHelpText(
      'after',
      `
Only CloudEvents whose type starts with dev.aep. are in scope; any other type gives null (with a
warning: lifting foreign events is an adapter's job). The inverse of "ce encode": drops
specversion/datacontenttype, strips dev.aep., reverses the aep* table, copies the rest. Legal
extensions are kept as AEP extension attributes (aepfuture, acmeregion, …); an illegal name
(aep_bad), a name spelled like a core AEP attribute (session, seq, capture, …) or a non-scalar
value is dropped with a warning naming the rule, and never sets a core attribute; the rest still
maps. A line that is not a CloudEvent, or whose AEP event fails the envelope, gives null and one
stderr line naming the rule.

Exit codes: 0 ok, 1 some line could not be mapped, 2 usage / unreadable input.

Examples:
  aep ce decode cloudevents.jsonl | aep validate`,
    )
    .action(
      action(async (files: string[]) => {
        const { decodeCloudEvent } = await import('@aep/bridges');
        const problem = await envelopeProblem();
        await mapBridgeLines('ce decode', files, (value) => {
          const r = decodeCloudEvent(value);
          if (!r.ok) return { out: null, error: `${r.issue.code}: ${r.issue.message}` };
          const warnings = r.diagnostics.map((d) => d.message);
          if (r.value === null) return { out: null, warnings };
          const bad = problem(r.value);
          if (bad !== undefined) return { out: null, error: bad, warnings };
          return { out: r.value, warnings };
        });
      }),
    );

  const serve = ce
    .command('serve')
    .description('receive CloudEvents over HTTP (structured and batched modes) and ingest the AEP events they carry into a relay')
    .option('--port <n>', 'TCP port (0 picks a free one)', '8788')
    .option('--host <addr>', 'interface to bind', '127.0.0.1')
    .option('--max-body <n>', 'largest request body in bytes (413 above)', String(1 << 20))
    .option('--max-batch <n>', 'most events in one batch (413 above)', '500')
    .addHelpText(
      'after',
      `
The relay is the --relay URL of "aep ce" (default $AEP_RELAY or http://127.0.0.1:8787; it may
be given after "serve" too): the events are POSTed to its /events.

POST / (or /ce) with Content-Type application/cloudevents+json (one event) or
application/cloudevents-batch+json (a JSON array). Each CloudEvent must be AEP-typed (dev.aep.*)
and carry a valid AEP envelope; the events are ingested with one POST /events (a batch is all or
nothing). The caller's Authorization header is passed to the relay unchanged: the relay's token
and scopes decide. Answers 202 {"accepted":N,"diagnostics":[…]} (dropped attributes), or
{"error":CODE,"detail":…} with a stable code: AEP_CE_UNSUPPORTED_MODE 415 (binary mode, other
types), AEP_CE_BAD_JSON 400, AEP_CE_INVALID 400 (with rule and, in a batch, index),
AEP_CE_OUT_OF_SCOPE 400 (foreign type), AEP_CE_TOO_LARGE 413, AEP_CE_RELAY_REFUSED (the relay's
status), AEP_CE_RELAY_UNAVAILABLE 502/503 (retry), AEP_CE_FORBIDDEN_HOST 403.
Prints "AEP CloudEvents receiver listening on http://HOST:PORT". Ctrl-C stops.

Exit codes: 2 usage, 5 cannot listen.

Examples:
  aep ce serve --relay http://127.0.0.1:8787
  curl -H 'Content-Type: application/cloudevents+json' -H "Authorization: Bearer $AEP_TOKEN" \\
       --data @event.ce.json http://127.0.0.1:8788/`,
    );
  serve.action(
    action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ port: string; host: string; maxBody: string; maxBatch: string; relay?: string }>();
      const relay = relayUrl(opts.relay);
      const port = Number(opts.port);
      if (!Number.isSafeInteger(port) || port < 0 || port > 65535)
        throw new CliError('AEP_CLI_BAD_OPTION', `--port must be 0-65535, got "${opts.port}"`, EXIT.USAGE);
      const maxBodyBytes = positiveInt('--max-body', opts.maxBody);
      const maxBatch = positiveInt('--max-batch', opts.maxBatch);
      const { startCeReceiver } = await import('@aep/bridges/node');
      let receiver: Awaited<ReturnType<typeof startCeReceiver>>;
      try {
        receiver = await startCeReceiver({ relay, host: opts.host, port, maxBodyBytes, maxBatch, log: (l) => process.stderr.write(`aep ce serve: ${l}\n`) });
      } catch (err) {
        throw new CliError(
          'AEP_CLI_LISTEN_FAILED',
          `cannot listen on ${opts.host}:${opts.port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          EXIT.UNAVAILABLE,
        );
      }
      process.stdout.write(`AEP CloudEvents receiver listening on ${receiver.url}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await receiver.close();
    }),
  );
}
