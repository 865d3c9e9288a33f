// Adapter configuration: capture ceiling and per-category overrides (AEP-0003 §9.1).
import type { CaptureLevel } from '@aep/protocol';
import { isCaptureLevel } from '@aep/protocol';
import { ADAPTER_ERRORS, AdapterError } from './errors.js';

/** One per-type capture override: `pattern` is a full type or a `category.*` prefix pattern. */
export interface CaptureOverride {
  pattern: string;
  level: CaptureLevel;
}

/** What the mapping needs to know (all pure data). */
export interface MappingConfig {
  /** Envelope `agent` and the name in synthesized prompts; default `claude-code`. */
  agent: string;
  /** Capture ceiling for every event (AEP-0003 §9.1); default `metadata`. */
  capture: CaptureLevel;
  /** Per-type overrides, most specific first wins (exact type beats prefix, longer prefix beats shorter). */
  overrides: CaptureOverride[];
  /** Home directory for the redaction pipeline's home-path step (AEP-0003 §9.4 c). */
  home?: string;
  /** Operator-declared secret values (AEP-0003 §9.4 b). */
  secretValues?: string[];
  /** PII redaction at `redacted` (AEP-0003 §9.4 d); default true. */
  pii?: boolean;
}

/** Default agent name (AEP-0003 §7.1 example identity). */
export const DEFAULT_AGENT = 'claude-code';

/** Builds a full config from partial input, applying the documented defaults. */
export function mappingConfig(input: Partial<MappingConfig> = {}): MappingConfig {
  const cfg: MappingConfig = {
    agent: input.agent ?? DEFAULT_AGENT,
    capture: input.capture ?? 'metadata',
    overrides: input.overrides ?? [],
  };
  if (input.home !== undefined) cfg.home = input.home;
  if (input.secretValues !== undefined) cfg.secretValues = input.secretValues;
  if (input.pii !== undefined) cfg.pii = input.pii;
  return cfg;
}

/**
 * Parses an override such as `attention.*=redacted` or `attention.*:redacted` (the `:` form is the
 * spelling AEP-0003 §9.1 uses). Throws `AEP_CC_CONFIG_INVALID` naming the problem.
 */
export function parseCaptureOverride(text: string): CaptureOverride {
  const m = /^\s*([a-z0-9_.*-]+)\s*[=:]\s*([a-z]+)\s*$/.exec(text);
  if (!m || !m[1] || !m[2]) {
    throw new AdapterError(
      ADAPTER_ERRORS.CONFIG_INVALID,
      `capture override "${text}" must look like "attention.*=redacted" (type or category.* pattern, then a capture level)`,
    );
  }
  const pattern = m[1];
  if (pattern.includes('*') && !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.\*$/.test(pattern)) {
    throw new AdapterError(ADAPTER_ERRORS.CONFIG_INVALID, `capture override pattern "${pattern}" may use "*" only as a final ".*" (e.g. "attention.*")`);
  }
  if (!isCaptureLevel(m[2])) {
    throw new AdapterError(ADAPTER_ERRORS.CONFIG_INVALID, `capture override "${text}": "${m[2]}" is not one of none, metadata, redacted, full`);
  }
  return { pattern, level: m[2] };
}

/** Parses a capture level option value; throws `AEP_CC_CONFIG_INVALID`. */
export function parseCaptureLevel(text: string): CaptureLevel {
  if (!isCaptureLevel(text)) {
    throw new AdapterError(ADAPTER_ERRORS.CONFIG_INVALID, `capture level "${text}" is not one of none, metadata, redacted, full`);
  }
  return text;
}

/** The capture level applied to events of `type` (exact match, then the longest prefix pattern). */
export function captureFor(cfg: MappingConfig, type: string): CaptureLevel {
  let best: CaptureOverride | undefined;
  let bestLen = -1;
  for (const o of cfg.overrides) {
    if (o.pattern === type) return o.level;
    if (o.pattern.endsWith('.*')) {
      const prefix = o.pattern.slice(0, -1);
      if (type.startsWith(prefix) && type.length > prefix.length && prefix.length > bestLen) {
        best = o;
        bestLen = prefix.length;
      }
    }
  }
  return best ? best.level : cfg.capture;
}
