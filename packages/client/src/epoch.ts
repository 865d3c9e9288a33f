// Epoch allocation (AEP-0001 §7.2): never reuse an epoch of a session after a restart.
import { mkdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Allocate this process's epoch. With a state directory: a durable counter per agent
 * (`epoch-{agent}.json`), read, incremented, fsynced and renamed into place before use, (a corrupt file falls back
 * to the wall-clock seed). Without one: the wall clock in milliseconds
 * (a monotonic seed, as AEP-0001 §7.2 allows; epochs may jump).
 */
export function allocateEpoch(agent: string, stateDir: string | undefined): number {
  if (!stateDir) return Date.now();
  mkdirSync(stateDir, { recursive: true });
  const name = `epoch-${agent.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
  const file = join(stateDir, name);
  let epoch = 0;
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    /* missing: first run, epoch 0 */
  }
  if (text !== undefined) {
    let parsed: { epoch?: unknown } = {};
    try {
      parsed = JSON.parse(text) as { epoch?: unknown };
    } catch {
      /* corrupt: handled below */
    }
    // A corrupt file must neither block the emitter nor risk reusing an epoch: fall back to the
    // wall-clock seed, which is above any counter value this file could have held.
    epoch = typeof parsed.epoch === 'number' && Number.isSafeInteger(parsed.epoch) && parsed.epoch >= 0 ? parsed.epoch + 1 : Date.now();
  }
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ epoch }) + '\n');
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  return epoch;
}
