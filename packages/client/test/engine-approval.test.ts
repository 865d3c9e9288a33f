// Contract C1, emitter side, in the engine shared by every emitter: a request with an approval
// text carries it as its prompt at the request's capture plus `approvaldigest`; an allowing
// answer without the proof of the complete text is nacked `invalid`; deny needs no proof.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { APPROVAL_DIGEST_ATTR, APPROVAL_PROOF_ATTR, approvalDigest, approvalProof, approvalView, redact } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { AttentionEngine } from '@aep/client';
import type { CommandDecision } from '@aep/client';
import { recordingPort, rulesOf } from './engine-port.js';

const OPTIONS = [
  { id: 'allow', label: 'Allow' },
  { id: 'deny', label: 'Deny' },
];
const COMMAND = 'echo "cleaning build cache"\nrm -rf ~';
const proofAttr = (id: string, text: string) => ({ attrs: { [APPROVAL_PROOF_ATTR]: approvalProof(id, text) } });

test('the prompt is the approval text at the capture (verbatim, §9.4, synthesized) and approvaldigest is set at every level', () => {
  const text = `${COMMAND} --token=abcdefghijklmnop /home/alice/x`;
  for (const capture of ['none', 'metadata', 'redacted', 'full'] as const) {
    const { port } = recordingPort(capture);
    const engine = new AttentionEngine(port);
    const p = engine.requestAttention({ session: 's', kind: 'permission', prompt: 'ignored', subject: 'Bash', approvalText: text, options: OPTIONS });
    const ev = p.event as unknown as Record<string, unknown>;
    assert.equal(ev[APPROVAL_DIGEST_ATTR], approvalDigest(text), capture);
    const prompt = (p.event.data as { prompt?: string } | undefined)?.prompt;
    if (capture === 'none') assert.equal(p.event.data, undefined);
    if (capture === 'metadata') assert.equal(prompt, 'test-agent requests permission: Bash');
    if (capture === 'redacted') assert.equal(prompt, redact(text));
    if (capture === 'full') assert.equal(prompt, text, 'verbatim: never cut, never folded');
    assert.equal(approvalView(p.event).complete, capture === 'full', `${capture}: complete only where the text is whole`);
    // Prebuilt data: the engine replaces its prompt the same way.
    const q = engine.requestAttention({
      session: 's',
      kind: 'permission',
      data: { kind: 'permission', prompt: 'claude-code requests permission: Bash', options: OPTIONS, respond_via: ['control'] },
      subject: 'Bash',
      approvalText: text,
      options: OPTIONS,
    });
    if (capture !== 'none') assert.equal((q.event.data as { prompt: string }).prompt, prompt);
    void engine.shutdown();
  }
});

test('allow needs the proof of this request and this text; deny, unmatched text and out-of-band answers need none', async () => {
  const { port, respond, emitted } = recordingPort('full');
  const engine = new AttentionEngine(port);
  const raise = () => engine.requestAttention({ session: 's', kind: 'permission', approvalText: COMMAND, options: OPTIONS });
  const a = raise();
  const other = raise();
  const bare = await respond(a.id, { option: 'allow' });
  assert.deepEqual(rulesOf(bare), ['control.respond.approval-proof']);
  assert.ok(bare.status === 'rejected' && bare.reason === 'invalid' && /complete input/.test(bare.detail ?? ''), JSON.stringify(bare));
  assert.deepEqual(bare.status === 'rejected' && bare.issues?.[0]?.path, '/approvalproof');
  assert.deepEqual(
    rulesOf(await respond(a.id, { option: 'allow' }, proofAttr(other.id, COMMAND))),
    ['control.respond.approval-proof'],
    'a proof for another request',
  );
  assert.deepEqual(
    rulesOf(await respond(a.id, { option: 'allow' }, proofAttr(a.id, 'echo "cleaning build cache"'))),
    ['control.respond.approval-proof'],
    'a proof of a cut text',
  );
  assert.deepEqual(
    rulesOf(await respond(a.id, { option: 'allow' }, { attrs: { [APPROVAL_PROOF_ATTR]: approvalDigest(COMMAND) } })),
    ['control.respond.approval-proof'],
    'the public digest is not a proof',
  );
  assert.deepEqual(rulesOf(await respond(a.id, { text: 'Allow' })), ['control.respond.approval-proof'], 'text that maps to allow needs the proof too');
  assert.deepEqual(engine.pending(), [a.id, other.id], 'nacks keep the request pending');
  const ok = await respond(a.id, { text: ' allow ' }, proofAttr(a.id, COMMAND));
  assert.equal(ok.status, 'accepted');
  ok.after?.();
  assert.deepEqual((await a).status === 'answered' && (await a).answer, { option: 'allow' });

  const b = raise();
  const deny = await respond(b.id, { text: 'no way, that deletes my home' });
  assert.equal(deny.status, 'accepted', 'unmatched text denies with the text as reason (AEP-0008 §1), no proof needed');
  deny.after?.();
  assert.deepEqual((await b).status === 'answered' && (await b).answer, { option: 'deny', text: 'no way, that deletes my home' });
  const c = raise();
  assert.deepEqual(engine.answerOutOfBand(c.id, { option: 'allow' }, 'terminal'), { ok: true, issues: [] }, 'answered on the agent machine');
  assert.equal(emitted.filter((e) => e.type === 'control.rejected').length, 0, 'the engine decides; the connection emits acks');
  // Without an approval text nothing changes (callers opt in; docs/decisions.md "One answer path").
  const legacy = engine.requestAttention({ session: 's', kind: 'permission', prompt: 'Allow?', options: OPTIONS });
  assert.equal((legacy.event as unknown as Record<string, unknown>)[APPROVAL_DIGEST_ATTR], undefined);
  assert.equal((await respond(legacy.id, { option: 'allow' })).status, 'accepted');
  await engine.shutdown();
});

const TEXT = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom(COMMAND, 'git push --force', 'cat /home/bob/.ssh/id_rsa', 'export API_KEY=abcdefghijklmnopqrstu', 'a\u202Eb', ''),
  fc.array(fc.constantFrom('rm -rf ~', '; curl x | sh', '\n', 'x'.repeat(600)), { maxLength: 4 }).map((xs) => xs.join('')),
);
const LEVEL = fc.constantFrom<CaptureLevel>('none', 'metadata', 'redacted', 'full');
type ProofKind = 'right' | 'absent' | 'other-request' | 'other-text' | 'digest' | 'garbage';
const PROOF = fc.constantFrom<ProofKind>('right', 'absent', 'other-request', 'other-text', 'digest', 'garbage');
const ANSWER = fc.constantFrom(
  { option: 'allow' },
  { option: 'deny' },
  { text: 'allow' },
  { text: 'ALLOW' },
  { text: 'Deny' },
  { text: 'sure thing' },
  { option: 'deny', text: 'no' },
);

test('property: random texts, capture levels and proofs: an allowing answer is accepted iff its proof is of this request and the original text', async () => {
  await fc.assert(
    fc.asyncProperty(TEXT, LEVEL, PROOF, ANSWER, async (text, capture, proofKind, answer) => {
      const { port, respond } = recordingPort(capture);
      const engine = new AttentionEngine(port);
      const p = engine.requestAttention({ session: 's', kind: 'permission', subject: 'Bash', approvalText: text, options: OPTIONS });
      const sibling = engine.requestAttention({ session: 's', kind: 'permission', subject: 'Bash', approvalText: text, options: OPTIONS });
      const proof =
        proofKind === 'right'
          ? approvalProof(p.id, text)
          : proofKind === 'other-request'
            ? approvalProof(sibling.id, text)
            : proofKind === 'other-text'
              ? approvalProof(p.id, `${text} `)
              : proofKind === 'digest'
                ? approvalDigest(text)
                : proofKind === 'garbage'
                  ? 'f'.repeat(32)
                  : undefined;
      const d: CommandDecision = await respond(p.id, answer, proof === undefined ? {} : { attrs: { [APPROVAL_PROOF_ATTR]: proof } });
      const allowing = answer.option === 'allow' || answer.text === 'allow' || answer.text === 'ALLOW';
      assert.equal(d.status === 'accepted', !allowing || proofKind === 'right', `${JSON.stringify(answer)} ${proofKind}`);
      if (d.status === 'rejected') assert.deepEqual(rulesOf(d), ['control.respond.approval-proof']);
      // What was emitted: the digest of the original text, and a prompt complete exactly when the text is whole at that level.
      assert.equal((p.event as unknown as Record<string, unknown>)[APPROVAL_DIGEST_ATTR], approvalDigest(text));
      const complete = capture === 'full' || (capture === 'redacted' && redact(text) === text);
      assert.equal(approvalView(p.event).complete, complete);
      await engine.shutdown();
    }),
    { numRuns: Number(process.env['AEP_FUZZ_RUNS'] ?? 300) },
  );
});
