// "Redaction before claiming `redacted`" (issue 12 item 1, client part): whatever a caller
// passes, an EmitterConnection never sends an event labelled `redacted` that carries a planted
// secret verbatim: the §9.4 pipeline runs on every member its capture tree annotates
// `redacted`, on the [metadata*] text members (prompt, labels, answer values) and on members no
// tree annotates; `full` members are dropped. At `full` nothing changes; below `redacted` the
// down-level applies. Property-based over random prose holding random secrets (the issue's
// `sk-proj-…` key among them). Runs: AEP_FUZZ_RUNS (default 300).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EmitterConnection, redactPayload } from '@aep/client/node';
import type { CaptureLevel, SocketFactory } from '@aep/client/node';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

/** A socket that never opens: emit() builds and buffers, nothing leaves the process. */
const inert: SocketFactory = () => ({ send: () => {}, close: () => {}, terminate: () => {}, bufferedAmount: 0, isOpen: false });

const conns: EmitterConnection[] = [];
function emitter(capture: CaptureLevel): EmitterConnection {
  const c = new EmitterConnection({ url: 'http://127.0.0.1:9', agent: 'redactor', capture, socketFactory: inert, redact: { home: '/home/operator' } });
  conns.push(c);
  return c;
}
after(async () => {
  for (const c of conns) await c.close(0);
});

const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const chars = (alphabet: string, min: number, max: number) => fc.string({ unit: fc.constantFrom(...alphabet.split('')), minLength: min, maxLength: max });

/** Secrets the §9.4 floor and hardening rows must catch (AEP-0003 §9.4). */
const secret = fc.oneof(
  chars(alnum + '_-', 20, 48).map((s) => `sk-proj-${s}`),
  chars('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 16, 16).map((s) => `AKIA${s}`),
  chars(alnum, 36, 36).map((s) => `ghp_${s}`),
  chars(alnum + '-._~+/', 12, 40).map((s) => `Bearer ${s}`),
  chars(alnum, 10, 30).map((s) => `password=${s}`),
  fc.tuple(chars(alnum, 8, 20), chars(alnum, 8, 20), chars(alnum, 8, 20)).map(([a, b, c]) => `eyJ${a}.${b}.${c}`),
);
/** What must not survive: for `password=v` and `Bearer t` the value part. */
const core = (s: string) => (s.startsWith('password=') ? s.slice('password='.length) : s.startsWith('Bearer ') ? s.slice('Bearer '.length) : s);
const prose = chars('abcdefghij klmnop,.;!?', 0, 20);
const text = fc.tuple(prose, secret, prose).map(([a, s, b]) => ({ text: `${a} ${s} ${b}`, secret: core(s) }));

/** Envelope attributes the type needs (attention requests are notice+, lifecycle events name their request). */
const attrsFor = (type: string) =>
  type === 'attention.requested' ? { severity: 'notice' as const } : type === 'attention.answered' ? { subject: 'req-1' } : {};

/** Event shapes covering each member class: redacted-annotated, [metadata*], unannotated, full. */
const shaped = fc.tuple(text, fc.constantFrom('run', 'tool', 'ask', 'answer', 'status', 'vendor', 'error')).map(([t, kind]) => {
  const s = t.text;
  switch (kind) {
    case 'run':
      return { type: 'run.started', data: { trigger: 'user', prompt: s }, secret: t.secret };
    case 'tool':
      return { type: 'tool.requested', data: { tool: { name: 'Bash' }, args_redacted: { command: s }, args: { command: s }, note: s }, secret: t.secret };
    case 'ask':
      return {
        type: 'attention.requested',
        data: {
          kind: 'form',
          prompt: s,
          fields: [{ id: 'f1', type: 'select', label: s, choices: [{ id: 'c1', label: s }] }],
          options: [{ id: 'o1', label: s }],
        },
        secret: t.secret,
      };
    case 'answer':
      return { type: 'attention.answered', data: { answer: { text: s, values: { f1: s, n: 3 } }, via: 'control' }, secret: t.secret };
    case 'status':
      return { type: 'progress.status', data: { message: s, phase: 'p' }, secret: t.secret };
    case 'vendor':
      return { type: 'x.acme.note.written', data: { body: s, nested: [{ deep: s }] }, secret: t.secret };
    default:
      return { type: 'error.raised', data: { error: { type: 'E', message: s }, code: 'X' }, secret: t.secret };
  }
});

test('at redacted no planted secret is sent verbatim, whatever member carries it; full members are dropped', () => {
  const conn = emitter('redacted');
  fc.assert(
    fc.property(shaped, fc.constantFrom<CaptureLevel>('redacted', 'full'), (ev, requested) => {
      const out = conn.emit('s1', ev.type, structuredClone(ev.data), { capture: requested, ...attrsFor(ev.type) });
      assert.equal(out.capture, 'redacted', 'the ceiling is honoured, and at redacted the emitter is the redacting hop');
      const wire = JSON.stringify(out);
      assert.ok(!wire.includes(ev.secret), `${ev.secret} survived in ${wire}`);
      if (ev.type === 'tool.requested') assert.equal((out.data as Record<string, unknown>)['args'], undefined, 'a full member never rides at redacted');
      // Idempotent: the pipeline again changes nothing.
      assert.deepEqual(redactPayload(ev.type, out.data as Record<string, unknown>, { home: '/home/operator' }), out.data);
    }),
    { numRuns: RUNS },
  );
});

test('the issue 12 key: an sk-proj key in a redacted progress message does not pass verbatim; structure stays', () => {
  const conn = emitter('redacted');
  const key = 'sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab';
  const out = conn.emit(
    's1',
    'progress.status',
    { message: `deploying with ${key} from /home/operator/app`, phase: 'deploy', percent: 40 },
    { capture: 'redacted' },
  );
  assert.deepEqual(out.data, { message: 'deploying with [REDACTED:secret] from ~/app', phase: 'deploy', percent: 40 });
});

test('at full nothing changes; below redacted the down-level removes the text', () => {
  const full = emitter('full');
  const meta = emitter('metadata');
  fc.assert(
    fc.property(shaped, (ev) => {
      const attrs = attrsFor(ev.type);
      const a = full.emit('s1', ev.type, structuredClone(ev.data), { capture: 'full', ...attrs });
      assert.equal(a.capture, 'full');
      assert.deepEqual(a.data, ev.data);
      // Below redacted the mechanical down-level applies (AEP-0003 §6.4); it keeps members no tree
      // annotates (step 6), which the relay re-gates (issue 12 item 1, relay part), so the
      // unannotated vendor extra is left out of this half.
      const { note: _note, ...annotated } = structuredClone(ev.data) as Record<string, unknown>;
      const b = meta.emit('s1', ev.type, annotated, { capture: 'full', ...attrs });
      assert.equal(b.capture ?? 'metadata', 'metadata');
      assert.ok(!JSON.stringify(b).includes(ev.secret));
    }),
    { numRuns: RUNS },
  );
});
