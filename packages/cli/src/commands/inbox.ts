import type { Command } from 'commander';
import { Option } from 'commander';
import type { PendingAttention } from '@aep/client';
import { action } from '../util/errors.js';
import { addRelayOptions, mapClientError, positiveInt, relayUrl } from '../util/relay.js';
import { selfCommand } from '../util/self.js';

interface InboxOpts {
  relay?: string;
  token?: string;
  agent?: string;
  session?: string;
  capture?: 'none' | 'metadata' | 'redacted' | 'full';
  json?: boolean;
  timeout: string;
}

/** `aep inbox`: pending attention requests across agents and sessions, oldest first. */
export function register(program: Command): void {
  const cmd = program
    .command('inbox')
    .description('list pending attention requests across all agents and sessions, oldest first, with provenance')
    .option('--agent <name>', 'only requests of this agent')
    .option('--session <id>', 'only requests of this session')
    .addOption(new Option('--capture <level>', 'read at this capture ceiling (default: as stored)').choices(['none', 'metadata', 'redacted', 'full']))
    .option('--json', 'one JSON object per pending request (the request event plus provenance and its approval facts)')
    .option('--timeout <ms>', 'bound on reading the relay', '15000')
    .addHelpText(
      'after',
      `
Reads the relay's replay once (SSE, from=all, live=0, filter type=attention.*) and folds the
lifecycle: a request is pending until its attention.resolved or attention.timeout. Bounded by
what the relay still holds. Every prompt is printed complete (every line; control, bidi and
zero-width characters made visible, never interpreted). A permission request shows what will
run, each option with what it does, and, when the complete text reached this terminal, its
approval digest and the exact command that allows it; otherwise it says Allow is not offered
here. A request whose agent is gone (the relay's roster lists it offline) says "agent offline
since TIME" and offers no answer: it cannot reach the agent until that agent comes back. A
request already answered (not yet resolved) shows the recorded answer, as far as your capture
shows it, and who answered from where. Answer with "aep answer ID" (interactive) or "aep respond
ID …". --json adds "offline" {since, agent, source} and "answer" {event, by, from} when they apply.
Exit codes: 0 ok, 2 usage, 3 token refused (AEP_CLI_RELAY_REFUSED), 5 relay unreachable.`,
    );
  addRelayOptions(cmd).action(
    action(async (opts: InboxOpts) => {
      const url = relayUrl(opts.relay);
      const timeoutMs = positiveInt('--timeout', opts.timeout);
      const [{ listPending }, render, { approvalView }] = await Promise.all([import('@aep/client/node'), import('../util/render.js'), import('@aep/protocol')]);
      let pending: PendingAttention[];
      try {
        pending = await listPending({
          url,
          ...(opts.token ? { token: opts.token } : {}),
          ...(opts.capture ? { ceiling: opts.capture } : {}),
          timeoutMs,
          filter: { ...(opts.agent ? { agent: opts.agent } : {}), ...(opts.session ? { session: opts.session } : {}) },
        });
      } catch (err) {
        mapClientError(err, url);
      }
      const facts = await import('../util/request-facts.js');
      const token = opts.token;
      const [offline, commands] =
        pending.length === 0 ? [undefined, new Map()] : await Promise.all([facts.offlineRequests(url, token), facts.answerCommands(url, token, pending)]);
      const offlineOf = (p: PendingAttention) => offline?.get(facts.requestKey(p.session, p.id));
      const commandOf = (p: PendingAttention) => (typeof p.answeredEvent?.cause === 'string' ? commands.get(p.answeredEvent.cause) : undefined);
      if (opts.json) {
        for (const p of pending) {
          const o = offlineOf(p);
          const a = p.answeredEvent;
          const cmd = commandOf(p);
          process.stdout.write(
            JSON.stringify({
              id: p.id,
              agent: p.agent,
              session: p.session,
              source: p.source,
              time: p.time,
              capture: p.capture,
              answered: p.answered,
              kind: p.data['kind'],
              approval: render.approvalJson(approvalView(p.event)),
              ...(o ? { offline: { since: o.since, agent: o.agent, source: o.source } } : {}),
              ...(a ? { answer: { event: a, ...(cmd ? { by: cmd.agent, from: cmd.source } : {}) } } : {}),
              event: p.event,
            }) + '\n',
          );
        }
        return;
      }
      if (pending.length === 0) {
        process.stdout.write('no pending attention requests\n');
        return;
      }
      const aep = selfCommand();
      const gone = pending.filter((p) => offlineOf(p) !== undefined).length;
      process.stdout.write(
        `${pending.length} pending attention request${pending.length === 1 ? '' : 's'} (oldest first)${gone ? `, ${gone} of them from an agent that is offline (not answerable now)` : ''}\n`,
      );
      for (const p of pending) {
        const o = offlineOf(p);
        const cmd = commandOf(p);
        process.stdout.write(
          render.renderRequest(p, { aep, hints: true, fields: false, ...(o ? { offline: o } : {}), ...(cmd ? { command: cmd } : {}) }) + '\n',
        );
      }
    }),
  );
}
