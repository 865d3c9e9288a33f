// Test support: headless Debian chromium through playwright-core (never a downloaded browser),
// and small helpers to feed a real relay. Shared by the e2e tests and the bench.
import type { Browser, BrowserContext } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../../test/support/cli.js';
import { launchChromium, launchChromiumPersistent } from '../../../../test/support/browser.js';

/** Where screenshots go (gitignored). */
export const resultsDir = join(repoRoot, 'test-results', 'web');

/** Launch headless chromium with the flags known to work here. */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(resultsDir, { recursive: true });
  return launchChromium();
}

/** POST events to the relay as NDJSON (one batch). */
export async function postEvents(relayUrl: string, token: string, events: readonly object[]): Promise<void> {
  const res = await fetch(`${relayUrl}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-ndjson', 'AEP-Version': '0.1', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: events.map((e) => JSON.stringify(e)).join('\n') + '\n',
  });
  if (res.status !== 202) throw new Error(`relay answered ${res.status}: ${await res.text()}`);
}

let counter = 0;
/** A ULID-shaped unique id for test events (26 Crockford chars). */
export function testId(prefix = '01TEST'): string {
  const n = (counter++)
    .toString(32)
    .toUpperCase()
    .replace(/[ILOU]/g, 'X');
  const rand = Math.random()
    .toString(32)
    .slice(2)
    .toUpperCase()
    .replace(/[ILOU]/g, 'Z');
  return (prefix + rand + n + '00000000000000000000000000').slice(0, 26);
}

/**
 * A persistent (non-incognito) headless chromium context: Chromium reports an incognito profile
 * as not installable and has no Push API there, so the install and push tests need a real
 * profile (a fresh temporary directory each time).
 */
export async function launchPersistent(userDataDir: string): Promise<BrowserContext> {
  mkdirSync(resultsDir, { recursive: true });
  return launchChromiumPersistent(userDataDir);
}
