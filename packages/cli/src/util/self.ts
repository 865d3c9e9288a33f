// How to print an `aep …` hint that runs as printed (issue 14 item 2): from a global install the
// command is `aep`; from a clone it is `npx aep` (the workspace links node_modules/.bin/aep, which
// is not on the shell's PATH); anything else gets the absolute path of this executable.
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/cli/bin/aep.js: the executable npm links as `aep` (locally and globally). */
const SHIM = fileURLToPath(new URL('../../bin/aep.js', import.meta.url));

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function isInside(dir: string, p: string): boolean {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

let cached: string | undefined;

/**
 * The command prefix that starts this same aep from the person's shell: `aep` when an `aep` on
 * PATH resolves to this executable (npm's per-script `node_modules/.bin` entries are skipped:
 * `npm start` adds them, the person's shell does not have them), `npx aep` when the shell's
 * directory (`INIT_CWD` under npm, else the cwd) is inside the clone that links this package,
 * else `node /absolute/path/to/aep.js`. `AEP_SELF_COMMAND` overrides (set by `aep up` for its
 * demo child so both print the same hints).
 */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string {
  const override = env['AEP_SELF_COMMAND'];
  if (override !== undefined && /^[A-Za-z0-9 ._/@:'"-]{1,300}$/.test(override)) return override;
  if (cached !== undefined && env === process.env) return cached;
  const mine = real(SHIM);
  let out: string | undefined;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (!dir || /[\\/]node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const candidate = join(dir, 'aep');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    if (mine !== undefined && real(candidate) === mine) out = 'aep';
    break; // the first aep on PATH is the one the shell runs: ours or not
  }
  if (out === undefined && mine !== undefined) {
    // The clone: the nearest ancestor whose node_modules/.bin/aep is this executable.
    const shellDir = env['INIT_CWD'] ?? process.cwd();
    for (let d = dirname(dirname(dirname(mine))); d !== dirname(d); d = dirname(d)) {
      const linked = join(d, 'node_modules', '.bin', 'aep');
      if (existsSync(linked) && real(linked) === mine) {
        if (isInside(d, shellDir)) out = 'npx aep';
        break;
      }
    }
  }
  out ??= `node ${quote(mine ?? SHIM)}`;
  if (env === process.env) cached = out;
  return out;
}

/** POSIX-shell quoting of one word (only when needed). */
export function quote(word: string): string {
  return /^[A-Za-z0-9._/@:=+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
