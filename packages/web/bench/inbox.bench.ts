// Inbox bench (issue 7): time until 1,000 pending requests are rendered and interactive in
// headless chromium, next to a baseline measured in the same run (the same page with an empty
// inbox: load, token, stream connected), and the gzipped bundle size against the 100 kB goal.
// "Interactive" = the 1,000th card is in the DOM and clicking it shows its answer form.
// Prints results; asserts nothing about timings.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startRelay } from '@aep/relay';
import { webRoot } from '@aep/web';
import { launchBrowser, postEvents } from '../test/support/browser.js';
import { formRequest, permissionRequest, sessionEvent } from '../test/support/fixtures.js';
import { ensureWebBuilt } from '../test/support/processes.js';

const N = 1000;
const RUNS = 3;
const token = 'bench-token-0123456789abcdef';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

ensureWebBuilt();

// Bundle size: every asset the page loads (html, js, css), gzipped at level 9.
let raw = 0;
let gz = 0;
const files = [join(webRoot, 'index.html'), ...readdirSync(join(webRoot, 'assets')).map((f) => join(webRoot, 'assets', f))];
for (const f of files) {
  const b = readFileSync(f);
  raw += b.length;
  gz += gzipSync(b, { level: 9 }).length;
}

const browser = await launchBrowser();
const empty = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
const full = await startRelay({ port: 0, storePath: null, token, staticDir: webRoot });
try {
  // 1,000 requests across 50 sessions: forms (five fields) and permissions, half each.
  const events: Record<string, unknown>[] = [];
  for (let s = 0; s < 50; s++) {
    const session = `bench-${s}`;
    events.push(sessionEvent(`agent-${s % 7}`, session, 0, 'session.started'));
    for (let i = 1; i <= N / 50; i++) events.push(i % 2 ? formRequest(`agent-${s % 7}`, session, i) : permissionRequest(`agent-${s % 7}`, session, i));
  }
  for (let i = 0; i < events.length; i += 500) await postEvents(full.url, token, events.slice(i, i + 500));

  // Times are taken inside the page from navigation start (performance.now() there), so the
  // automation's own polling is not counted: cards = 1,000 cards in the DOM and painted (next
  // animation frame); interactive = then a click on the last card shows its answer controls.
  const phases: { dcl: number; open: number; chunk: number; cards: number }[] = [];
  const measure = async (url: string, count: number): Promise<{ cards: number; interactive: number }> => {
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await ctx.addInitScript(
      ([t, n]) => {
        localStorage.setItem('aep.inbox.token', t as string);
        const w = window as unknown as Record<string, number>;
        const mo = new MutationObserver(() => {
          const have =
            (n as number) === 0
              ? document.querySelector('[data-testid="inbox-empty"]') && document.querySelector('.conn-live')
                ? 1
                : 0
              : document.querySelectorAll('.inbox .item').length;
          if (w['cards'] === undefined && have >= Math.max(1, n as number)) {
            w['cards'] = -1;
            requestAnimationFrame(() => {
              w['cards'] = performance.now();
            });
          }
        });
        addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true, attributes: true }));
      },
      [token, count],
    );
    const page = await ctx.newPage();
    await page.goto(`${url}/`);
    await page.waitForFunction(() => ((window as unknown as Record<string, number>)['cards'] ?? -1) > 0, null, { timeout: 60_000 });
    const cards = await page.evaluate(() => (window as unknown as Record<string, number>)['cards'] ?? NaN);
    const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])));
    const nav = await page.evaluate(
      () => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.domContentLoadedEventEnd ?? NaN,
    );
    phases.push({ dcl: nav, open: marks['aep:stream-open'] ?? NaN, chunk: marks['aep:stream-chunk'] ?? NaN, cards });
    let interactive = cards;
    if (count > 0) {
      interactive = await page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const mo = new MutationObserver(() => {
              if (document.querySelector('.detail .actions button')) {
                mo.disconnect();
                requestAnimationFrame(() => resolve(performance.now()));
              }
            });
            mo.observe(document.body, { childList: true, subtree: true });
            const links = document.querySelectorAll<HTMLAnchorElement>('.inbox .item a');
            links[links.length - 1]?.click();
          }),
      );
    }
    await ctx.close();
    return { cards, interactive };
  };

  const base: number[] = [];
  const cards: number[] = [];
  const inter: number[] = [];
  await measure(empty.url, 0); // warm-up: chromium process, page cache
  for (let r = 0; r < RUNS; r++) {
    base.push((await measure(empty.url, 0)).cards);
    const m = await measure(full.url, N);
    cards.push(m.cards);
    inter.push(m.interactive);
  }
  const b = median(base);
  const c = median(cards);
  const m = median(inter);
  console.log(`inbox: ${N} pending requests rendered (from navigation start)   ${c.toFixed(0)} ms (median of ${RUNS})`);
  console.log(`inbox: ... and interactive (click -> answer form shown)        ${m.toFixed(0)} ms (median of ${RUNS}; goal < 1000 ms)`);
  console.log(`inbox: baseline, empty inbox loaded + stream live              ${b.toFixed(0)} ms (median of ${RUNS})`);
  // phases[0] is the warm-up, then empty and 1,000 alternate.
  const thousand = phases.filter((_, i) => i > 0 && i % 2 === 0);
  const ph = (k: 'dcl' | 'open' | 'chunk') => median(thousand.map((p) => p[k])).toFixed(0);
  console.log(
    `inbox: phases (1,000 case, ms from navigation start): DOMContentLoaded ${ph('dcl')}, stream open ${ph('open')}, first chunk ${ph('chunk')}, cards painted ${c.toFixed(0)}`,
  );
  console.log(`inbox: ratio                                                   ${(m / b).toFixed(2)}x baseline`);
  console.log(
    `inbox: bundle (html+js+css)                            ${(raw / 1024).toFixed(1)} kB raw, ${(gz / 1024).toFixed(1)} kB gzipped (goal <= 100 kB, ${(gz / 1024 / 100).toFixed(2)}x the goal)`,
  );
} finally {
  await browser.close();
  await empty.close();
  await full.close();
}
