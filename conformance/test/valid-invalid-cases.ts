// Loaders for the conformance data, shared by the library and the CLI runners.
import { readFileSync, readdirSync } from 'node:fs';

const dir = new URL('../', import.meta.url);

/** One invalid case of conformance/invalid/cases.json. */
export interface InvalidCase {
  name: string;
  rule: string;
  description: string;
  /** JSON values, one per line. */
  events?: unknown[];
  /** Raw JSONL lines (framing cases, CLI only). */
  lines?: string[];
  /** Judge with emitter strictness. */
  emitter?: boolean;
  via?: 'cli';
}

/** Every invalid case, in file order. */
export function loadCases(): InvalidCase[] {
  return (JSON.parse(readFileSync(new URL('invalid/cases.json', dir), 'utf8')) as { cases: InvalidCase[] }).cases;
}

/** File names of the valid corpus (conformance/valid/*.jsonl), sorted. */
export function validFiles(): string[] {
  return readdirSync(new URL('valid/', dir))
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
}

/** The events of one valid corpus file. */
export function readValid(name: string): unknown[] {
  return readFileSync(new URL(`valid/${name}`, dir), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}
