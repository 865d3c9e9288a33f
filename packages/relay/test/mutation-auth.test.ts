// Authentication and scoped tokens at unit level (issue 20, the mutation run's relay auth
// target: auth.ts, tokens.ts, scopes.ts): every refusal message, every boundary (name length,
// control characters, scope count, expiry at the exact instant), the constant-shape token check,
// and how a principal's scopes decide. The end-to-end near-miss tokens over every binding are in
// promises.test.ts; these pin the functions those bindings call.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Auth, Principal, scrubUrl } from '../src/auth.js';
import { Tokens, TokenRequestError, live, type StoredToken } from '../src/tokens.js';
import { allows, needed, parseScope, SCOPE_NAMES } from '../src/scopes.js';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const req = (authorization?: string): IncomingMessage => ({ headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage;
const url = (q = ''): URL => new URL(`http://127.0.0.1/stream${q}`);

function refused(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TokenRequestError, `a TokenRequestError, got ${String(e)}`);
    assert.equal(e.message, message);
    return true;
  });
}

describe('scopes: parsing, normalization, constraints', () => {
  it('parses every scope name; bare read is read:metadata; constraints are normalized, deduplicated, in order', () => {
    assert.deepEqual([...SCOPE_NAMES], ['read', 'emit', 'answer', 'permit', 'steer', 'admin']);
    const r = parseScope('read');
    assert.equal(r.name, 'read');
    assert.equal(r.level, 'metadata');
    assert.equal(r.text, 'read:metadata');
    assert.equal(r.where.size, 0);
    for (const l of ['none', 'metadata', 'redacted', 'full']) assert.equal(parseScope(`read:${l}`).level, l);
    assert.equal(parseScope('admin').text, 'admin');
    assert.equal(parseScope('emit').text, 'emit');
    assert.equal(parseScope('steer').where.size, 0);
    const e = parseScope('emit:agent=a,session=s1,agent=b,agent=a');
    assert.equal(e.text, 'emit:agent=a,agent=b,session=s1');
    assert.deepEqual(e.where.get('agent'), ['a', 'b']);
    assert.deepEqual(e.where.get('session'), ['s1']);
    assert.equal(parseScope('answer:kind=form').text, 'answer:kind=form');
    assert.equal(parseScope('permit:agent=x').text, 'permit:agent=x');
    assert.equal(parseScope(`emit:agent=${'v'.repeat(200)}`).where.get('agent')![0]!.length, 200);
  });

  it('refuses bad scopes with a message naming the rule', () => {
    const bad: Array<[unknown, string]> = [
      ['', 'a scope is a non-empty string'],
      [7, 'a scope is a non-empty string'],
      ['write', 'unknown scope "write": expected one of read, emit, answer, permit, steer, admin'],
      [`${'w'.repeat(60)}:x`, `unknown scope "${'w'.repeat(40)}": expected one of read, emit, answer, permit, steer, admin`],
      ['read:secret', 'read:secret: the level must be one of none, metadata, redacted, full'],
      [`read:${'q'.repeat(50)}`, `read:${'q'.repeat(40)}: the level must be one of none, metadata, redacted, full`],
      ['read:', 'read:: the level must be one of none, metadata, redacted, full'],
      ['admin:agent=a', 'admin takes no constraints'],
      ['admin:', 'admin takes no constraints'],
      ['emit:', 'emit: empty constraint list'],
      ['emit:kind=form', 'emit: unknown constraint key "kind" (allowed: agent, session)'],
      ['answer:colour=red', 'answer: unknown constraint key "colour" (allowed: agent, session, kind)'],
      [`steer:${'k'.repeat(50)}=1`, `steer: unknown constraint key "${'k'.repeat(40)}" (allowed: agent, session)`],
      ['emit:agent', 'emit: agent needs a value without spaces, commas or "="'],
      ['emit:agent=', 'emit: agent needs a value without spaces, commas or "="'],
      ['emit:agent=a b', 'emit: agent needs a value without spaces, commas or "="'],
      ['emit:agent=a=b', 'emit: agent needs a value without spaces, commas or "="'],
      [`emit:agent=${'v'.repeat(201)}`, 'emit: agent needs a value without spaces, commas or "="'],
      ['emit:agent=a,', 'emit: unknown constraint key "" (allowed: agent, session)'],
      // A separator in first position: the name (or key) before it is empty, never the whole text.
      [':read', 'unknown scope "": expected one of read, emit, answer, permit, steer, admin'],
      ['emit:=agent', 'emit: unknown constraint key "" (allowed: agent, session)'],
      ['read:full,x', 'read:full,x: the level must be one of none, metadata, redacted, full'],
    ];
    for (const [text, message] of bad)
      assert.throws(
        () => parseScope(text),
        (e: unknown) => (e as Error).message === message,
        `${String(text)} -> ${message}`,
      );
  });

  it('allows: every key must be satisfied (any of its values); an unknown fact never satisfies', () => {
    const s = parseScope('answer:agent=a,agent=b,kind=form');
    assert.equal(allows(s, { agent: 'a', kind: 'form' }), true);
    assert.equal(allows(s, { agent: 'b', kind: 'form', session: 'x' }), true);
    assert.equal(allows(s, { agent: 'c', kind: 'form' }), false);
    assert.equal(allows(s, { agent: 'a', kind: 'choice' }), false);
    assert.equal(allows(s, { agent: 'a' }), false, 'kind unknown');
    assert.equal(allows(s, {}), false);
    assert.equal(allows(parseScope('answer'), {}), true);
  });

  it('needed: the scope a refusal names, with the facts its keys constrain', () => {
    assert.equal(needed('emit', { agent: 'a', session: 's', kind: 'form' }), 'emit:agent=a,session=s');
    assert.equal(needed('answer', { agent: 'a', session: 's', kind: 'form' }), 'answer:agent=a,session=s,kind=form');
    assert.equal(needed('answer', { kind: 'form' }), 'answer:kind=form');
    assert.equal(needed('steer', {}), 'steer');
    assert.equal(needed('read', { agent: 'a' }), 'read');
    assert.equal(needed('admin', { agent: 'a' }), 'admin');
  });
});

describe('scoped tokens: create, verify, revoke, expire', () => {
  it('create returns the token once, in the aep_<id>_<secret> shape; the view and the sink never hold the secret', () => {
    const sunk: StoredToken[] = [];
    const t = new Tokens({ token: (x) => sunk.push({ ...x }) });
    const made = t.create({ name: 'ci', scopes: ['read', 'emit:agent=a'] }, NOW);
    assert.match(made.token, /^aep_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    // aep_<16 hex>_<secret>; the secret is base64url and may itself hold '_'.
    const id = made.token.slice(4, 20);
    const secret = made.token.slice(21);
    assert.deepEqual(made.view, { id, name: 'ci', scopes: ['read:metadata', 'emit:agent=a'], created: NOW.toISOString() });
    assert.equal(sunk.length, 1);
    assert.deepEqual(Object.keys(sunk[0]!).sort(), ['created', 'hash', 'id', 'name', 'scopes']);
    assert.equal(sunk[0]!.hash.length, 64);
    assert.ok(!JSON.stringify(sunk).includes(secret));
    assert.deepEqual(t.list(), [made.view]);
    const rec = t.verify(made.token, NOW.getTime());
    assert.ok(rec);
    assert.equal(rec.id, id);
    assert.deepEqual(
      rec.parsed.map((s) => s.text),
      ['read:metadata', 'emit:agent=a'],
    );
    // Without a name: ''.
    assert.equal(t.create({ scopes: ['admin'] }, NOW).view.name, '');
  });

  it('verify refuses every near miss, an unknown id, a revoked and an expired token', () => {
    const t = new Tokens(null);
    const { token } = t.create({ scopes: ['read'], expires: '2026-06-01T13:00:00Z' }, NOW);
    const now = NOW.getTime();
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const near = [
      token.slice(0, -1),
      token + 'A',
      token.slice(0, -1) + flip(token.slice(-1)),
      token.replace(/^aep_/, 'aex_'),
      token.replace(/_([^_]*)$/, '-$1'),
      ` ${token}`,
      `${token} `,
      token.toUpperCase(),
      '',
    ];
    for (const n of near) assert.equal(t.verify(n, now), null, n);
    const other = new Tokens(null).create({ scopes: ['read'] }, NOW).token;
    assert.equal(t.verify(other, now), null, 'an id this relay never issued');
    // The right secret under another existing id.
    const second = t.create({ scopes: ['read'] }, NOW).token;
    assert.equal(t.verify(`${second.slice(0, 21)}${token.slice(21)}`, now), null);
    // Expiry: live strictly before the instant, not at it.
    assert.ok(t.verify(token, Date.parse('2026-06-01T12:59:59.999Z')));
    assert.equal(t.verify(token, Date.parse('2026-06-01T13:00:00.000Z')), null);
    // Revoked.
    const id = second.split('_')[1]!;
    assert.ok(t.verify(second, now));
    t.revoke(id, NOW);
    assert.equal(t.verify(second, now), null);
  });

  it('revoke is idempotent (the first time is kept, persisted once); unknown ids are undefined', () => {
    const sunk: StoredToken[] = [];
    const t = new Tokens({ token: (x) => sunk.push({ ...x }) });
    const { view } = t.create({ scopes: ['read'] }, NOW);
    assert.equal(t.revoke('0000000000000000', NOW), undefined);
    const first = t.revoke(view.id, NOW);
    assert.equal(first?.revoked, NOW.toISOString());
    const later = new Date(NOW.getTime() + 60_000);
    assert.equal(t.revoke(view.id, later)?.revoked, NOW.toISOString());
    assert.equal(sunk.length, 2, 'created, revoked; the second revoke writes nothing');
    assert.equal(sunk[1]!.revoked, NOW.toISOString());
    assert.deepEqual(t.list(), [{ ...view, revoked: NOW.toISOString() }]);
  });

  it('stored tokens are loaded (a row with an unreadable scope grants nothing); live() by value', () => {
    const good: StoredToken = { id: 'a'.repeat(16), name: 'g', hash: '0'.repeat(64), scopes: ['read:full'], created: NOW.toISOString() };
    const bad: StoredToken = { id: 'b'.repeat(16), name: 'b', hash: '0'.repeat(64), scopes: ['fly'], created: NOW.toISOString() };
    const t = new Tokens(null, [good, bad]);
    assert.deepEqual(
      t.list().map((x) => x.id),
      [good.id],
    );
    assert.equal(live(good, 0), true);
    assert.equal(live({ ...good, revoked: NOW.toISOString() }, 0), false);
    assert.equal(live({ ...good, expires: '2026-06-01T12:00:00.000Z' }, NOW.getTime()), false);
    assert.equal(live({ ...good, expires: '2026-06-01T12:00:00.001Z' }, NOW.getTime()), true);
    const e = t.create({ scopes: ['read'], expires: '2026-06-01T13:00:00+02:00' }, new Date('2026-06-01T10:00:00Z')).view;
    assert.equal(e.expires, '2026-06-01T11:00:00.000Z', 'expires normalized to UTC');
    assert.deepEqual(
      t.list().find((x) => x.id === e.id),
      e,
    );
  });

  it('bad token requests are refused naming the rule (every boundary)', () => {
    const t = new Tokens(null);
    const SCOPES =
      'scopes must be a non-empty array of at most 64 scope strings (read[:LEVEL], emit[:k=v,...], answer[:k=v,...], permit[:k=v,...], steer[:k=v,...], admin)';
    const BODY = 'the body must be a JSON object {name?, scopes, expires?}';
    const NAME = 'name must be a string of at most 200 characters without control characters';
    const EXP = 'expires must be an RFC 3339 date-time with a zone (e.g. 2026-12-31T23:59:59Z)';
    refused(() => t.create(null, NOW), BODY);
    refused(() => t.create([], NOW), BODY);
    refused(() => t.create('x', NOW), BODY);
    refused(() => t.create({ scopes: ['read'], colour: 1 }, NOW), 'unknown member "colour" (allowed: name, scopes, expires)');
    refused(() => t.create({ scopes: ['read'], ['k'.repeat(50)]: 1 }, NOW), `unknown member "${'k'.repeat(40)}" (allowed: name, scopes, expires)`);
    refused(() => t.create({ scopes: ['read'], name: 5 }, NOW), NAME);
    refused(() => t.create({ scopes: ['read'], name: 'n'.repeat(201) }, NOW), NAME);
    assert.equal(t.create({ scopes: ['read'], name: 'n'.repeat(200) }, NOW).view.name.length, 200);
    refused(() => t.create({ scopes: ['read'], name: 'a\u001fb' }, NOW), NAME);
    refused(() => t.create({ scopes: ['read'], name: 'a\u007fb' }, NOW), NAME);
    refused(() => t.create({ scopes: ['read'], name: '\n' }, NOW), NAME);
    assert.equal(t.create({ scopes: ['read'], name: ' ~\u0080é' }, NOW).view.name, ' ~\u0080é');
    refused(() => t.create({}, NOW), SCOPES);
    refused(() => t.create({ scopes: [] }, NOW), SCOPES);
    refused(() => t.create({ scopes: 'read' }, NOW), SCOPES);
    refused(() => t.create({ scopes: Array.from({ length: 65 }, () => 'read') }, NOW), SCOPES);
    assert.equal(t.create({ scopes: Array.from({ length: 64 }, () => 'read') }, NOW).view.scopes.length, 64);
    refused(() => t.create({ scopes: ['read', 'write'] }, NOW), 'bad scope: unknown scope "write": expected one of read, emit, answer, permit, steer, admin');
    for (const e of [
      'tomorrow',
      '2026-12-31',
      '2026-12-31T23:59:59',
      '2026-12-31 23:59:59Z',
      'x2026-12-31T23:59:59Z',
      '2026-12-31T23:59:59Zx',
      '2026-13-45T99:99:99Z',
      20261231,
    ]) {
      refused(() => t.create({ scopes: ['read'], expires: e }, NOW), EXP);
    }
    for (const e of ['2026-12-31T23:59:59z', '2026-12-31T23:59:59.5Z', '2026-12-31T23:59:59-05:00', '2026-12-31t23:59:59Z']) {
      assert.ok(t.create({ scopes: ['read'], expires: e }, NOW).view.expires, e);
    }
    refused(() => t.create({ scopes: ['read'], expires: NOW.toISOString() }, NOW), 'expires must be in the future');
    refused(() => t.create({ scopes: ['read'], expires: '2026-06-01T11:59:59Z' }, NOW), 'expires must be in the future');
    assert.equal(t.create({ scopes: ['read'], expires: '2026-06-01T12:00:00.001Z' }, NOW).view.expires, '2026-06-01T12:00:00.001Z');
  });

  it('at most 10 000 tokens (the 10 000th is made, the next refused)', () => {
    const t = new Tokens(null);
    for (let i = 0; i < 10_000; i++) t.create({ scopes: ['read'] }, NOW);
    refused(() => t.create({ scopes: ['read'] }, NOW), 'at most 10000 tokens; revoke some first');
    assert.equal(t.list().length, 10_000);
  });
});

describe('principals: who may do what', () => {
  const tokens = new Tokens(null);
  const rec = (scopes: string[]) => tokens.verify(tokens.create({ scopes }, NOW).token, NOW.getTime())!;

  it('owner: every scope, reads as received; open: read and emit only; scoped: its scopes', () => {
    const o = Principal.owner;
    assert.equal(o.kind, 'owner');
    assert.equal(o.authenticated, true);
    assert.equal(o.tokenId, undefined);
    assert.equal(o.valid(), true);
    for (const n of SCOPE_NAMES) assert.equal(o.check(n, { agent: 'a', session: 's', kind: 'form' }), null);
    assert.deepEqual(o.readCeiling(), { ceiling: undefined });
    assert.equal(o.cap('redacted'), 'redacted');
    assert.equal(o.cap(undefined), undefined);
    const p = Principal.open;
    assert.equal(p.kind, 'open');
    assert.equal(p.authenticated, false);
    assert.equal(p.valid(), true);
    assert.equal(p.check('read'), null);
    assert.equal(p.check('emit', { agent: 'a' }), null);
    assert.equal(p.check('answer', { agent: 'a', kind: 'form' }), 'answer:agent=a,kind=form');
    assert.equal(p.check('permit'), 'permit');
    assert.equal(p.check('steer', { session: 's' }), 'steer:session=s');
    assert.equal(p.check('admin'), 'admin');
    assert.deepEqual(p.readCeiling(), { ceiling: undefined });
  });

  it('scoped: the highest read level is the ceiling; cap takes the lower; no read scope reads nothing', () => {
    const r = rec(['read:none', 'read:redacted', 'read:metadata', 'emit']);
    const s = Principal.scoped(r);
    assert.equal(s.kind, 'scoped');
    assert.equal(s.authenticated, true);
    assert.equal(s.tokenId, r.id);
    assert.deepEqual(s.readCeiling(), { ceiling: 'redacted' });
    assert.equal(s.cap(undefined), 'redacted');
    assert.equal(s.cap('full'), 'redacted');
    assert.equal(s.cap('redacted'), 'redacted');
    assert.equal(s.cap('metadata'), 'metadata');
    assert.equal(s.cap('none'), 'none');
    assert.deepEqual(Principal.scoped(rec(['read:none'])).readCeiling(), { ceiling: 'none' });
    assert.equal(Principal.scoped(rec(['read:none'])).cap('full'), 'none');
    const w = Principal.scoped(rec(['emit', 'admin']));
    assert.equal(w.readCeiling(), null);
    assert.equal(w.cap('full'), 'full', 'no ceiling of its own (reading is refused elsewhere)');
  });

  it('scoped check: any scope of the name that allows the context; else the needed scope', () => {
    const s = Principal.scoped(rec(['emit:agent=a', 'emit:session=s2', 'answer:kind=form', 'read']));
    assert.equal(s.check('emit', { agent: 'a', session: 's1' }), null);
    assert.equal(s.check('emit', { agent: 'b', session: 's2' }), null);
    assert.equal(s.check('emit', { agent: 'b', session: 's1' }), 'emit:agent=b,session=s1');
    assert.equal(s.check('answer', { agent: 'a', kind: 'form' }), null);
    assert.equal(s.check('answer', { agent: 'a', kind: 'choice' }), 'answer:agent=a,kind=choice');
    assert.equal(s.check('permit', { agent: 'a' }), 'permit:agent=a');
    assert.equal(s.check('read'), null);
    assert.equal(s.check('admin'), 'admin');
    assert.equal(s.check('steer'), 'steer');
  });

  it('valid(): false once the token is revoked or expired', () => {
    const t = new Tokens(null);
    const made = t.create({ scopes: ['read'], expires: '2026-06-01T13:00:00Z' }, NOW);
    const p = Principal.scoped(t.verify(made.token, NOW.getTime())!);
    assert.equal(p.valid(NOW.getTime()), true);
    assert.equal(p.valid(Date.parse('2026-06-01T13:00:00Z')), false);
    t.revoke(made.view.id, NOW);
    assert.equal(p.valid(NOW.getTime()), false);
  });
});

describe('Auth: the token a request presents', () => {
  it('header (Bearer, any case, spaces or tabs, trailing space), else the access_token query parameter', () => {
    assert.equal(Auth.presented(req('Bearer abc'), url()), 'abc');
    assert.equal(Auth.presented(req('bearer abc'), url()), 'abc');
    assert.equal(Auth.presented(req('BEARER \t abc  '), url()), 'abc');
    assert.equal(Auth.presented(req('Bearer abc'), url('?access_token=q')), 'abc', 'the header wins');
    assert.equal(Auth.presented(req('Bearer a b'), url('?access_token=q')), 'q', 'a malformed header falls back to the query');
    assert.equal(Auth.presented(req('Basic abc'), url('?access_token=q')), 'q');
    assert.equal(Auth.presented(req('Bearerabc'), url()), undefined);
    assert.equal(Auth.presented(req('Bearer '), url()), undefined);
    assert.equal(Auth.presented(req('x Bearer abc'), url()), undefined);
    assert.equal(Auth.presented(req(), url('?access_token=q%20r')), 'q r');
    assert.equal(Auth.presented(req(), url('?access_token=')), '');
    assert.equal(Auth.presented(req(), url()), undefined);
  });

  it('principal: open without an owner token; with one, the owner, a live scoped token, else null', () => {
    const tokens = new Tokens(null);
    const open = new Auth(undefined, tokens);
    assert.equal(open.required, false);
    assert.equal(open.principal(req('Bearer whatever'), url()), Principal.open);
    const auth = new Auth('owner-secret', tokens);
    assert.equal(auth.required, true);
    assert.equal(auth.principal(req(), url()), null);
    assert.equal(auth.principal(req('Bearer owner-secret'), url()), Principal.owner);
    assert.equal(auth.principal(req(), url('?access_token=owner-secret')), Principal.owner);
    for (const near of ['owner-secre', 'owner-secrett', 'wner-secret', 'o', '', 'owner-secreT', 'OWNER-SECRET']) {
      assert.equal(auth.principal(req(), url(`?access_token=${near}`)), null, near);
    }
    const made = tokens.create({ scopes: ['read:full'] }, new Date());
    const p = auth.principal(req(`Bearer ${made.token}`), url());
    assert.equal(p?.kind, 'scoped');
    assert.equal(p?.tokenId, made.view.id);
    tokens.revoke(made.view.id, new Date());
    assert.equal(auth.principal(req(`Bearer ${made.token}`), url()), null);
    // An empty owner token is still a token: only '' matches it.
    const empty = new Auth('', tokens);
    assert.equal(empty.required, true);
    assert.equal(empty.principal(req(), url('?access_token=')), Principal.owner);
    assert.equal(empty.principal(req(), url('?access_token=x')), null);
  });

  it('scrubUrl drops the whole query string (it may carry access_token)', () => {
    assert.equal(scrubUrl(undefined), '');
    assert.equal(scrubUrl('/stream'), '/stream');
    assert.equal(scrubUrl('/stream?access_token=secret&live=0'), '/stream?…');
    assert.equal(scrubUrl('?x'), '?…');
  });
});
