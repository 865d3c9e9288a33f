// Shared test support: headless Debian chromium through playwright-core (never a downloaded
// browser), with the flags known to work on our machines. Used by the web inbox e2e tests, the
// client's browser test and the bench; lives here so no package's tests reach into another's.
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Chromium path: `AEP_CHROMIUM` or Debian's `/usr/bin/chromium`. */
export const chromiumPath = process.env['AEP_CHROMIUM'] ?? '/usr/bin/chromium';

/** The flags known to work here (one place for every browser test). */
export const chromiumArgs: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launch headless chromium (an incognito-style browser; contexts are opened per test). */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: [...chromiumArgs] });
}

/** A persistent (non-incognito) headless context on a profile directory. */
export async function launchChromiumPersistent(userDataDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath, headless: true, args: [...chromiumArgs] });
}
