// V8's young-generation collector on small machines (issue 19; docs/benchmarks.md, "2026-12-07
// (fourth stop)"). Node gives V8 a pool of 4 worker threads whatever the machine, and V8 splits
// each scavenge into up to 5 tasks. On 2 CPUs shared with a writer thread and the load, the tasks
// wait for a CPU and the main thread waits for the tasks: one task per scavenge measured shorter
// pauses there (median 1.2-1.75 -> 0.9-1.2 ms under fan-out) and a lower fan-out tail. Like a JVM
// choosing its serial collector on a small machine, the process owner (the `aep` CLI, the bench
// server) calls `tuneGc()`; the library itself never changes a process-wide V8 setting.
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { RelayOptionError } from './options.js';

/** How scavenges run: `single` (one task) or `parallel` (V8's default). */
export type ScavengeMode = 'single' | 'parallel';

/** The environment variable that overrides the choice: `auto` (default), `single` or `parallel`. */
export const SCAVENGE_ENV = 'AEP_RELAY_SCAVENGE';

/** CPUs at or below which `auto` chooses one task per scavenge (the machines it was measured on). */
export const SMALL_MACHINE_CPUS = 2;

/** The mode for `cpus` CPUs and the override `value` (unset or empty: `auto`). Throws on anything else. */
export function scavengeMode(cpus: number, value: string | undefined): ScavengeMode {
  const v = value === undefined || value === '' ? 'auto' : value;
  if (v === 'single' || v === 'parallel') return v;
  if (v !== 'auto') throw new RelayOptionError(`${SCAVENGE_ENV} must be auto, single or parallel, got "${v.slice(0, 40)}"`);
  return cpus <= SMALL_MACHINE_CPUS ? 'single' : 'parallel';
}

/**
 * Apply the scavenge mode to this process (all its isolates, the store's writer thread included)
 * and return it. V8 reads the flag at every scavenge, so it takes effect after start-up too.
 * `auto` on a larger machine changes nothing: V8 flags the process was started with (say
 * `--single-threaded-gc` in NODE_OPTIONS) stay as they are; only an explicit `parallel` sets it.
 */
export function tuneGc(env: NodeJS.ProcessEnv = process.env, cpus: number = availableParallelism()): ScavengeMode {
  const mode = scavengeMode(cpus, env[SCAVENGE_ENV]);
  if (mode === 'single') setFlagsFromString('--no-parallel-scavenge');
  else if (env[SCAVENGE_ENV] === 'parallel') setFlagsFromString('--parallel-scavenge');
  return mode;
}
