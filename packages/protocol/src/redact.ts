// The AEP-0003 §9.4 redaction pipeline: what every string riding at
// `capture: "redacted"` goes through. Steps, in this order: (a) secrets, (b) operator-configured
// secret values/names, (c) home-directory prefixes, (d) PII (on by default). The floor plus the
// hardening rows the public redaction corpus pins. Every regular expression here is linear in
// the input (bounded repetitions after a fixed anchor), so huge values cannot stall a caller.

/** Replacement for secrets (AEP-0003 §9.4 a/b). */
export const REDACTED_SECRET = '[REDACTED:secret]';
/** Replacement for PII (AEP-0003 §9.4 d). */
export const REDACTED_PII = '[REDACTED:pii]';
/** Configured secret values shorter than this (ignoring surrounding whitespace) are ignored (AEP-0003 §9.4 b: avoid shredding text). */
export const MIN_SECRET_VALUE_LENGTH = 4;

/** Options of the redaction pipeline. */
export interface RedactOptions {
  /** The user's home directory; its prefix becomes `~` (step c). Generic `/home/<u>`, `/Users/<u>`, `C:\Users\<u>` are always rewritten. */
  home?: string;
  /** Operator-declared secret values, replaced literally (step b). Values shorter than 4 chars are ignored. */
  secretValues?: readonly string[];
  /** Operator-declared secret names (env vars / config keys): `NAME=value` in text and `{"NAME": …}` in JSON are redacted (step b). */
  secretNames?: readonly string[];
  /** PII redaction (step d): on by default; `false` is the operator opt-out. */
  pii?: boolean;
}

// ---------------------------------------------------------------------------------------------
// (a) secrets

/** Case-insensitive character-class spelling of an ASCII word, so we can avoid the `i` flag. */
// A JSON or C-style escape (`\n`, `\t`, `\r`, `\b`, `\f`, `\v`, `\0`, `\uXXXX`) ends a word as
// far as these patterns are concerned: in the JSON text of a tool input (or a shell `printf`
// argument) a secret right after `\n` sits against the escape's letter, and a plain
// `(?<![A-Za-z0-9])` boundary would let it through (found by the adapter's redaction property
// test). Redacting more is always legal (AEP-0003 §9.4).
const AFTER_ESCAPE = '(?<=\\\\(?:[nrtbfv0]|u[0-9A-Fa-f]{4}))';
// The escape-aware boundary can only match where the text holds a backslash, and the alternation
// keeps V8 from scanning for each pattern's literal start (six times slower on ordinary text). So
// every pattern exists twice: `plain` (the boundary alone, used for text without a backslash,
// where it is exactly equivalent) and `esc` (boundary or escape). The pipeline never adds a
// backslash, so the choice made on a step's input holds for the whole step.
const bound = (esc: boolean, plain: string): string => (esc ? `(?:${plain}|${AFTER_ESCAPE})` : plain);

function ci(word: string): string {
  return word.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
}

const SEP = '[_-]?';
// Credential key words for text (AEP-0003 §9.4 a, floor + `authorization` hardening, plus the
// structured-key names). Lower/any-case form must not follow a letter or digit (so `MY_API_KEY`
// and `access_token` hit, `tokenizer` does not); the capitalized camelCase form may follow a
// lower-case letter (`accessToken`, `clientSecret`).
const KEY_WORDS_CI = [
  ci('password'),
  ci('passwd'),
  `${ci('secret')}(?:${SEP}${ci('key')})?`,
  `${ci('api')}${SEP}${ci('key')}`,
  ci('token'),
  ci('authorization'),
  `${ci('credential')}[sS]?`,
  `${ci('private')}${SEP}${ci('key')}`,
  `${ci('access')}${SEP}${ci('key')}`,
].join('|');
const KEY_WORDS_CAMEL = ['Password', 'Passwd', 'Secret', 'ApiKey', 'Token', 'Credentials?', 'PrivateKey', 'AccessKey'].join('|');
const AUTH_SCHEME = `(?:${ci('bearer')}|${ci('basic')}|${ci('token')}|${ci('digest')}|${ci('negotiate')})[ \\t]+`;
// key, optional closing quote of a quoted key, `\s*[=:]\s*`, then either a quoted value (kept
// quotes, up to the closing quote or end of line) or an unquoted `\S+` value (an auth scheme word
// such as `Basic` takes the following token with it).
const credentialRe = (esc: boolean): RegExp =>
  new RegExp(
    `((?:${bound(esc, '(?<![A-Za-z0-9])')}(?:${KEY_WORDS_CI})|(?<=[a-z0-9])(?:${KEY_WORDS_CAMEL}))(?![A-Za-z0-9_])["']?\\s*[=:]\\s*)` +
      `(?:(["'])((?:\\\\.|(?!\\2)[^\\\\\\n])*)(\\2?)|((?:${AUTH_SCHEME})?\\S+))`,
    'g',
  );

const AWS_KEY_RE = /(?:AKIA|ASIA)[0-9A-Z]{16}/g;
const bearerRe = (esc: boolean): RegExp => new RegExp(`${bound(esc, '(?<![A-Za-z0-9])')}[bB][eE][aA][rR][eE][rR][ \\t]+[A-Za-z0-9\\-._~+/]{8,}=*`, 'g');
// Starts only where no base64url character precedes, so a long run of `eyJeyJ…` stays linear.
const jwtRe = (esc: boolean): RegExp => new RegExp(`${bound(esc, '(?<![A-Za-z0-9_-])')}eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*`, 'g');
// Bare vendor tokens (hardening): each prefix anchored at a word boundary (`disk-usage` ≠ `sk-`).
const vendorTokenRe = (esc: boolean): RegExp =>
  new RegExp(
    [
      'gh[pousr]_[A-Za-z0-9]{20,}',
      'github_pat_[A-Za-z0-9_]{20,}',
      'glpat-[A-Za-z0-9_-]{20,}',
      'xox[baprs]-[A-Za-z0-9-]{10,}',
      'sk-[A-Za-z0-9_-]{20,}',
      'AIza[A-Za-z0-9_-]{35}',
    ]
      .map((p) => bound(esc, '\\b') + p)
      .join('|'),
    'g',
  );

/** PEM blocks, multi-line, any label; an unterminated block is redacted to the end (hardening). */
function redactPem(text: string): string {
  const BEGIN = '-----BEGIN ';
  let i = text.indexOf(BEGIN);
  if (i < 0) return text;
  let out = '';
  let from = 0;
  while (i >= 0) {
    const labelEnd = text.indexOf('-----', i + BEGIN.length);
    const label = labelEnd >= 0 ? text.slice(i + BEGIN.length, labelEnd) : '';
    if (labelEnd < 0 || !/^[A-Z0-9 ]{1,64}$/.test(label)) {
      i = text.indexOf(BEGIN, i + 1);
      continue;
    }
    const endMarker = `-----END ${label}-----`;
    const end = text.indexOf(endMarker, labelEnd + 5);
    out += text.slice(from, i) + REDACTED_SECRET;
    if (end < 0) return out; // truncated key material: redact the rest
    from = end + endMarker.length;
    i = text.indexOf(BEGIN, from);
  }
  return out + text.slice(from);
}

function redactSecrets(text: string, esc: boolean): string {
  const P = esc ? ESC : PLAIN;
  let t = redactPem(text);
  t = t.replace(P.jwt, REDACTED_SECRET);
  t = t.replace(P.vendor, REDACTED_SECRET);
  t = t.replace(AWS_KEY_RE, REDACTED_SECRET);
  // Bearer before credential assignments, so `Authorization: Bearer x` loses the token, not the word.
  t = t.replace(P.bearer, REDACTED_SECRET);
  t = t.replace(P.credential, (_m, prefix: string, q: string | undefined, _qv: string | undefined, qEnd: string | undefined) =>
    q !== undefined ? `${prefix}${q}${REDACTED_SECRET}${qEnd ?? ''}` : `${prefix}${REDACTED_SECRET}`,
  );
  return t;
}

// ---------------------------------------------------------------------------------------------
// (b) configured secrets

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function usableSecrets(values: readonly string[] | undefined): string[] {
  if (!values) return [];
  return [...new Set(values.filter((v) => typeof v === 'string' && v.trim().length >= MIN_SECRET_VALUE_LENGTH))].sort((a, b) => b.length - a.length);
}

function redactSecretValues(text: string, secrets: readonly string[]): string {
  let t = text;
  for (const s of secrets) if (t.includes(s)) t = t.split(s).join(REDACTED_SECRET);
  return t;
}

const namesReCache = new Map<string, RegExp>();
function secretNamesRe(names: readonly string[], esc: boolean): RegExp | undefined {
  const list = names.filter((n) => typeof n === 'string' && n.length > 0);
  if (list.length === 0) return undefined;
  const key = (esc ? 'e\u0000' : 'p\u0000') + list.join('\u0000');
  let re = namesReCache.get(key);
  if (!re) {
    re = new RegExp(
      `(${bound(esc, '(?<![A-Za-z0-9_])')}(?:${list.map(escapeRe).join('|')})(?![A-Za-z0-9_])["']?\\s*[=:]\\s*)(?:(["'])((?:\\\\.|(?!\\2)[^\\\\\\n])*)(\\2?)|(\\S+))`,
      'g',
    );
    if (namesReCache.size > 64) namesReCache.clear();
    namesReCache.set(key, re);
  }
  return re;
}

// ---------------------------------------------------------------------------------------------
// (c) home directories

const genericHomeRe = (esc: boolean): RegExp =>
  new RegExp(`${bound(esc, '(?<![A-Za-z0-9._~-])')}(?:/home/|/Users/|[A-Za-z]:\\\\Users\\\\|[A-Za-z]:/Users/)[A-Za-z0-9._-]+(?![A-Za-z0-9._-])`, 'g');

function redactHome(text: string, home: string | undefined, esc: boolean): string {
  let t = text;
  if (home) {
    const h = home.replace(/[\\/]+$/, '');
    if (h.length > 1) t = t.replace(new RegExp(`${bound(esc, '(?<![A-Za-z0-9._~-])')}${escapeRe(h)}(?![A-Za-z0-9._-])`, 'g'), '~');
  }
  return t.replace((esc ? ESC : PLAIN).home, '~');
}

// ---------------------------------------------------------------------------------------------
// (d) PII

// Bounded local part and labels keep this linear on long runs of word characters.
const EMAIL_RE = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
// Phone numbers: international (`+CC …`, 8–15 digits) or NANP with separators/parens
// (`(555) 123-4567`, `555-123-4567`). Never a dotted version (`22.11.0`), a date or a bare count.
const phoneRe = (esc: boolean): RegExp =>
  new RegExp(
    `${bound(esc, '(?<![\\w.+/-])')}(?:\\+\\d{1,3}(?:[ .-]?(?:\\(\\d{1,4}\\)|\\d{1,4})){2,6}|(?:1[ .-]?)?(?:\\(\\d{3}\\)[ .-]?|\\d{3}[ .-])\\d{3}[ .-]\\d{4})(?![\\w]|[.-]\\d)`,
    'g',
  );

/** Every boundary-anchored pattern, built once per variant (see `bound`). */
interface Patterns {
  credential: RegExp;
  bearer: RegExp;
  jwt: RegExp;
  vendor: RegExp;
  home: RegExp;
  phone: RegExp;
}
const patterns = (esc: boolean): Patterns => ({
  credential: credentialRe(esc),
  bearer: bearerRe(esc),
  jwt: jwtRe(esc),
  vendor: vendorTokenRe(esc),
  home: genericHomeRe(esc),
  phone: phoneRe(esc),
});
const PLAIN = patterns(false);
const ESC = patterns(true);

function redactPii(text: string, esc: boolean): string {
  return text.replace(EMAIL_RE, REDACTED_PII).replace((esc ? ESC : PLAIN).phone, (m) => {
    const digits = m.replace(/\D/g, '').length;
    return digits >= (m.startsWith('+') ? 8 : 10) && digits <= 15 ? REDACTED_PII : m;
  });
}

// ---------------------------------------------------------------------------------------------

/**
 * Runs the AEP-0003 §9.4 pipeline over one string, in order: (a) secrets → `[REDACTED:secret]`,
 * (b) configured secret names/values → `[REDACTED:secret]`, (c) home prefixes → `~`, (d) PII →
 * `[REDACTED:pii]` (unless `pii: false`). Configured values are matched once more at the end
 * (redacting more is always legal) so no later step can rebuild one, and the pipeline is repeated
 * until the text no longer changes, so `redact(redact(t)) === redact(t)`. Pure; never throws.
 */
export function redact(text: string, opts: RedactOptions = {}): string {
  if (typeof text !== 'string' || text.length === 0) return text;
  const secrets = usableSecrets(opts.secretValues);
  // Steps interact at token boundaries (a PII marker can expose a home prefix that was glued to
  // an e-mail address): repeat until nothing changes, so the result is a fixpoint (idempotent).
  let t = text;
  for (let i = 0; i < 4; i++) {
    const next = redactOnce(t, opts, secrets, t.includes('\\'));
    if (next === t) break;
    t = next;
  }
  return t;
}

/**
 * One pass with the pattern variant chosen by the caller (`redact` passes "the text holds a
 * backslash"). Exported for the test that pins the two variants equal on text without one
 * (packages/protocol/test/redact-variants.test.ts); not part of the package's API.
 */
export function redactOnce(text: string, opts: RedactOptions, secrets: readonly string[], esc: boolean): string {
  let t = redactSecrets(text, esc);
  const namesRe = opts.secretNames ? secretNamesRe(opts.secretNames, esc) : undefined;
  if (namesRe) {
    t = t.replace(namesRe, (_m, prefix: string, q: string | undefined, _qv: string | undefined, qEnd: string | undefined) =>
      q !== undefined ? `${prefix}${q}${REDACTED_SECRET}${qEnd ?? ''}` : `${prefix}${REDACTED_SECRET}`,
    );
  }
  t = redactSecretValues(t, secrets);
  t = redactHome(t, opts.home, esc);
  if (opts.pii !== false) t = redactPii(t, esc);
  return secrets.length ? redactSecretValues(t, secrets) : t;
}

// Structured keys: a key is credential-named when its last word (split on `_`, `-`, `.`, spaces
// and camelCase) is one of these, or its last two words form one of the pairs (AEP-0003 §9.4
// "Structured values"; `client_secret`, `accessToken`, `x-api-key`, `AWS_SECRET_ACCESS_KEY`).
const CREDENTIAL_LAST_WORDS = new Set([
  'password',
  'passwd',
  'secret',
  'token',
  'authorization',
  'credential',
  'credentials',
  'apikey',
  'privatekey',
  'accesskey',
  'secretkey',
]);
const CREDENTIAL_PAIRS = new Set(['api key', 'private key', 'access key', 'secret key']);

/** True when an object key names a credential (whole key, case-insensitive, any separator style). */
export function isCredentialKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_.-]+/)
    .filter(Boolean);
  const last = words[words.length - 1];
  if (last === undefined) return false;
  if (CREDENTIAL_LAST_WORDS.has(last)) return true;
  const prev = words[words.length - 2];
  return prev !== undefined && CREDENTIAL_PAIRS.has(`${prev} ${last}`);
}

/** Own-property assignment that also works for the key `__proto__` (JSON.parse creates it as data). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Redacts a JSON value (hardening pinned by the redaction corpus): walks objects and arrays, runs
 * every string through {@link redact}, and replaces the value of any credential-named key
 * (`password`, `api_key`, `token`, `authorization`, `private_key`, …; also operator `secretNames`)
 * with `[REDACTED:secret]` whatever its type, leaving only `null` as is. Numbers, booleans and
 * `null` elsewhere are untouched; object keys are kept. Returns a new value; never mutates.
 */
export function redactValue(value: unknown, opts: RedactOptions = {}): unknown {
  // Non-string entries are ignored, as `redact` ignores them (a bad option never throws).
  const names = new Set((opts.secretNames ?? []).filter((n) => typeof n === 'string' && n.length > 0).map((n) => n.toLowerCase()));
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redact(v, opts);
    if (v === null || typeof v !== 'object') return v;
    if (depth > 512) return REDACTED_SECRET; // absurd nesting: fail closed rather than overflow
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const credential = isCredentialKey(k) || names.has(k.toLowerCase());
      setOwn(out, k, credential && x !== null ? REDACTED_SECRET : walk(x, depth + 1));
    }
    return out;
  };
  return walk(value, 0);
}
