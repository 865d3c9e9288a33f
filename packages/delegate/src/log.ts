// The decision log (issue 18 item 3): one JSON line per decision and per command result, in a
// file of mode 0600 in a 0700 directory. Structural content only: facts (facts.ts), rule ids,
// traces built from structural tokens, the answer (an option id or structural values). Never an
// approval text, a prompt, a label or a token. `aep delegate explain REQUEST_ID` reads it.
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RuleTrace } from './engine.js';
import { DelegateError } from './errors.js';
import type { FieldFacts, RequestFacts } from './facts.js';
import type { RuleAnswer } from './decide.js';

/** What the delegate did with a request (also the `via` of its `attention.routed`). */
export type Outcome = 'policy' | 'shadow' | 'ask' | 'no-match' | 'never' | 'paused' | 'rate-limited';

export interface DecisionRecord {
  type: 'decision';
  time: string;
  request: string;
  session: string;
  agent: string;
  source: string;
  kind: string;
  tool?: string;
  digest?: string;
  severity: string;
  options: string[];
  fields: FieldFacts[];
  pending_ms: number;
  engine: string;
  /** Hash of the policy that decided. */
  policy: string;
  outcome: Outcome;
  /** The rule (or grant) that decided, when one did. */
  rule?: string;
  tier?: 'deny' | 'allow';
  /** What was (or, in shadow mode, paused or rate-limited, would have been) sent. */
  answer?: RuleAnswer;
  /** Why the request was left to a person. */
  reason?: string;
  trace: RuleTrace[];
}

export interface ResultRecord {
  type: 'result';
  time: string;
  request: string;
  command: string;
  rule: string;
  status: string;
  reason?: string;
}

export type LogRecord = DecisionRecord | ResultRecord;

/** Appends records to a JSONL file (0600), rotating it to `<file>.1` past `maxBytes`. */
export class DecisionLog {
  private size = 0;

  constructor(
    readonly file: string,
    readonly maxBytes = 64 * 1024 * 1024,
  ) {
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      if (existsSync(file)) {
        chmodSync(file, 0o600);
        this.size = statSync(file).size;
      }
    } catch (err) {
      throw new DelegateError('AEP_DELEGATE_STATE', `cannot open the decision log ${file}: ${(err as Error).message}`);
    }
  }

  append(r: LogRecord): void {
    const line = JSON.stringify(r) + '\n';
    try {
      if (this.size + line.length > this.maxBytes && this.size > 0) {
        renameSync(this.file, `${this.file}.1`);
        this.size = 0;
      }
      appendFileSync(this.file, line, { mode: 0o600 });
      this.size += Buffer.byteLength(line);
    } catch (err) {
      throw new DelegateError('AEP_DELEGATE_STATE', `cannot write the decision log ${this.file}: ${(err as Error).message}`);
    }
  }
}

/** The structural facts as logged. */
export function factsRecord(
  f: RequestFacts,
  pending: number,
): Pick<DecisionRecord, 'request' | 'session' | 'agent' | 'source' | 'kind' | 'tool' | 'digest' | 'severity' | 'options' | 'fields' | 'pending_ms'> {
  return {
    request: f.id,
    session: f.session,
    agent: f.agent,
    source: f.source,
    kind: f.kind,
    ...(f.tool !== undefined ? { tool: f.tool } : {}),
    ...(f.digest !== undefined ? { digest: f.digest } : {}),
    severity: f.severity,
    options: f.options,
    fields: f.fields,
    pending_ms: pending,
  };
}

/** Every record of `request` in the log (and its rotated predecessor), oldest first. */
export function readRecords(file: string, request: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const f of [`${file}.1`, file]) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.includes(request)) continue;
      try {
        const r = JSON.parse(line) as LogRecord;
        if (r.request === request) out.push(r);
      } catch {
        /* a torn last line */
      }
    }
  }
  return out;
}

const OUTCOME_TEXT: Record<Outcome, string> = {
  policy: 'answered by rule',
  shadow: 'would have answered (shadow mode): nothing was sent',
  ask: 'left to a person by an ask rule (or a Cedar forbid)',
  'no-match': 'left to a person: no rule matched',
  never: 'left to a person: a delegate never answers this',
  paused: 'would have answered, but the delegate is paused (kill switch): nothing was sent',
  'rate-limited': 'would have answered, but the rate limit was reached: nothing was sent',
};

function answerText(a: RuleAnswer | undefined): string {
  if (!a) return '';
  if (a.option !== undefined) return `option ${a.option}`;
  return `values ${JSON.stringify(a.values)}`;
}

/** `aep delegate explain`: which rule matched and why, as lines for a terminal. */
export function explain(records: LogRecord[]): string[] {
  const decisions = records.filter((r): r is DecisionRecord => r.type === 'decision');
  const last = decisions[decisions.length - 1];
  if (!last) return [];
  const lines: string[] = [];
  lines.push(
    `request ${last.request}: ${last.kind}${last.tool !== undefined ? ` ${last.tool}` : ''} from agent ${last.agent}, session ${last.session}${last.digest ? `, approvaldigest ${last.digest}` : ''}`,
  );
  lines.push(`decided ${last.time} by the ${last.engine} engine (policy ${last.policy}), pending ${last.pending_ms} ms`);
  const head = `${OUTCOME_TEXT[last.outcome]}${last.rule !== undefined ? `: ${last.rule}` : ''}`;
  lines.push(`${head}${last.answer ? ` -> ${answerText(last.answer)}` : ''}${last.reason ? ` (${last.reason})` : ''}`);
  if (last.trace.length) {
    lines.push('rules, in the order they were tried (deny, ask, allow, then grants):');
    const w = Math.max(...last.trace.map((t) => t.rule.length));
    for (const t of last.trace) lines.push(`  ${t.tier.padEnd(6)} ${t.rule.padEnd(w)}  ${t.matched ? 'MATCH    ' : 'no match '} ${t.why}`);
  }
  for (const r of records) {
    if (r.type === 'result') lines.push(`command ${r.command} (${r.rule}): ${r.status}${r.reason ? ` ${r.reason}` : ''} at ${r.time}`);
  }
  if (decisions.length > 1) lines.push(`(${decisions.length - 1} earlier decision${decisions.length > 2 ? 's' : ''} on this request in the log)`);
  return lines;
}
