// Newline framing of the MCP stdio transport (MCP 2025-11-25 "Transports: stdio": one JSON-RPC
// message per line, no embedded newlines). The proxy forwards every line it does not intercept
// byte-for-byte, so lines are kept as the exact bytes received, terminator included.

/**
 * Splits a byte stream into lines. Each emitted line is the exact byte sequence received,
 * including its `\n` (and a preceding `\r`, if any). A trailing fragment without `\n` is emitted
 * unchanged by {@link LineSplitter.end}. Bounded: a line longer than `maxLineBytes` is passed on
 * in pieces (never parsed, never buffered without limit).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private oversize = false;

  constructor(
    private readonly onLine: (line: Buffer, parseable: boolean) => void,
    private readonly maxLineBytes = 16 * 1024 * 1024,
  ) {}

  /** Feed a chunk. */
  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl + 1);
      if (this.parts.length === 0 && !this.oversize) {
        this.onLine(piece, true);
      } else {
        this.parts.push(piece);
        const whole = Buffer.concat(this.parts);
        const parseable = !this.oversize;
        this.parts = [];
        this.size = 0;
        this.oversize = false;
        this.onLine(whole, parseable);
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.parts.push(Buffer.from(rest));
      this.size += rest.length;
      if (this.size > this.maxLineBytes) {
        // Too long to hold: forward what we have unparsed; the rest of the line follows as is.
        const whole = Buffer.concat(this.parts);
        this.parts = [];
        this.size = 0;
        this.oversize = true;
        this.onLine(whole, false);
      }
    }
  }

  /** Flush a final line that had no terminator. */
  end(): void {
    if (this.parts.length > 0) {
      const whole = Buffer.concat(this.parts);
      const parseable = !this.oversize;
      this.parts = [];
      this.size = 0;
      this.onLine(whole, parseable);
    }
  }
}
