// Content handling at a capture level (AEP-0003 §9.1-9.5): digests of the original content, and
// free text / structured values passed through the §9.4 redaction pipeline at `redacted`.
import type { CaptureLevel } from '@aep/protocol';
import { captureRank, digest, redact, redactValue } from '@aep/protocol';
import type { MappingConfig } from './config.js';

/** True when `level` admits `redacted`-gated free text. */
export function textAllowed(level: CaptureLevel): boolean {
  return captureRank(level) >= captureRank('redacted');
}

/** True when `level` admits `full`-gated verbatim content. */
export function fullAllowed(level: CaptureLevel): boolean {
  return level === 'full';
}

/** Redaction options from the config (AEP-0003 §9.4 b-d). */
function redactOpts(cfg: MappingConfig): { home?: string; secretValues?: string[]; pii?: boolean } {
  const o: { home?: string; secretValues?: string[]; pii?: boolean } = {};
  if (cfg.home !== undefined) o.home = cfg.home;
  if (cfg.secretValues !== undefined) o.secretValues = cfg.secretValues;
  if (cfg.pii !== undefined) o.pii = cfg.pii;
  return o;
}

/**
 * Free text for a `redacted`-gated field at `level`: undefined below `redacted`, pipeline output
 * at `redacted`, the original at `full` (AEP-0002 §5.1 rule 2).
 */
export function gatedText(cfg: MappingConfig, level: CaptureLevel, text: string): string | undefined {
  if (!textAllowed(level)) return undefined;
  return level === 'full' ? text : redact(text, redactOpts(cfg));
}

/** Text shown to humans in a `[metadata*]` field: real (redacted) text at `redacted`+, else the placeholder. */
export function labelText(cfg: MappingConfig, level: CaptureLevel, text: string, placeholder: string): string {
  return gatedText(cfg, level, text) ?? placeholder;
}

/** A structured value through the pipeline (AEP-0003 §9.4 structured hardening). */
export function gatedValue(cfg: MappingConfig, level: CaptureLevel, value: unknown): unknown {
  if (!textAllowed(level)) return undefined;
  return level === 'full' ? value : redactValue(value, redactOpts(cfg));
}

/** §9.3 digest of the ORIGINAL content (computed before any redaction). */
export function contentDigest(value: unknown): string {
  return digest(value);
}
