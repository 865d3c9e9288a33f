// Runs conformance/mappings/claude-code*.json: Claude Code hooks -> attention.requested, through
// the adapter library (a fresh mapper, what a freshly started daemon emits) and through the CLI as
// a black box (`aep claude-code map --capture LEVEL --agent NAME`). `data` must equal the pin
// member for member (AEP-0002 Annex A; docs/integrations.md §3); permission requests
// must carry their approval text and digest (contract C1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { approvalDigest, approvalView } from '@aep/protocol';
import type { CaptureLevel } from '@aep/protocol';
import { dryRun, mappingConfig } from '@aep/adapter-claude-code';
import { runAep } from '../../test/support/cli.js';

interface MapCase {
  id: string;
  rule: string;
  agent: string;
  capture: CaptureLevel;
  hook: Record<string, unknown>;
  expect: { event: Record<string, unknown>; data: Record<string, unknown>; approvaldigest?: string; complete?: boolean; approvalText?: string };
}
const load = (name: string) => JSON.parse(readFileSync(new URL(`../mappings/${name}`, import.meta.url), 'utf8')) as { cases: MapCase[] };
const forms = load('claude-code.json');
const permissions = load('claude-code-permission.json');
const all = [...forms.cases, ...permissions.cases];

test('the Claude Code fixtures are not empty, name their rules, and pin both capture levels', () => {
  assert.ok(forms.cases.length >= 6 && permissions.cases.length >= 6);
  for (const c of all) assert.match(c.rule, /^mapping\.claude-code\./, c.id);
  assert.equal(new Set(all.map((c) => c.id)).size, all.length, 'case ids are unique');
  for (const rule of new Set(all.map((c) => c.rule))) {
    const levels = new Set(all.filter((c) => c.rule === rule).map((c) => c.capture));
    assert.ok(levels.has('metadata') && levels.has('redacted'), `${rule}: pinned at metadata and redacted`);
  }
});

function check(c: MapCase, ev: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(c.expect.event)) assert.deepEqual(ev[k] ?? (k === 'capture' ? 'metadata' : undefined), v, `${c.id}: envelope ${k}`);
  assert.deepEqual(ev['data'], c.expect.data, `${c.id}: data member for member`);
  if (c.expect.approvaldigest !== undefined) {
    assert.equal(ev['approvaldigest'], c.expect.approvaldigest);
    assert.equal(approvalDigest(c.expect.approvalText ?? ''), c.expect.approvaldigest, `${c.id}: the digest is of the approval text`);
    assert.equal(approvalView(ev).complete, c.expect.complete === true, `${c.id}: complete`);
  }
}

for (const c of all) {
  test(`${c.id} (${c.rule}) through the library`, () => {
    const events = dryRun(c.hook, mappingConfig({ agent: c.agent, capture: c.capture }), { now: () => 0 });
    const ev = events.find((e) => e['type'] === 'attention.requested');
    assert.ok(ev, 'one attention.requested');
    assert.equal(events.filter((e) => e['type'] === 'attention.requested').length, 1, 'one event per hook');
    check(c, ev);
  });
}

test('every case through the CLI (aep claude-code map)', async () => {
  for (const c of all) {
    const r = await runAep(['claude-code', 'map', '--capture', c.capture, '--agent', c.agent], JSON.stringify(c.hook));
    assert.equal(r.code, 0, `${c.id}: ${r.stderr}`);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const ev = events.find((e) => e['type'] === 'attention.requested');
    assert.ok(ev, c.id);
    check(c, ev);
  }
});
