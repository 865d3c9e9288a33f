// The installable inbox (issue 17): service worker registration, and the deep links a tapped
// notification opens (the worker posts `{type:"aep-open", route}` to an open inbox window).

/** Routes a notification may open (anything else opens the inbox list). */
export const ROUTE_RE = /^#\/(r\/[^/]+\/[^/]+|s\/[^/]+|sessions|notify)?$/;

/** Register `sw.js` (scope: the inbox) where service workers exist (HTTPS or localhost). */
export function registerServiceWorker(): void {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.addEventListener('message', (ev: MessageEvent) => {
    const d = ev.data as { type?: unknown; route?: unknown } | null;
    if (d && d.type === 'aep-open' && typeof d.route === 'string' && ROUTE_RE.test(d.route)) location.hash = d.route;
  });
  navigator.serviceWorker.register('./sw.js', { scope: './' }).catch(() => {
    /* the inbox works without it (no offline shell, no push) */
  });
}
