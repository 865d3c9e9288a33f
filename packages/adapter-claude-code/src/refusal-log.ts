// Refusals are logged with their code (issue 11 item 5), but a web page or a flood must not be
// able to fill the log: one line per code and channel per second, with a count of the ones held back.

/** A rate-limited log of refusals. */
export class RefusalLog {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
    private readonly everyMs = 1_000,
  ) {}

  /**
   * Logs `aep claude-code: CODE: message`, unless the same code (on the same channel) was logged
   * less than a second ago.
   */
  note(code: string, message: string, channel = ''): void {
    const t = this.now();
    const key = `${channel}\n${code}`;
    const prev = this.last.get(key);
    if (prev && t - prev.at < this.everyMs) {
      prev.held += 1;
      return;
    }
    const more = prev && prev.held > 0 ? ` (${prev.held} more since the last line)` : '';
    this.last.set(key, { at: t, held: 0 });
    this.log(`aep claude-code: ${code}: ${message}${more}`);
  }
}
