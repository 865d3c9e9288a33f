// fast-check arbitraries of valid AEP events, generated the way the protocol property tests do
// (packages/protocol/test/property-validate.test.ts): every registered type plus vendor types,
// payloads from the schemas pruned to the declared capture, all three scope classes, optional
// attributes, extension attributes. Extended for the bridges: times with offsets and fractions
// of any precision, and extension names drawn also from the aep* family and the names the CE
// mapping reserves.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { CAPTURE_TREES, TYPE_REGISTRY, CORE_ATTRIBUTES, captureRank, scopeClass } from '@aep/protocol';
import { pruneToCapture, schemaArbitrary, type Schema } from '../../../../test/support/schema-arbitraries.js';

const schemaDir = new URL('../../../../schemas/', import.meta.url);

const text = fc.string({ minLength: 1, maxLength: 20 });

/** RFC 3339 times: `Z` or an offset, no fraction or one of 1-15 digits, `T`/`t`. */
export const rfc3339 = fc
  .record({
    d: fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2500-01-01T00:00:00Z'), noInvalidDate: true }),
    frac: fc.option(fc.stringMatching(/^[0-9]{1,15}$/), { nil: undefined }),
    off: fc.option(fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), { nil: undefined }),
    t: fc.constantFrom('T', 't'),
  })
  .map(({ d, frac, off, t }) => {
    const local = new Date(d.getTime() + (off ?? 0) * 60_000).toISOString();
    const zone =
      off === undefined
        ? 'Z'
        : `${off < 0 ? '-' : '+'}${String(Math.floor(Math.abs(off) / 60)).padStart(2, '0')}:${String(Math.abs(off) % 60).padStart(2, '0')}`;
    return `${local.slice(0, 10)}${t}${local.slice(11, 19)}${frac !== undefined ? '.' + frac : ''}${zone}`;
  });

const payloadArb = new Map<string, fc.Arbitrary<unknown>>();
for (const r of TYPE_REGISTRY) {
  if (!r.schema) continue;
  payloadArb.set(r.type, schemaArbitrary(JSON.parse(readFileSync(new URL(`types/${r.schema}`, schemaDir), 'utf8')) as Schema, rfc3339));
}
/** Every registered type plus vendor types of the three scope classes. */
export const TYPES = [...TYPE_REGISTRY.map((r) => r.type), 'x.acme.deploy.started', 'x.claude-code.control.restart', 'x.acme.agent.ping'];
const CORE = new Set<string>(CORE_ATTRIBUTES);

/** Names the CE mapping writes itself (an AEP extension of that name cannot pass through). */
export const CE_RESERVED = [
  'specversion',
  'datacontenttype',
  'dataschema',
  'aepversion',
  'aepagentid',
  'aepsessionid',
  'aeprunid',
  'aepstep',
  'aepsequence',
  'aepepoch',
  'aepcausationid',
  'aepseverity',
  'aepcapture',
];

/** Legal AEP extension names, biased toward the aep* family and (optionally) the reserved names. */
export function extName(withReserved: boolean): fc.Arbitrary<string> {
  const parts: fc.Arbitrary<string>[] = [fc.stringMatching(/^[a-z0-9]{1,20}$/), fc.stringMatching(/^[a-z0-9]{1,17}$/).map((s) => `aep${s}`)];
  if (withReserved) parts.push(fc.constantFrom(...CE_RESERVED));
  return fc.oneof(...parts).filter((n) => n.length <= 20 && !CORE.has(n) && (withReserved || !CE_RESERVED.includes(n)));
}

const extValue = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean());

/** Valid AEP events (consumer view, payloads honest to their declared capture). */
export function validEvent(opts: { reservedExtensions?: boolean } = {}): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record({
      type: fc.constantFrom(...TYPES),
      id: text,
      time: rfc3339,
      agent: text,
      session: text,
      run: text,
      step: text,
      subject: text,
      cause: text,
      host: fc.stringMatching(/^[a-z0-9-]{1,12}$/),
      seq: fc.nat(),
      epoch: fc.option(fc.nat(), { nil: undefined }),
      severity: fc.option(fc.constantFrom('debug', 'info', 'notice', 'warning', 'error', 'critical'), { nil: undefined }),
      capture: fc.constantFrom('none', 'metadata', 'redacted', 'full', undefined),
      traceparent: fc.option(
        fc.tuple(fc.stringMatching(/^[0-9a-f]{32}$/), fc.stringMatching(/^[0-9a-f]{16}$/), fc.constantFrom('00', '01')).map(([t, s, f]) => `00-${t}-${s}-${f}`),
        { nil: undefined },
      ),
      withRun: fc.boolean(),
      withData: fc.boolean(),
      withSubject: fc.boolean(),
      withCause: fc.boolean(),
      ext: fc.dictionary(extName(opts.reservedExtensions ?? false), extValue, { maxKeys: 3 }),
    })
    .chain((r) => (payloadArb.get(r.type) ?? fc.constant(undefined)).map((payload) => ({ ...r, payload })))
    .map((r) => {
      const cls = scopeClass(r.type);
      const e: Record<string, unknown> = {
        aep: '0.1',
        id: r.id,
        type: r.type,
        time: r.time,
        source: `aep://${r.host}/agent/a/session/${encodeURIComponent(r.session)}`,
        agent: r.agent,
      };
      if (r.withSubject || r.type.startsWith('attention.') || r.type === 'control.attention.respond') e['subject'] = r.subject;
      if (cls !== 'agent') {
        e['session'] = r.session;
        if (r.withRun) {
          e['run'] = r.run;
          e['step'] = r.step;
        }
      }
      if (cls === 'session') e['seq'] = r.seq;
      if (cls === 'session' && r.epoch !== undefined) e['epoch'] = r.epoch;
      if (r.severity !== undefined) e['severity'] = r.severity;
      if (r.capture !== undefined) e['capture'] = r.capture;
      if (r.traceparent !== undefined) e['traceparent'] = r.traceparent;
      if (r.withCause) e['cause'] = r.cause;
      Object.assign(e, r.ext);
      const capture = r.capture ?? 'metadata';
      if (capture !== 'none' && (r.withData || r.payload !== undefined)) {
        const tree = CAPTURE_TREES[r.type];
        const p = r.payload ?? {};
        e['data'] = tree ? pruneToCapture(p, tree, captureRank(capture)) : p;
      }
      return e;
    });
}
