// The daemon's side of the relay: one authenticated EmitterConnection (AEP-0003 §3.5; it owns
// seq/epoch, reconnects, dedupes commands and re-acks byte-identically, AEP-0004 §3), seen by
// the daemon through the small Uplink interface so tests can replace it.
import { EmitterConnection } from '@aep/client/node';
import type { CaptureLevel } from '@aep/protocol';
import type { CommandHandler, EmitAttributes, WireEvent } from '@aep/client';

/** What the daemon needs of its relay connection (the real one, or a test double). */
export interface Uplink {
  emit(session: string, type: string, data: Record<string, unknown> | undefined, attrs: EmitAttributes): WireEvent;
  /** True while the relay connection is established. */
  connected(): boolean;
  /** Connection state changes (the daemon is driven by them: held hooks, connect grace). */
  onState(listener: (connected: boolean) => void): void;
  /** The handler of one command type (the types must be declared in `accepts`). */
  onCommand(type: string, handler: CommandHandler): void;
  flush(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Options of {@link relayUplink}. */
export interface RelayUplinkOptions {
  url: string;
  token?: string;
  agent: string;
  ceiling: CaptureLevel;
  /** `control.accepts`: only what the daemon honours (AEP-0004 §4.2). */
  accepts: string[];
  stateDir?: string;
  log?: (line: string) => void;
}

/** The relay connection as an {@link Uplink}. */
export function relayUplink(o: RelayUplinkOptions): Uplink {
  const eopts: ConstructorParameters<typeof EmitterConnection>[0] = {
    url: o.url,
    agent: o.agent,
    capture: o.ceiling,
    control: { accepts: o.accepts, ackWindowMs: 10_000 },
    emits: ['session', 'run', 'tool', 'attention', 'delegation', 'progress', 'control'],
  };
  if (o.token !== undefined) eopts.token = o.token;
  if (o.stateDir !== undefined) eopts.stateDir = o.stateDir;
  if (o.log) eopts.log = o.log;
  const conn = new EmitterConnection(eopts);
  return {
    emit: (session, type, data, attrs) => conn.emit(session, type, data, attrs),
    connected: () => conn.stats().connected,
    onState: (l) => {
      conn.onState(l);
    },
    onCommand: (type, h) => {
      conn.onCommand(type, h);
    },
    flush: (ms) => conn.flush(ms),
    close: async () => {
      await conn.close();
    },
  };
}
