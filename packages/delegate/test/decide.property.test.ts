// Issue 18 "Must show": for random policies and requests, the delegate's decision (policy file ->
// parsePolicy -> BuiltinEngine -> decide) equals a reference evaluation of the same rules,
// written separately and simply from docs/delegates.md over the raw policy object and the raw
// event; and no decision (nor its trace) carries free text: text planted in the prompt and the
// labels never appears in it, and every answer is an option id the request offers (or decline
// on a form), or values that are numbers, booleans and the request's own choice ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { approvalDigest, optionEffect } from '@aep/protocol';
import { BuiltinEngine, decide, grantFromCommand, parsePolicy, requestFacts } from '@aep/delegate';
import type { Grant } from '@aep/delegate';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 1000);

// ---- the reference: plain loops over the raw objects ------------------------------------

type Raw = Record<string, unknown>;
type RefAnswer = { option?: string; values?: Raw };
type RefVerdict = { action: 'answer'; rule: string; answer: RefAnswer } | { action: 'ask'; rule?: string };

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

function glob(p: string, s: string): boolean {
  if (p === '') return s === '';
  if (p[0] === '*') {
    for (let i = 0; i <= s.length; i++) if (glob(p.slice(1), s.slice(i))) return true;
    return false;
  }
  return s !== '' && p[0] === s[0] && glob(p.slice(1), s.slice(1));
}

function sameSet(a: string[], b: string[]): boolean {
  return a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const hhmm = (s: string) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3));
const ms = (s: string) => (Number(s.slice(0, -1)) * ({ s: 1000, m: 60_000, h: 3_600_000 } as Raw)[s.slice(-1)]!) as number;

function refMatches(m: Raw, ev: Raw, now: number): boolean {
  const data = ev['data'] as Raw;
  const fields = (data['fields'] as Raw[] | undefined) ?? [];
  for (const k of ['agent', 'session', 'tool', 'severity']) {
    if (m[k] === undefined) continue;
    const v = k === 'tool' ? ev['subject'] : ev[k];
    if (typeof v !== 'string' || !asList(m[k]).some((p) => glob(p as string, v))) return false;
  }
  if (m['kind'] !== undefined && !asList(m['kind']).includes(data['kind'])) return false;
  if (m['approval_text'] !== undefined && ev['approvaldigest'] !== approvalDigest(m['approval_text'] as string)) return false;
  if (m['options'] !== undefined) {
    const have = ((data['options'] as Raw[] | undefined) ?? []).map((o) => o['id'] as string);
    if (!sameSet(have, asList(m['options']) as string[])) return false;
  }
  if (m['fields'] !== undefined) {
    const want = m['fields'] as Record<string, Raw>;
    if (
      !sameSet(
        fields.map((f) => f['id'] as string),
        Object.keys(want),
      )
    )
      return false;
    for (const [id, spec] of Object.entries(want)) {
      const f = fields.find((x) => x['id'] === id)!;
      if (spec['type'] !== undefined && f['type'] !== spec['type']) return false;
      if (spec['required'] !== undefined && (f['required'] === true) !== spec['required']) return false;
      if (
        spec['choices'] !== undefined &&
        !sameSet(
          ((f['choices'] as Raw[] | undefined) ?? []).map((c) => c['id'] as string),
          spec['choices'] as string[],
        )
      )
        return false;
    }
  }
  if (m['time'] !== undefined) {
    const t = m['time'] as Raw;
    const d = new Date(now);
    const minute = d.getUTCHours() * 60 + d.getUTCMinutes();
    if (t['days'] !== undefined && !(t['days'] as string[]).includes(DAYS[d.getUTCDay()]!)) return false;
    const from = t['from'] !== undefined ? hhmm(t['from'] as string) : 0;
    const to = t['to'] !== undefined ? hhmm(t['to'] as string) : 1440;
    if (from < to ? !(minute >= from && minute < to) : !(minute >= from || minute < to)) return false;
  }
  if (m['pending'] !== undefined) {
    const p = m['pending'] as Raw;
    const pending = Math.max(0, now - Date.parse(ev['time'] as string));
    if (p['min'] !== undefined && pending < ms(p['min'] as string)) return false;
    if (p['max'] !== undefined && pending >= ms(p['max'] as string)) return false;
  }
  return true;
}

function refTier(decision: unknown): 'deny' | 'ask' | 'allow' {
  if (decision === 'deny') return 'deny';
  if (decision === 'ask') return 'ask';
  const o = (decision as Raw)['option'];
  return typeof o === 'string' && optionEffect(o) === 'deny' ? 'deny' : 'allow';
}

function reference(policy: Raw, ev: Raw, grants: Grant[], now: number): RefVerdict {
  const data = ev['data'] as Raw;
  if (data['kind'] === 'auth') return { action: 'ask' };
  const options = ((data['options'] as Raw[] | undefined) ?? []).map((o) => o['id'] as string);
  const fields = (data['fields'] as Raw[] | undefined) ?? [];
  const form = data['kind'] === 'form' || fields.length > 0;
  const approval = typeof ev['approvaldigest'] === 'string' || data['kind'] === 'permission';
  const rules = (policy['rules'] as Raw[] | undefined) ?? [];
  for (const tier of ['deny', 'ask', 'allow'] as const) {
    for (const r of rules) {
      if (refTier(r['decision']) !== tier || !refMatches((r['match'] as Raw | undefined) ?? {}, ev, now)) continue;
      const id = r['id'] as string;
      if (tier === 'ask') return { action: 'ask', rule: id };
      const dec = r['decision'];
      if (tier === 'deny') {
        let refuse: string | undefined;
        if (typeof dec === 'object') {
          const o = (dec as Raw)['option'] as string;
          if (options.includes(o) || (form && (o === 'decline' || o === 'cancel'))) refuse = o;
        } else {
          refuse = form ? 'decline' : options.includes('deny') ? 'deny' : options.find((o) => optionEffect(o) === 'deny');
        }
        return refuse !== undefined ? { action: 'answer', rule: id, answer: { option: refuse } } : { action: 'ask', rule: id };
      }
      const d = dec as Raw;
      if (typeof d['option'] === 'string') {
        const o = d['option'];
        if (!options.includes(o)) continue;
        const text = ((r['match'] as Raw | undefined) ?? {})['approval_text'];
        if (approval && (typeof text !== 'string' || ev['approvaldigest'] !== approvalDigest(text))) continue;
        return { action: 'answer', rule: id, answer: { option: o } };
      }
      const values = d['values'] as Raw;
      if (!form || approval) continue;
      let fits = true;
      for (const [k, v] of Object.entries(values)) {
        const f = fields.find((x) => x['id'] === k);
        const choices = ((f?.['choices'] as Raw[] | undefined) ?? []).map((c) => c['id']);
        if (!f) fits = false;
        else if (f['type'] === 'string') fits = false;
        else if (f['type'] === 'number')
          fits &&= typeof v === 'number' && (f['min'] === undefined || v >= (f['min'] as number)) && (f['max'] === undefined || v <= (f['max'] as number));
        else if (f['type'] === 'boolean') fits &&= typeof v === 'boolean';
        else if (f['multi'] === true) fits &&= Array.isArray(v) && new Set(v).size === v.length && v.every((x) => choices.includes(x));
        else fits &&= typeof v === 'string' && choices.includes(v);
      }
      for (const f of fields) if (f['required'] === true && !Object.keys(values).includes(f['id'] as string)) fits = false;
      if (fits) return { action: 'answer', rule: id, answer: { values } };
    }
  }
  for (const g of grants) {
    if (now >= g.expires || ev['approvaldigest'] !== g.digest || ev['agent'] !== g.agent || ev['subject'] !== g.tool) continue;
    const o = options.includes('allow') ? 'allow' : options.find((x) => optionEffect(x) === 'allow');
    if (o !== undefined) return { action: 'answer', rule: g.id, answer: { option: o } };
  }
  return { action: 'ask' };
}

// ---- generators ----------------------------------------------------------------------------

const AGENTS = ['claude-code', 'demo-agent', 'ci-bot'];
const SESSIONS = ['s1', 'prod-1', 'dev-2'];
const TOOLS = ['Bash', 'Edit', 'AskUserQuestion'];
const KINDS = ['permission', 'input', 'auth', 'review', 'form', 'other'];
const TEXTS = ['npm test', 'rm -rf /', 'make deploy'];
const OPTION_SETS = [['allow', 'deny'], ['allow', 'reject'], ['a', 'b'], ['yes', 'no'], ['allow_once', 'deny'], ['no', 'deny', 'allow'], []];
const FIELD_POOL: Raw[] = [
  { id: 'pm', type: 'select', required: true, choices: [{ id: 'npm' }, { id: 'pnpm' }] },
  { id: 'n', type: 'number', min: 0, max: 5 },
  { id: 'ok', type: 'boolean', required: true },
  { id: 'tags', type: 'select', multi: true, choices: [{ id: 'a' }, { id: 'b' }] },
  { id: 'name', type: 'string' },
  { id: 'other', type: 'select', other: true, choices: [{ id: 'x' }] },
];
const T0 = Date.parse('2026-08-03T00:00:00.000Z');

const pattern = (pool: string[]) => fc.oneof(fc.constantFrom(...pool), fc.constantFrom('*', `${pool[0]!.slice(0, 3)}*`, '*-1'));
const strings = (pool: string[]) => fc.oneof(pattern(pool), fc.uniqueArray(pattern(pool), { minLength: 1, maxLength: 2 }));
const hm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 30)).map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const dur = fc.tuple(fc.integer({ min: 1, max: 90 }), fc.constantFrom('s', 'm', 'h')).map(([n, u]) => `${n}${u}`);
const value = fc.oneof(
  fc.integer({ min: -1, max: 7 }),
  fc.boolean(),
  fc.constantFrom('npm', 'pnpm', 'yarn', 'x', 'a'),
  fc.constantFrom(['a'], ['a', 'b'], ['b', 'c'], ['a', 'a']),
);

const CONDITIONS = {
  agent: strings(AGENTS),
  session: strings(SESSIONS),
  tool: strings(TOOLS),
  kind: fc.uniqueArray(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 3 }),
  severity: fc.constantFrom('notice', 'warn'),
  approval_text: fc.constantFrom(...TEXTS),
  options: fc.constantFrom(...OPTION_SETS.filter((s) => s.length > 0)),
  fields: fc
    .subarray(FIELD_POOL, { minLength: 1, maxLength: 3 })
    .map((fs) =>
      Object.fromEntries(
        fs.map((f) => [f['id'], f['type'] === 'select' ? { type: 'select', choices: (f['choices'] as Raw[]).map((c) => c['id']) } : { type: f['type'] }]),
      ),
    ),
  time: fc
    .record({ days: fc.subarray(DAYS, { minLength: 1 }), from: hm, to: hm }, { requiredKeys: [] })
    .filter((t) => t.from === undefined || t.to === undefined || t.from !== t.to),
  pending: fc.record({ min: dur, max: dur }, { requiredKeys: [] }).filter((p) => p.min === undefined || p.max === undefined || ms(p.max) > ms(p.min)),
} as const;

/** At most three conditions per rule, so that rules match often enough to matter. */
const matchArb = fc
  .subarray(Object.keys(CONDITIONS) as (keyof typeof CONDITIONS)[], { maxLength: 3 })
  .chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, CONDITIONS[k]])) as Record<string, fc.Arbitrary<unknown>>));

/** Candidate answers per field of the pool: mostly fitting, some not (out of range, repeated, not a choice). */
const CANDIDATES: Record<string, unknown[]> = {
  pm: ['pnpm', 'npm', 'yarn'],
  ok: [true, false, 'yes'],
  n: [3, 0, 5, 6, -1],
  tags: [['a', 'b'], ['b'], ['a', 'a'], 'a'],
  other: ['x', 'free text'],
};
/** Decisions, biased toward the request's own option and field ids so that allow rules get exercised. */
const decisionArbFor = (optionIds: string[], fieldIds: string[]) =>
  fc.oneof(
    fc.constantFrom('deny', 'ask'),
    fc.constantFrom(...optionIds, 'allow', 'deny', 'a', 'reject', 'decline', 'yes', 'allow_once').map((option) => ({ option })),
    fc
      .tuple(
        fc
          .subarray(fieldIds.filter((id) => id in CANDIDATES).length ? fieldIds.filter((id) => id in CANDIDATES) : ['pm'], { minLength: 1 })
          .chain((ids) => fc.tuple(...ids.map((id) => fc.constantFrom(...CANDIDATES[id]!).map((v) => [id, v] as const)))),
        fc.option(fc.tuple(fc.constantFrom('pm', 'n', 'ok', 'tags', 'name', 'other', 'zz'), value), { freq: 3 }),
      )
      .map(([good, bad]) => ({ values: Object.fromEntries(bad ? [...good, bad] : good) })),
  );

/** A rule as a person writes it, made valid where the schema would refuse it (the refusals have their own tests). */
const ruleArbFor = (optionIds: string[], fieldIds: string[]) =>
  fc.tuple(matchArb, decisionArbFor(optionIds, fieldIds)).map(([match, decision]) => {
    const m: Raw = { ...match };
    const kinds = m['kind'] as string[] | undefined;
    if (refTier(decision) !== 'ask' && kinds?.includes('auth'))
      m['kind'] = kinds.filter((k) => k !== 'auth').length ? kinds.filter((k) => k !== 'auth') : ['form'];
    if (typeof decision === 'object' && 'option' in decision && optionEffect(decision.option) !== 'deny' && m['approval_text'] === undefined) {
      const k = ((m['kind'] as string[] | undefined) ?? ['input']).filter((x) => x !== 'permission');
      m['kind'] = k.length ? k : ['input'];
    }
    if (typeof decision === 'object' && 'values' in decision && m['kind'] !== undefined && !(m['kind'] as string[]).includes('form'))
      m['kind'] = [...(m['kind'] as string[]), 'form'];
    return { match: m, decision };
  });

const policyArbFor = (optionIds: string[], fieldIds: string[]) =>
  fc
    .array(ruleArbFor(optionIds, fieldIds), { maxLength: 6 })
    .map((rules) => ({ version: 1, timezone: 'UTC', rules: rules.map((r, i) => ({ id: `r${i}`, ...r })) }));

const MARK = 'FREE-TEXT-0xDEADBEEF';
const requestArb = fc
  .record({
    agent: fc.constantFrom(...AGENTS),
    session: fc.constantFrom(...SESSIONS),
    subject: fc.option(fc.constantFrom(...TOOLS), { nil: undefined }),
    kind: fc.oneof(fc.constantFrom(...KINDS), fc.constantFrom('form', 'input')),
    severity: fc.constantFrom('notice', 'warn'),
    text: fc.option(fc.constantFrom(...TEXTS), { nil: undefined, freq: 2 }),
    options: fc.constantFrom(...OPTION_SETS),
    fields: fc.subarray(FIELD_POOL, { maxLength: 4 }),
    age: fc.integer({ min: 0, max: 3 * 3_600_000 }),
    now: fc.integer({ min: 0, max: 7 * 86_400_000 }),
    prompt: fc.string({ maxLength: 40 }),
  })
  .map((r) => {
    const now = T0 + r.now;
    const ev: Raw = {
      aep: '0.1',
      id: '01REQPROP00000000000000000',
      type: 'attention.requested',
      time: new Date(now - r.age).toISOString(),
      source: `aep://h/agent/${r.agent}/session/${r.session}`,
      agent: r.agent,
      session: r.session,
      seq: 1,
      severity: r.severity,
      capture: 'metadata',
      ...(r.subject !== undefined ? { subject: r.subject } : {}),
      ...(r.text !== undefined ? { approvaldigest: approvalDigest(r.text) } : {}),
      data: {
        kind: r.kind,
        prompt: `${MARK} ${r.prompt}`,
        ...(r.options.length ? { options: r.options.map((id) => ({ id, label: `${MARK} ${id}` })) } : {}),
        ...(r.fields.length
          ? {
              fields: r.fields.map((f) => ({
                ...f,
                label: `${MARK} label`,
                ...(f['choices'] ? { choices: (f['choices'] as Raw[]).map((c) => ({ ...c, label: MARK })) } : {}),
              })),
            }
          : {}),
      },
    };
    return { ev, now, r };
  });

/** A request, a policy biased toward it, and grants often for the very request (sometimes expired, or for another). */
const caseArb = requestArb.chain((req) =>
  fc.tuple(
    fc.constant(req),
    policyArbFor(
      req.r.options,
      req.r.fields.map((f) => f['id'] as string),
    ),
    fc.array(
      fc.record({
        agent: fc.constantFrom(req.r.agent, ...AGENTS),
        tool: fc.constantFrom(req.r.subject ?? 'Bash', ...TOOLS),
        text: fc.constantFrom(req.r.text ?? 'npm test', ...TEXTS),
        ttl: fc.integer({ min: 1, max: 4 * 86_400_000 }),
        ago: fc.integer({ min: 0, max: 4 * 86_400_000 }),
      }),
      { maxLength: 2 },
    ),
  ),
);

function toGrants(specs: { agent: string; tool: string; text: string; ttl: number; ago: number }[], now: number): Grant[] {
  return specs.map((s) => {
    const made = now - s.ago;
    const r = grantFromCommand({ agent: s.agent, tool: s.tool, digest: approvalDigest(s.text), text: s.text, ttl: s.ttl }, made, {
      defaultTtlMs: 1,
      maxTtlMs: 30 * 86_400_000,
    });
    if (!r.ok) throw new Error(r.message);
    return r.grant;
  });
}

test('property: the delegate decides exactly as the reference evaluation of the same rules, and no decision carries free text', () => {
  fc.assert(
    fc.property(caseArb, ([{ ev, now }, rawPolicy, grantSpecs]) => {
      const policy = parsePolicy(JSON.stringify(rawPolicy), { file: 'random.json' });
      const grants = toGrants(grantSpecs, now);
      const facts = requestFacts(ev)!;
      const d = decide(new BuiltinEngine(policy), grants, facts, { now, timezone: 'UTC', firstSeen: now });
      const want = reference(rawPolicy, ev, grants, now);
      const got =
        d.verdict.action === 'answer'
          ? { action: 'answer', rule: d.verdict.rule, answer: d.verdict.answer }
          : { action: 'ask', ...(d.verdict.rule !== undefined ? { rule: d.verdict.rule } : {}) };
      assert.deepEqual(got, want);
      // No free text: nothing planted in the prompt or labels, anywhere in the decision or its trace.
      assert.ok(!JSON.stringify(d).includes(MARK));
      if (d.verdict.action === 'answer') {
        const data = ev['data'] as Raw;
        const offered = ((data['options'] as Raw[] | undefined) ?? []).map((o) => o['id']);
        const fields = (data['fields'] as Raw[] | undefined) ?? [];
        const a = d.verdict.answer;
        if (a.option !== undefined)
          assert.ok(offered.includes(a.option) || (fields.length + Number(data['kind'] === 'form') > 0 && ['decline', 'cancel'].includes(a.option)), a.option);
        for (const [k, v] of Object.entries(a.values ?? {})) {
          const f = fields.find((x) => x['id'] === k)!;
          assert.notEqual(f['type'], 'string', 'never a string field');
          const choices = ((f['choices'] as Raw[] | undefined) ?? []).map((c) => c['id']);
          for (const x of Array.isArray(v) ? v : [v]) if (typeof x === 'string') assert.ok(choices.includes(x), `a choice id: ${x}`);
        }
        // An approval request is answered other than by refusing only with the proof text in hand.
        if (d.verdict.tier === 'allow' && (ev['approvaldigest'] !== undefined || data['kind'] === 'permission')) {
          assert.equal(approvalDigest(d.verdict.proofText ?? ''), ev['approvaldigest']);
        }
      }
    }),
    { numRuns: RUNS },
  );
});

test('property: prompts and labels change nothing: the same request with other text decides the same', () => {
  fc.assert(
    fc.property(caseArb, fc.string({ maxLength: 60 }), ([{ ev, now }, rawPolicy], other) => {
      const policy = parsePolicy(JSON.stringify(rawPolicy), { file: 'random.json' });
      const engine = new BuiltinEngine(policy);
      const relabel = JSON.parse(JSON.stringify(ev).split(MARK).join(other.replace(/["\\]/g, ''))) as Raw;
      const a = decide(engine, [], requestFacts(ev)!, { now, timezone: 'UTC', firstSeen: now });
      const b = decide(engine, [], requestFacts(relabel)!, { now, timezone: 'UTC', firstSeen: now });
      assert.deepEqual(b, a);
    }),
    { numRuns: RUNS },
  );
});

test('property: values answers on forms (the structural-values rules alone) agree with the reference', () => {
  const formArb = fc
    .record({ fields: fc.subarray(FIELD_POOL, { minLength: 1, maxLength: 5 }), now: fc.integer({ min: 0, max: 86_400_000 }) })
    .chain(({ fields, now }) =>
      fc.tuple(
        fc.constant(fields),
        fc.constant(T0 + now),
        decisionArbFor(
          [],
          fields.map((f) => f['id'] as string),
        ).filter((d) => typeof d === 'object' && 'values' in d),
      ),
    );
  fc.assert(
    fc.property(formArb, ([fields, now, decision]) => {
      const rawPolicy = { version: 1, timezone: 'UTC', rules: [{ id: 'v', match: { kind: 'form' }, decision }] };
      const ev: Raw = {
        aep: '0.1',
        id: '01REQFORM00000000000000000',
        type: 'attention.requested',
        time: new Date(now).toISOString(),
        source: 'aep://h/agent/a/session/s',
        agent: 'a',
        session: 's',
        seq: 1,
        capture: 'metadata',
        data: { kind: 'form', prompt: MARK, fields: fields.map((f) => ({ ...f, label: MARK })) },
      };
      const d = decide(new BuiltinEngine(parsePolicy(JSON.stringify(rawPolicy))), [], requestFacts(ev)!, { now, timezone: 'UTC', firstSeen: now });
      const got = d.verdict.action === 'answer' ? { action: 'answer', rule: d.verdict.rule, answer: d.verdict.answer } : { action: 'ask' };
      assert.deepEqual(got, reference(rawPolicy, ev, [], now));
    }),
    { numRuns: RUNS },
  );
});
