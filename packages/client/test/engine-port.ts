// A recording AttentionPort for engine tests: what the engine emits, and the command handler it
// registers, driven directly (no socket needed to check what the engine decides and records).
// The relay-backed tests (attention.test.ts, conformance/test/answer-path.test.ts) cover the wire.
import type { CaptureLevel } from '@aep/protocol';
import type { AttentionPort, CommandDecision, CommandHandler, WireEvent } from '@aep/client';

/** Options of one `respond` call: the command's session, agent and extension attributes. */
export interface RespondExtra {
  session?: string;
  agent?: string;
  /** Top-level members added to the command (extension attributes such as `approvalproof`). */
  attrs?: Record<string, unknown>;
}

/** A recording port at `ceiling`; `failOn` makes `emit` throw for that event type. */
export function recordingPort(ceiling: CaptureLevel, failOn?: string) {
  const emitted: WireEvent[] = [];
  let handler: CommandHandler | undefined;
  let n = 0;
  const port: AttentionPort = {
    ceiling,
    options: { agent: 'test-agent' },
    emit: (session, type, data, attrs = {}) => {
      if (type === failOn) throw new Error('emitter closed');
      const { extensions, ...rest } = attrs;
      const e = {
        aep: '0.1',
        id: `e${++n}`,
        type,
        time: '2026-01-01T00:00:00Z',
        source: 'aep://h/agent/test-agent',
        agent: 'test-agent',
        session,
        ...rest,
        ...(extensions ?? {}),
        ...(data ? { data } : {}),
      } as WireEvent;
      emitted.push(e);
      return e;
    },
    onCommand: (_type, h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  let c = 0;
  /** Deliver a `control.attention.respond` for `subject`; returns the engine's decision (run `after` to record). */
  const respond = async (subject: string, answer: unknown, extra: RespondExtra = {}): Promise<CommandDecision> => {
    const event = {
      aep: '0.1',
      id: `c${++c}`,
      type: 'control.attention.respond',
      subject,
      time: '2026-01-01T00:00:00Z',
      source: 'aep://x/agent/ui',
      agent: extra.agent ?? 'ui',
      session: extra.session ?? 's',
      ...(extra.attrs ?? {}),
      data: { answer },
    } as WireEvent;
    if (!handler) throw new Error('no command handler registered');
    return handler({ event, raw: JSON.stringify(event) });
  };
  return { port, emitted, respond, types: () => emitted.map((e) => e.type) };
}

/** Rule ids of a decision's issues (empty when accepted). */
export const rulesOf = (d: CommandDecision): string[] => (d.status === 'rejected' ? (d.issues ?? []).map((i) => i.rule) : []);
