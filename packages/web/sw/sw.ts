/// <reference lib="webworker" />
// The inbox's service worker (issue 17): keeps the shell (HTML, JS, CSS, manifest, icons)
// available offline, shows Web Push notifications, and opens the right request when one is
// tapped. It never caches or answers anything from the relay's API (`/events`, `/stream`,
// `/socket`, `/push/…`): those requests go to the network untouched, so an offline inbox sees
// the failure and says "reconnecting" instead of showing stale data as if it were current.
// No imports: this file is one self-contained script (vite.config.ts builds it to `sw.js`).
const sw = self as unknown as ServiceWorkerGlobalScope;

/** Shell files, relative to the scope; filled in at build time by vite.config.ts. */
const SHELL: string[] = JSON.parse('__AEP_SHELL__') as string[];
const CACHE = 'aep-shell-__AEP_VERSION__';
const ROUTE = /^#\/(r\/[^/]+\/[^/]+|s\/[^/]+|sessions|notify)?$/;

function scoped(path: string): string {
  return new URL(path, sw.registration.scope).href;
}

sw.addEventListener('install', (event: ExtendableEvent) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(SHELL.map(scoped)))
      .then(() => sw.skipWaiting()),
  );
});

sw.addEventListener('activate', (event: ExtendableEvent) => {
  event.waitUntil(
    (async () => {
      for (const k of await caches.keys()) if (k.startsWith('aep-shell-') && k !== CACHE) await caches.delete(k);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('fetch', (event: FetchEvent) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== sw.location.origin) return;
  const shell = new Set(SHELL.map(scoped));
  if (req.mode === 'navigate') {
    // Network first (a fresh page when the relay is up), the cached shell when it is not.
    event.respondWith(fetch(req).catch(async () => (await caches.match(scoped('index.html'))) ?? Response.error()));
    return;
  }
  url.hash = '';
  url.search = '';
  if (!shell.has(url.href)) return; // API and anything else: straight to the network
  // Shell files have content-hashed names (or are versioned with this worker): cache first.
  event.respondWith(caches.match(url.href).then((hit) => hit ?? fetch(req)));
});

interface PushPayload {
  title?: unknown;
  body?: unknown;
  url?: unknown;
  tag?: unknown;
  renotify?: unknown;
}

sw.addEventListener('push', (event: PushEvent) => {
  let p: PushPayload = {};
  try {
    p = (event.data?.json() ?? {}) as PushPayload;
  } catch {
    p = {};
  }
  const title = typeof p.title === 'string' && p.title ? p.title.slice(0, 200) : 'An agent needs you';
  const body = typeof p.body === 'string' ? p.body.slice(0, 2000) : 'Open the inbox to see what is waiting.';
  const route = typeof p.url === 'string' && ROUTE.test(p.url) ? p.url : '#/';
  const tag = typeof p.tag === 'string' && p.tag ? p.tag.slice(0, 100) : undefined;
  const options: NotificationOptions & { renotify?: boolean } = {
    body,
    data: { url: route },
    icon: scoped('icons/icon-192.png'),
    badge: scoped('icons/icon-192.png'),
    ...(tag ? { tag, renotify: p.renotify === true } : {}),
  };
  event.waitUntil(sw.registration.showNotification(title, options));
});

/** Open (or focus) the inbox at `route`: an open inbox window navigates, else a new one opens. */
async function openRoute(route: string): Promise<void> {
  const target = scoped(`./${route}`);
  const windows = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const inScope = windows.filter((w) => w.url.startsWith(sw.registration.scope));
  const w = inScope.find((c) => c.focused) ?? inScope[0];
  if (w) {
    w.postMessage({ type: 'aep-open', route });
    try {
      await w.focus();
    } catch {
      /* focus needs a user gesture; the page navigated anyway */
    }
    return;
  }
  await sw.clients.openWindow(target);
}

sw.addEventListener('notificationclick', (event: NotificationEvent) => {
  event.notification.close();
  const data = event.notification.data as { url?: unknown } | null;
  const route = typeof data?.url === 'string' && ROUTE.test(data.url) ? data.url : '#/';
  const done = openRoute(route);
  // waitUntil keeps the worker alive; it throws on an event a script constructed (tests).
  try {
    event.waitUntil(done);
  } catch {
    void done;
  }
});
