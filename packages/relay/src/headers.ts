// Response headers every relay answer carries (static files, API, raw refusals).

/** Headers sent on every response. */
export function securityHeaders(): Record<string, string> {
  return {};
}
