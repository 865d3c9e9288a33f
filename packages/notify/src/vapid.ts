// VAPID keys (RFC 8292) for Web Push: generated once by `aep up` with web-push's
// `generateVAPIDKeys`, kept in its state directory (mode 0600). The relay gets only the public key
// (C10 `GET /push/config`); the private key is read by the push notifier.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import webpush from 'web-push';
import type { VapidKeys } from './channels.js';

/** Where `aep up` keeps the VAPID keys. */
export function vapidFile(stateDir: string): string {
  return join(stateDir, 'vapid.json');
}

/** Read the keys in `stateDir`, generating and saving them (0600) when there are none. */
export function ensureVapidKeys(stateDir: string, subject = 'mailto:aep-notify@localhost.invalid'): VapidKeys & { file: string; created: boolean } {
  const file = vapidFile(stateDir);
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as Partial<VapidKeys>;
    if (typeof j.publicKey === 'string' && typeof j.privateKey === 'string') {
      return { publicKey: j.publicKey, privateKey: j.privateKey, subject: typeof j.subject === 'string' ? j.subject : subject, file, created: false };
    }
  } catch {
    /* none yet */
  }
  const k = webpush.generateVAPIDKeys();
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify({ publicKey: k.publicKey, privateKey: k.privateKey, subject }, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return { publicKey: k.publicKey, privateKey: k.privateKey, subject, file, created: true };
}
