/**
 * Exit codes shared by every `aep` command. Pinned by test/exit-codes.test.ts (numbers, the
 * table in docs/cli.md and the code table in ./codes.ts against docs/errors.md). Never reuse a
 * number for another meaning.
 */
export const EXIT = {
  /** Success: everything valid / accepted. */
  OK: 0,
  /** The input was read but something in it is invalid (validate, form validate). */
  INVALID: 1,
  /** Usage error, unreadable input, bad option value: the person can fix the command line. */
  USAGE: 2,
  /**
   * Refused: the target rejected the command, the relay refused it or the credentials (wrong
   * token, missing scope, no-route), or aep itself refused to allow what the person could not
   * see in full (docs/decisions.md "CLI (issues 11, 12, 14)").
   */
  REJECTED: 3,
  /** No acknowledgement arrived within the window (respond, cancel, pause, resume). */
  NO_ACK: 4,
  /** A required service is unavailable (relay unreachable, port in use, store locked). */
  UNAVAILABLE: 5,
  /**
   * An unexpected fault inside aep (a bug, never the person's mistake): sysexits.h EX_SOFTWARE,
   * far from the small numbers above so it cannot be mistaken for one of them.
   */
  INTERNAL: 70,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
