// One hook in flight, independent of the channel it came on (the Unix socket of the command-hook
// shim, or the loopback HTTP endpoint): the daemon reads the body and answers exactly once.
import type { AdapterError } from './errors.js';

/** One hook received by a transport. */
export interface HookExchange {
  /** The raw hook JSON (already within the byte limit). */
  readonly body: string;
  /** Answers the hook (the hook output Claude Code reads; `{}` = no decision). Later calls are ignored. */
  reply(output: Record<string, unknown>): void;
  /** Refuses a malformed hook (HTTP 400 with the code; the socket shim gives no decision). */
  refuse(err: AdapterError): void;
  /** Claude Code gave up on the hook (Esc, its own timeout): `cb` runs at most once, never after an answer. */
  onAbandon(cb: () => void): void;
}
