// Control sender (AEP-0004 §5.4).
import type { CancelInput, CommandResult, CommandSenderOptions, RespondInput, WireEvent } from './types.js';

/**
 * Sends commands on an authenticated WebSocket and waits for their ack: subscribes to the
 * target session's acks before sending, retries silently-unacked commands with the identical
 * envelope, reports `accepted` / `rejected` (reason, issues) / `refused` (relay error frame) /
 * `no-ack` (window passed).
 */
export class CommandSender {
  constructor(readonly options: CommandSenderOptions) {}
  /** Connect and complete `hello`; rejects with `ClientError('AEP_CLIENT_UNREACHABLE')` when the relay cannot be reached. */
  static async connect(options: CommandSenderOptions): Promise<CommandSender> { void options; throw new Error('not implemented'); }
  /** Build a `control.attention.respond` (subject = cause = request id) and send it. */
  async respond(input: RespondInput): Promise<CommandResult> { void input; throw new Error('not implemented'); }
  /** Build a `control.cancel` and send it. */
  async cancel(input: CancelInput): Promise<CommandResult> { void input; throw new Error('not implemented'); }
  /** Send any prebuilt command envelope (no `seq`), retrying it byte-identically. */
  async send(command: WireEvent): Promise<CommandResult> { void command; throw new Error('not implemented'); }
  /** Close the socket. Idempotent. */
  async close(): Promise<void> {}
}
