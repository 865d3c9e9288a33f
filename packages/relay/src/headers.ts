// Response headers every relay answer carries (contract C9; issue 11 item 3): the inbox it serves
// cannot be framed (clickjacking of its Allow buttons), sniffed or given away by a Referer.

/** The Content-Security-Policy directives of every response. */
export const BASE_CSP = "frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

const HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': BASE_CSP,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** Headers sent on every response (a copy: callers may extend it). */
export function securityHeaders(): Record<string, string> {
  return { ...HEADERS };
}
