// The machine's name for default `source` URIs and `hello.identity.instance` (Node entry only).
import { hostname } from 'node:os';

/** Host name sanitized to URI-safe characters. */
export function hostName(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '-') || 'localhost';
}
