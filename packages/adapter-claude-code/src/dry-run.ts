// `aep claude-code map`: the events a fresh daemon would emit for one hook payload, as complete
// envelopes, contacting nothing (issue 6, item 8).
import type { MappingConfig } from './config.js';
import { parseHookInput } from './hook-input.js';
import type { EventDraft } from './mapper.js';
import { ClaudeCodeMapper } from './mapper.js';

/** Options of {@link dryRun}. */
export interface DryRunOptions {
  /** Clock for `time` and durations; default `Date.now`. */
  now?: () => number;
  /** Host part of `source` (`aep://{host}/agent/{agent}/session/{session}`); default `localhost`. */
  host?: string;
}

/**
 * Maps one hook payload with a fresh mapper (so an unknown session first gets its implicit
 * `session.started`, exactly as a freshly started daemon would emit) and returns envelopes with
 * `seq` from 0 per session. Throws `AEP_CC_HOOK_INVALID` for a malformed payload.
 */
export function dryRun(payload: unknown, cfg: MappingConfig, opts: DryRunOptions = {}): Record<string, unknown>[] {
  const hook = parseHookInput(payload);
  const now = opts.now ?? Date.now;
  const mapper = new ClaudeCodeMapper(cfg);
  const t = now();
  const result = mapper.map(hook, t);
  const drafts: EventDraft[] = [...result.events];
  if (result.attention) drafts.push(result.attention.request);
  const seqs = new Map<string, number>();
  const refs = new Map<string, string>();
  const time = new Date(t).toISOString();
  const host = opts.host ?? 'localhost';
  return drafts.map((d, i) => {
    const seq = seqs.get(d.session) ?? 0;
    seqs.set(d.session, seq + 1);
    const id = `dryrun-${String(i + 1).padStart(4, '0')}`;
    if (d.ref) refs.set(d.ref, id);
    const ev: Record<string, unknown> = {
      aep: '0.1',
      id,
      type: d.type,
      time,
      source: `aep://${host}/agent/${encodeURIComponent(cfg.agent)}/session/${encodeURIComponent(d.session)}`,
      agent: cfg.agent,
      session: d.session,
    };
    const subject = d.subjectRef ? refs.get(d.subjectRef) : d.subject;
    if (subject) ev['subject'] = subject;
    if (d.run) ev['run'] = d.run;
    ev['seq'] = seq;
    const cause = d.cause ?? (d.causeRef ? refs.get(d.causeRef) : undefined);
    if (cause) ev['cause'] = cause;
    if (d.severity && d.severity !== 'info') ev['severity'] = d.severity;
    ev['capture'] = d.capture;
    if (d.extensions) for (const [k, v] of Object.entries(d.extensions)) ev[k] = v;
    if (d.data !== undefined) ev['data'] = d.data;
    return ev;
  });
}
