/**
 * Exit codes shared by every `aep` command. Pinned by test/exit-codes.test.ts and documented in
 * docs/cli.md. Never reuse a number for another meaning.
 */
export const EXIT = {
  /** Success: everything valid / accepted. */
  OK: 0,
  /** The input was read but something in it is invalid (validate, form validate). */
  INVALID: 1,
  /** Usage error, unreadable input, bad option value. */
  USAGE: 2,
  /** A command was rejected by its target (respond). */
  REJECTED: 3,
  /** No acknowledgement arrived within the window (respond). */
  NO_ACK: 4,
  /** Could not reach a required service (relay unreachable). */
  UNAVAILABLE: 5,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
