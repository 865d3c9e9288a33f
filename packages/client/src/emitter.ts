// Emitter connection over the WebSocket binding (AEP-0003 §3.5, §4; AEP-0004 §5.3).
import type { CommandHandler, EmitAttributes, EmitterOptions, EmitterStats, WireEvent } from './types.js';

/**
 * One duplex connection to a relay as an emitter: sends `hello` (role `emitter`, identity,
 * `capabilities.control`), assigns `seq` per session and a monotonic `epoch`, claims sessions
 * by emitting into them (and re-claims them after a reconnect), reconnects with backoff,
 * buffers while disconnected (bounded, drops debug/info first, counted), and receives commands
 * (dedupe on `(source, id)`, one recorded ack per command, byte-identical re-ack).
 */
export class EmitterConnection {
  /** The epoch used for every session of this connection (AEP-0001 §7.2). */
  readonly epoch: number = 0;
  constructor(readonly options: EmitterOptions) {}
  /** Open the connection and resolve once the relay's `hello` arrived (or reject after `timeoutMs`, default 5 000). Emitting before that is allowed (buffered). */
  static async connect(options: EmitterOptions & { timeoutMs?: number }): Promise<EmitterConnection> { void options; throw new Error('not implemented'); }
  /** Source URI of a session's events. */
  sourceFor(session: string | undefined): string { void session; return ''; }
  /**
   * Build, sequence and send one event (buffered while disconnected; never blocks). `session`
   * is `null` for agent-scoped types (`agent.*`). Returns the event as sent (after the capture
   * ceiling was applied).
   */
  emit(session: string | null, type: string, data?: Record<string, unknown>, attrs?: EmitAttributes): WireEvent { void session; void type; void data; void attrs; throw new Error('not implemented'); }
  /** Same as `emit`, also returning the exact serialized bytes sent. */
  emitRaw(session: string | null, type: string, data?: Record<string, unknown>, attrs?: EmitAttributes): { event: WireEvent; raw: string } { void session; void type; void data; void attrs; throw new Error('not implemented'); }
  /**
   * Register the handler for a command type (one per type; later calls replace). Types in
   * `options.control.accepts` with no handler are nacked `unsupported`; undeclared types too.
   * Returns an unregister function.
   */
  onCommand(type: string, handler: CommandHandler): () => void { void type; void handler; return () => {}; }
  /** Resolves true when everything buffered has been written, false after `timeoutMs` (default 5 000). */
  async flush(timeoutMs?: number): Promise<boolean> { void timeoutMs; return false; }
  /** Counters. */
  stats(): EmitterStats { return { connected: false, buffered: 0, dropped: 0, reconnects: 0, commands: 0 }; }
  /** Flush (bounded), then close. Idempotent. */
  async close(): Promise<void> {}
}
