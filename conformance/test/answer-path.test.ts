// Differential tests of issue 13 ("one answer path"): random forms and random answers through
//   (1) validateFormAnswer (protocol, with the constraints elicitationToForm returns),
//   (2) the attention engine given the constraints as data (in process, and over a real relay),
//   (3) the MCP bridge's real AepSide (the engine plus its old content-check hook) over the relay,
//   (4) the Claude Code adapter's request (engineRequest: constraints as data, translateAnswer as
//       the translation hook), wired as the daemon wires it,
// must give the same verdict. The generators live in conformance/support/answer-cases.ts; the
// inbox's client-side hints join in conformance/test/answer-hints.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { elicitationToForm, validateFormAnswer, RULES } from '@aep/protocol';
import type { FieldSpec, FormConstraints } from '@aep/protocol';
import { AttentionEngine, CommandSender, EmitterConnection } from '@aep/client/node';
import type { AnswerCheck, AttentionRequestInput, CommandDecision } from '@aep/client';
import { AepSide } from '@aep/mcp-bridge';
import { translateAnswer } from '@aep/adapter-claude-code';
import type { AttentionSpec } from '@aep/adapter-claude-code';
import { startRelayProcess } from '../../test/support/cli.js';
import { recordingPort } from '../../packages/client/test/engine-port.js';
import { aepCase, askUserQuestionCase, mcpCase, refusalOrJunkAnswer } from '../support/answer-cases.js';
import type { McpCase } from '../support/answer-cases.js';

const RUNS = Number(process.env['AEP_FUZZ_RUNS'] ?? 300);

interface Verdict {
  ok: boolean;
  rules: string[];
}
const verdictOf = (d: CommandDecision): Verdict => ({
  ok: d.status === 'accepted',
  rules: d.status === 'rejected' ? (d.issues ?? []).map((i) => i.rule).sort() : [],
});
const fromIssues = (issues: { rule: string }[]): Verdict => ({ ok: issues.length === 0, rules: issues.map((i) => i.rule).sort() });

/** The engine over a recording port: one request, one answer. */
async function engineVerdict(input: Omit<AttentionRequestInput, 'session'>, answer: unknown): Promise<Verdict> {
  const { port, respond } = recordingPort('redacted');
  const engine = new AttentionEngine(port);
  const p = engine.requestAttention({ session: 's', ...input });
  const d = await respond(p.id, answer);
  await engine.shutdown();
  return verdictOf(d);
}

/** The adapter's answers.ts as the engine's translation hook, exactly as request.ts `engineRequest` wires it. */
function adapterHook(spec: AttentionSpec): (a: Parameters<typeof translateAnswer>[1]) => AnswerCheck {
  return (answer) => translateAnswer(spec, answer);
}

function mapped(c: McpCase): { fields: FieldSpec[]; constraints: FormConstraints; data: Record<string, unknown> } {
  const r = elicitationToForm(c.params, { agent: 'diff', capture: 'redacted' });
  assert.ok(r.ok, r.ok ? '' : r.reason);
  if (!r.ok) throw new Error(r.reason);
  return { fields: r.data.fields, constraints: r.constraints, data: r.data as unknown as Record<string, unknown> };
}

function adapterElicitationSpec(c: McpCase, fields: FieldSpec[]): AttentionSpec {
  return {
    hook: 'elicitation',
    request: { type: 'attention.requested', session: 's', capture: 'redacted' } as AttentionSpec['request'],
    schema: c.params.requestedSchema,
    fields,
  };
}

test('differential (in process): MCP elicitation answers — protocol, engine with constraints, engine + adapter hook agree', async () => {
  let rejected = 0;
  await fc.assert(
    fc.asyncProperty(mcpCase, async (c) => {
      const m = mapped(c);
      const protocol = fromIssues(validateFormAnswer(m.fields, c.values, { constraints: m.constraints }));
      const engine = await engineVerdict({ kind: 'form', data: m.data, fields: m.fields, constraints: m.constraints }, { values: c.values });
      const adapter = await engineVerdict(
        {
          kind: 'form',
          data: m.data,
          fields: m.fields,
          constraints: m.constraints,
          validate: adapterHook(adapterElicitationSpec(c, m.fields)),
        },
        { values: c.values },
      );
      assert.deepEqual(engine, protocol, 'the engine judges exactly as validateFormAnswer with the constraints');
      assert.equal(
        adapter.ok,
        protocol.ok,
        `adapter hook verdict on ${JSON.stringify(c.values)} for ${JSON.stringify(c.params.requestedSchema)}: ${adapter.rules.join(',')} vs ${protocol.rules.join(',')}`,
      );
      for (const r of adapter.rules) assert.ok(protocol.rules.includes(r), `adapter rule ${r} is one the engine reports too (${protocol.rules.join(',')})`);
      for (const r of engine.rules) assert.ok(r in RULES, r);
      if (!protocol.ok) rejected++;
    }),
    { numRuns: RUNS },
  );
  assert.ok(rejected > RUNS / 10 && rejected < RUNS * 0.9, `both verdicts are exercised (${rejected}/${RUNS} rejected)`);
});

test('differential (in process): AEP forms and AskUserQuestion forms — protocol, engine, engine + adapter ask hook agree', async () => {
  await fc.assert(
    fc.asyncProperty(aepCase, async (c) => {
      const protocol = fromIssues(validateFormAnswer(c.fields, c.values));
      const engine = await engineVerdict({ kind: 'form', prompt: 'p', fields: c.fields }, { values: c.values });
      assert.deepEqual(engine, protocol);
    }),
    { numRuns: RUNS },
  );
  await fc.assert(
    fc.asyncProperty(askUserQuestionCase, async (c) => {
      const questions = c.fields.map((f) => ({
        question: f.label,
        header: 'H',
        ...(f.multi ? { multiSelect: true } : {}),
        options: (f.choices ?? []).map((ch) => ({ label: ch.label })),
      }));
      const spec: AttentionSpec = {
        hook: 'ask',
        request: { type: 'attention.requested', session: 's', capture: 'redacted' } as AttentionSpec['request'],
        questions,
        fields: c.fields,
        toolInput: { questions },
      };
      const protocol = fromIssues(validateFormAnswer(c.fields, c.values));
      const engine = await engineVerdict({ kind: 'form', prompt: 'p', fields: c.fields }, { values: c.values });
      const adapter = await engineVerdict({ kind: 'form', prompt: 'p', fields: c.fields, validate: adapterHook(spec) }, { values: c.values });
      assert.deepEqual(engine, protocol);
      assert.deepEqual(adapter, protocol, 'the ask hook adds no check of its own');
    }),
    { numRuns: RUNS },
  );
});

test('differential (in process): refusals and junk answers are judged alike on every form path (contract C2)', async () => {
  await fc.assert(
    fc.asyncProperty(mcpCase, refusalOrJunkAnswer, async (c, answer) => {
      const m = mapped(c);
      const engine = await engineVerdict({ kind: 'form', data: m.data, fields: m.fields, constraints: m.constraints }, answer);
      const adapter = await engineVerdict(
        {
          kind: 'form',
          data: m.data,
          fields: m.fields,
          constraints: m.constraints,
          validate: adapterHook(adapterElicitationSpec(c, m.fields)),
        },
        answer,
      );
      assert.equal(adapter.ok, engine.ok, JSON.stringify(answer));
      const refusal = answer['option'] === 'decline' || answer['option'] === 'cancel' || /^\s*(decline|cancel)\s*$/i.test(String(answer['text'] ?? ''));
      assert.equal(engine.ok, refusal && typeof answer['option'] !== 'number', `${JSON.stringify(answer)}: only decline/cancel close a form without values`);
    }),
    { numRuns: Math.min(RUNS, 200) },
  );
});

// ---- over a real relay: the engine with constraints, the real bridge, the adapter hook ----------

const TOKEN = 'answer-path-token';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
});
after(async () => {
  await relay.stop();
});

test('differential over a real relay: engine + constraints, the MCP bridge (AepSide) and the adapter hook give the verdict validateFormAnswer gives', async () => {
  const conn = await EmitterConnection.connect({
    url: relay.url,
    token: TOKEN,
    agent: 'diff-engine',
    capture: 'redacted',
    control: { accepts: ['control.attention.respond'] },
  });
  const engine = new AttentionEngine(conn);
  const bridge = await AepSide.start({ relay: relay.url, token: TOKEN, agent: 'diff-bridge', session: 'diff-bridge', capture: 'redacted' });
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, ackWindowMs: 10_000 });
  const ask = async (session: string, requestId: string, values: Record<string, unknown>) => {
    const r = await sender.respond({ session, requestId, answer: { values } });
    assert.ok(r.status === 'accepted' || r.status === 'rejected', `${r.status} ${r.reason ?? ''}`);
    return { ok: r.status === 'accepted', rules: (r.issues ?? []).map((i) => i.rule).sort(), reason: r.reason };
  };
  let accepted = 0;
  try {
    await fc.assert(
      fc.asyncProperty(mcpCase, async (c) => {
        const m = mapped(c);
        // JSON round trip: what the relay carries (e.g. -0 arrives as 0).
        const values = JSON.parse(JSON.stringify(c.values)) as Record<string, unknown>;
        const protocol = fromIssues(validateFormAnswer(m.fields, values, { constraints: m.constraints }));
        const viaEngine = engine.requestAttention({ session: 'diff-engine', kind: 'form', data: m.data, fields: m.fields, constraints: m.constraints });
        const e = await ask('diff-engine', viaEngine.id, values);
        const viaAdapter = engine.requestAttention({
          session: 'diff-engine',
          kind: 'form',
          data: m.data,
          fields: m.fields,
          constraints: m.constraints,
          validate: adapterHook(adapterElicitationSpec(c, m.fields)),
        });
        const a = await ask('diff-engine', viaAdapter.id, values);
        const handle = bridge.askForm({ data: m.data as never, requestedSchema: c.params.requestedSchema, message: c.params.message, timeoutMs: 60_000 });
        const b = await ask('diff-bridge', handle.id, values);
        assert.deepEqual({ ok: e.ok, rules: e.rules }, protocol, 'engine over the relay');
        assert.equal(a.ok, protocol.ok, `adapter hook: ${a.rules.join(',')} vs ${protocol.rules.join(',')}`);
        assert.equal(b.ok, protocol.ok, `bridge: ${b.rules.join(',')} vs ${protocol.rules.join(',')} on ${JSON.stringify(values)}`);
        for (const r of [...a.rules, ...b.rules])
          assert.ok(protocol.rules.includes(r), `${r} is reported by the one answer path too (${protocol.rules.join(',')})`);
        if (!e.ok) {
          engine.dismiss(viaEngine.id);
        } else accepted++;
        if (!a.ok) engine.dismiss(viaAdapter.id);
        if (!b.ok) handle.withdraw('differential test');
      }),
      { numRuns: Math.min(RUNS, 120) },
    );
  } finally {
    await sender.close();
    await bridge.close();
    await engine.shutdown();
    await conn.close();
  }
  assert.ok(accepted > 0, 'some answers were accepted over the relay');
});
