// ULIDs (AEP-0001 §5.1: `id` SHOULD be a ULID, unique per `source`): 48-bit millisecond time +
// 80 random bits, Crockford base32, 26 characters, lexicographically sortable. The one
// implementation in this repository: the event builder (`builder.ts`), the client's command
// senders and the web inbox all take their ids from here. Pure: the clock is an argument and the
// randomness is injectable (default `globalThis.crypto.getRandomValues`, present in browsers and
// Node >= 19), so it loads in a browser and tests can pin its output.
import { AepError } from './errors.js';

/** Crockford base32, the ULID alphabet (no I, L, O, U). */
export const ULID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A canonical ULID: 26 Crockford base32 characters, the first at most `7` (48-bit time). */
export const ULID_PATTERN = '^[0-7][0-9A-HJKMNP-TV-Z]{25}$';

const TIME_LEN = 10;
const RANDOM_LEN = 16;
const TIME_MAX = 2 ** 48 - 1;
const ULID_RE = new RegExp(ULID_PATTERN);

/** A source of uniform random numbers in `[0, 1)`. */
export type RandomSource = () => number;

/** The default random source: `crypto.getRandomValues` in batches; throws `AEP_NO_RANDOM` when absent. */
export function cryptoRandomSource(): RandomSource {
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint32Array) => Uint32Array } }).crypto;
  if (!c || typeof c.getRandomValues !== 'function') {
    throw new AepError('AEP_NO_RANDOM', 'globalThis.crypto.getRandomValues is not available; pass a random source');
  }
  const buf = new Uint32Array(64);
  let i = buf.length;
  return () => {
    if (i >= buf.length) {
      c.getRandomValues!(buf);
      i = 0;
    }
    return buf[i++]! / 4294967296;
  };
}

function encodeTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > TIME_MAX) {
    throw new AepError('AEP_ULID_TIME', `ULID time must be an integer in [0, 2^48-1] ms, got ${String(ms)}`);
  }
  let t = ms;
  let out = '';
  for (let i = 0; i < TIME_LEN; i++) {
    out = ULID_ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function randomPart(random: RandomSource): string {
  let out = '';
  for (let i = 0; i < RANDOM_LEN; i++) {
    // Clamp a misbehaving source (1.0, NaN) into the alphabet instead of emitting `undefined`.
    const r = random();
    const k = Math.min(31, Math.max(0, Math.floor((Number.isFinite(r) ? r : 0) * 32)));
    out += ULID_ALPHABET[k]!;
  }
  return out;
}

/** The random part plus one in base32; `undefined` when it would overflow (all `Z`). */
function increment(s: string): string | undefined {
  const chars = s.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    const k = ULID_ALPHABET.indexOf(chars[i]!);
    if (k < 31) {
      chars[i] = ULID_ALPHABET[k + 1]!;
      return chars.join('');
    }
    chars[i] = '0';
  }
  return undefined;
}

/** One ULID at time `now` (not monotonic across calls: use {@link monotonicFactory} for a stream of ids). */
export function ulid(now: number = Date.now(), random: RandomSource = cryptoRandomSource()): string {
  return encodeTime(now) + randomPart(random);
}

/**
 * A monotonic ULID generator (the ULID spec's monotonic mode): ids it returns are strictly
 * increasing, also within one millisecond and when the clock goes back (the time part then stays
 * at the last one seen and the random part is incremented). `seedTime` defaults to `Date.now()`.
 * Throws `AEP_ULID_OVERFLOW` in the practically unreachable case of 2^80 ids in one millisecond.
 */
export function monotonicFactory(random?: RandomSource): (seedTime?: number) => string {
  const rnd = random ?? cryptoRandomSource();
  let lastTime = -1;
  let lastRandom = '';
  return (seedTime?: number) => {
    const now = seedTime ?? Date.now();
    if (now <= lastTime && lastRandom !== '') {
      const next = increment(lastRandom);
      if (next === undefined) throw new AepError('AEP_ULID_OVERFLOW', 'ULID random part overflowed within one millisecond');
      lastRandom = next;
      return encodeTime(lastTime) + lastRandom;
    }
    const time = encodeTime(now);
    lastTime = now;
    lastRandom = randomPart(rnd);
    return time + lastRandom;
  };
}

/** True for a canonical (upper-case) ULID string. */
export function isUlid(s: unknown): s is string {
  return typeof s === 'string' && ULID_RE.test(s);
}

/** The millisecond time encoded in a ULID, or `undefined` for a string that is not one. */
export function ulidTime(id: string): number | undefined {
  if (!isUlid(id)) return undefined;
  let t = 0;
  for (let i = 0; i < TIME_LEN; i++) t = t * 32 + ULID_ALPHABET.indexOf(id[i]!);
  return t;
}
