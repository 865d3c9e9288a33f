// The pure mapping: recorded hook payloads -> AEP events at `metadata` and `redacted`
// (issue 6 "Must show"; AEP-0002 Annex A; AEP-0003 §9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { approvalDigest, validateEvent, validateStream } from '@aep/protocol';
import { ClaudeCodeMapper, dryRun, mappingConfig, parseCaptureOverride, parseHookInput } from '@aep/adapter-claude-code';
import type { EventDraft } from '@aep/adapter-claude-code';

const dir = fileURLToPath(new URL('./fixtures/hooks/', import.meta.url));
const fixtures = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(dir + f, 'utf8')) as Record<string, unknown>]),
);
const T0 = Date.parse('2026-08-01T09:00:00Z');
const meta = mappingConfig({ capture: 'metadata', home: '/home/dev' });
const red = mappingConfig({ capture: 'redacted', home: '/home/dev' });

// Free text from the fixtures that must never appear at `metadata` (AEP-0002 §5.1, §8).
const CONTENT = [
  'checkout page',
  'sk-live',
  'dev@example.com',
  '/home/dev',
  'hunter2',
  'API_KEY',
  'git push',
  'Which framework',
  'React',
  'Stripe',
  'Configure the deployment',
  'Staging',
  'Europe',
  'Sign in',
  'oauth',
  'waiting for your input',
  'exit code 1',
  'Framework',
];

function typesOf(name: string, cfg = meta): string[] {
  return dryRun(fixtures[name], cfg, { now: () => T0 }).map((e) => e['type'] as string);
}

test('every recorded fixture maps to schema-valid events at metadata and redacted', () => {
  assert.ok(Object.keys(fixtures).length >= 20);
  for (const [name, payload] of Object.entries(fixtures)) {
    for (const cfg of [meta, red, mappingConfig({ capture: 'full' }), mappingConfig({ capture: 'none' })]) {
      const events = dryRun(payload, cfg, { now: () => T0 });
      assert.ok(events.length > 0, `${name} maps to at least one event`);
      for (const e of events) {
        assert.deepEqual(validateEvent(e, { emitter: true }), [], `${name} @${cfg.capture}: ${JSON.stringify(e)}`);
        assert.equal(e['capture'], cfg.capture, `${name}: capture states the level applied (AEP-0003 §9.5)`);
        if (cfg.capture === 'none') assert.equal(e['data'], undefined);
      }
    }
  }
});

test('no free text from any fixture survives at metadata', () => {
  for (const [name, payload] of Object.entries(fixtures)) {
    const text = JSON.stringify(dryRun(payload, meta, { now: () => T0 }));
    for (const c of CONTENT) assert.ok(!text.includes(c), `${name} leaks "${c}" at metadata: ${text}`);
  }
});

test('at redacted, content passes through the §9.4 pipeline (secrets, home paths, PII)', () => {
  const prompt = dryRun(fixtures['UserPromptSubmit'], red, { now: () => T0 }).find((e) => e['type'] === 'run.started');
  const p = (prompt?.['data'] as Record<string, unknown>)['prompt'] as string;
  assert.match(p, /Add a checkout page/);
  assert.ok(!p.includes('sk-live-abcdefghijklmnopqrstuvwx'), p);
  assert.ok(!p.includes('dev@example.com'), p);
  assert.match(p, /\[REDACTED:secret\]/);
  const pre = dryRun(fixtures['PreToolUse'], red, { now: () => T0 }).find((e) => e['type'] === 'tool.requested')!;
  const d = pre['data'] as Record<string, unknown>;
  const args = d['args_redacted'] as Record<string, string>;
  assert.ok(args['command']!.startsWith('cat ~/shop/.env'), args['command']);
  assert.ok(!JSON.stringify(args).includes('abc123secretvalue'));
  // §9.3: the digest is of the ORIGINAL args, identical at every level.
  const metaPre = dryRun(fixtures['PreToolUse'], meta, { now: () => T0 }).find((e) => e['type'] === 'tool.requested')!;
  assert.equal((metaPre['data'] as Record<string, unknown>)['args_digest'], d['args_digest']);
  assert.match(d['args_digest'] as string, /^[0-9a-f]{32}$/);
  assert.equal((metaPre['data'] as Record<string, unknown>)['args_redacted'], undefined);
  const post = dryRun(fixtures['PostToolUse'], red, { now: () => T0 }).find((e) => e['type'] === 'tool.completed')!;
  assert.ok(!JSON.stringify(post).includes('hunter2hunter2'));
  const full = dryRun(fixtures['PreToolUse'], mappingConfig({ capture: 'full' }), { now: () => T0 }).find((e) => e['type'] === 'tool.requested')!;
  assert.deepEqual((full['data'] as Record<string, unknown>)['args'], (fixtures['PreToolUse'] as Record<string, unknown>)['tool_input']);
});

test('hook -> event types (the mapping table of the README)', () => {
  const cases: Record<string, string[]> = {
    SessionStart: ['session.started'],
    UserPromptSubmit: ['session.started', 'run.started'],
    PreToolUse: ['session.started', 'tool.requested'],
    PostToolUse: ['session.started', 'tool.completed'],
    PostToolUseFailure: ['session.started', 'tool.failed'],
    PermissionDenied: ['session.started', 'tool.denied'],
    PermissionRequest: ['session.started', 'attention.requested'],
    AskUserQuestion: ['session.started', 'tool.requested', 'attention.requested'],
    Stop: ['session.started'],
    SubagentStart: ['session.started', 'delegation.subagent.started', 'session.started', 'run.started'],
    SubagentToolUse: ['session.started', 'session.started', 'tool.requested'],
    SubagentStop: ['session.started', 'delegation.subagent.stopped'],
    'Notification-idle': ['session.started', 'attention.requested'],
    'Notification-permission': ['session.started', 'attention.requested'],
    'Notification-auth': ['session.started', 'progress.status'],
    PreCompact: ['session.started', 'progress.status'],
    PostCompact: ['session.started', 'session.compacted'],
    Elicitation: ['session.started', 'attention.requested'],
    'Elicitation-url': ['session.started', 'attention.requested'],
    ElicitationResult: ['session.started'],
    SessionEnd: ['session.started', 'session.ended'],
  };
  for (const [name, types] of Object.entries(cases)) assert.deepEqual(typesOf(name), types, name);
});

test('AskUserQuestion -> one kind:"form" event, pinned at metadata and redacted (AEP-0002 Annex A)', () => {
  const at = (cfg: typeof meta) => dryRun(fixtures['AskUserQuestion'], cfg, { now: () => T0 }).find((e) => e['type'] === 'attention.requested')!;
  const m = at(meta);
  assert.equal(m['subject'], 'AskUserQuestion');
  assert.equal(m['severity'], 'notice');
  assert.equal(m['cause'], 'dryrun-0002', 'cause = the tool.requested event');
  assert.deepEqual(m['data'], {
    kind: 'form',
    prompt: 'claude-code asks 2 questions',
    fields: [
      {
        id: '1',
        type: 'select',
        label: '1',
        required: true,
        other: true,
        choices: [
          { id: '1', label: '1' },
          { id: '2', label: '2' },
        ],
      },
      {
        id: '2',
        type: 'select',
        label: '2',
        required: true,
        multi: true,
        other: true,
        choices: [
          { id: '1', label: '1' },
          { id: '2', label: '2' },
          { id: '3', label: '3' },
        ],
      },
    ],
    respond_via: ['control'],
  });
  assert.deepEqual(at(red)['data'], {
    kind: 'form',
    prompt: 'claude-code asks 2 questions',
    fields: [
      {
        id: '1',
        type: 'select',
        label: 'Framework: Which framework should the checkout page use?',
        required: true,
        other: true,
        choices: [
          { id: '1', label: 'React' },
          { id: '2', label: 'Vue' },
        ],
      },
      {
        id: '2',
        type: 'select',
        label: 'Payments: Which payment providers do we support?',
        required: true,
        multi: true,
        other: true,
        choices: [
          { id: '1', label: 'Stripe' },
          { id: '2', label: 'PayPal' },
          { id: '3', label: 'Adyen' },
        ],
      },
    ],
    respond_via: ['control'],
  });
  const named = dryRun(fixtures['AskUserQuestion'], mappingConfig({ agent: 'cc-laptop' }), { now: () => T0 }).find((e) => e['type'] === 'attention.requested')!;
  assert.equal((named['data'] as Record<string, unknown>)['prompt'], 'cc-laptop asks 2 questions');
  assert.equal(named['agent'], 'cc-laptop');
});

test('PermissionRequest -> kind:"permission" with allow/deny; metadata prompt is structural', () => {
  const m = dryRun(fixtures['PermissionRequest'], meta, { now: () => T0 }).at(-1)!;
  assert.equal(m['subject'], 'Bash');
  assert.deepEqual(m['data'], {
    kind: 'permission',
    prompt: 'claude-code requests permission: Bash',
    options: [
      { id: 'allow', label: 'allow' },
      { id: 'deny', label: 'deny' },
    ],
    respond_via: ['control'],
  });
  const r = dryRun(fixtures['PermissionRequest'], red, { now: () => T0 }).at(-1)!;
  // Contract C1: the prompt is the approval text (the whole command), with its digest attribute.
  assert.deepEqual(r['data'], {
    kind: 'permission',
    prompt: 'git push origin main --force',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
    respond_via: ['control'],
  });
  assert.equal(r['approvaldigest'], approvalDigest('git push origin main --force'));
  assert.equal(m['approvaldigest'], r['approvaldigest'], 'the digest is structural: the same at metadata');
  // AskUserQuestion is answered through PreToolUse, never PermissionRequest (docs/integrations.md §1).
  const ask = {
    ...fixtures['PermissionRequest'],
    tool_name: 'AskUserQuestion',
    tool_input: (fixtures['AskUserQuestion'] as Record<string, unknown>)['tool_input'],
  };
  assert.deepEqual(
    dryRun(ask, meta, { now: () => T0 }).map((e) => e['type']),
    ['session.started'],
  );
});

test('Elicitation (form) -> kind:"form" per the shared mapping; URL mode is informational (oob)', () => {
  const m = dryRun(fixtures['Elicitation'], meta, { now: () => T0 }).at(-1)!;
  const d = m['data'] as Record<string, unknown>;
  assert.equal(d['prompt'], 'claude-code requests input (8 fields)');
  assert.equal(m['subject'], 'deploy');
  const fields = d['fields'] as Record<string, unknown>[];
  assert.deepEqual(
    fields.map((f) => [f['id'], f['type'], f['label'], f['required']]),
    [
      ['env', 'select', 'env', true],
      ['region', 'select', 'region', false],
      ['replicas', 'number', 'replicas', true],
      ['ratio', 'number', 'ratio', false],
      ['features', 'select', 'features', false],
      ['tags', 'select', 'tags', false],
      ['notify', 'boolean', 'notify', false],
      ['note', 'string', 'note', false],
    ],
  );
  assert.deepEqual(fields[2], { id: 'replicas', type: 'number', label: 'replicas', required: true, min: 1, max: 10 });
  assert.ok(
    fields.every((f) => f['other'] === undefined),
    'MCP enums are closed: no other',
  );
  assert.deepEqual(
    Object.keys(d).sort(),
    ['fields', 'kind', 'prompt', 'respond_via'],
    'exactly the Annex A members: no options (decline/cancel per contract C2)',
  );
  assert.deepEqual(d['respond_via'], ['control']);
  const r = dryRun(fixtures['Elicitation'], red, { now: () => T0 }).at(-1)!;
  const rf = (r['data'] as Record<string, unknown>)['fields'] as Record<string, unknown>[];
  assert.equal((r['data'] as Record<string, unknown>)['prompt'], 'Configure the deployment');
  assert.deepEqual(rf[0]!['choices'], [
    { id: 'staging', label: 'Staging' },
    { id: 'prod', label: 'Production' },
  ]);
  assert.deepEqual(rf[1]!['choices'], [
    { id: 'eu', label: 'Europe' },
    { id: 'us', label: 'United States' },
  ]);
  assert.equal(rf[4]!['multi'], true);
  const url = dryRun(fixtures['Elicitation-url'], red, { now: () => T0 }).at(-1)!;
  const ud = url['data'] as Record<string, unknown>;
  assert.equal(ud['kind'], 'auth');
  assert.deepEqual(ud['respond_via'], ['oob']);
  assert.ok(!JSON.stringify(url).includes('github.com/login'), 'the URL itself is never relayed');
});

test('capture overrides: attention.* at redacted over a metadata ceiling (AEP-0003 §9.1)', () => {
  const cfg = mappingConfig({ capture: 'metadata', overrides: [parseCaptureOverride('attention.*=redacted')] });
  const ev = dryRun(fixtures['PermissionRequest'], cfg, { now: () => T0 });
  assert.equal(ev[0]!['capture'], 'metadata');
  assert.equal(ev.at(-1)!['capture'], 'redacted');
  assert.equal(parseCaptureOverride('tool.requested:full').level, 'full');
  assert.throws(() => parseCaptureOverride('attention*=redacted'), { code: 'AEP_CC_CONFIG_INVALID' });
  assert.throws(() => parseCaptureOverride('attention.*=secret'), { code: 'AEP_CC_CONFIG_INVALID' });
});

test('malformed hook input is rejected with a stable code naming the rule', () => {
  const cases: [unknown, RegExp][] = [
    [null, /JSON object/],
    [{ session_id: 's' }, /hook_event_name/],
    [{ hook_event_name: 'Stop' }, /session_id/],
    [{ hook_event_name: 'PreToolUse', session_id: 's', tool_input: {} }, /tool_name/],
    [{ hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'AskUserQuestion', tool_input: { questions: [] } }, /questions/],
    [
      {
        hook_event_name: 'PreToolUse',
        session_id: 's',
        tool_name: 'AskUserQuestion',
        tool_input: { questions: [{ question: 'a', options: [{ label: 'x' }, { label: 'x' }] }] },
      },
      /repeats/,
    ],
  ];
  for (const [input, re] of cases)
    assert.throws(
      () => parseHookInput(input),
      (err: Error & { code?: string }) => err.code === 'AEP_CC_HOOK_INVALID' && re.test(err.message),
    );
});

test('a realistic session through one mapper is a valid stream (pairs, lineage, terminals)', () => {
  const mapper = new ClaudeCodeMapper(meta);
  const order = [
    'SessionStart',
    'UserPromptSubmit',
    'PreToolUse',
    'PostToolUse',
    'SubagentStart',
    'SubagentToolUse',
    'SubagentStop',
    'Notification-idle',
    'UserPromptSubmit',
    'PostToolUseFailure',
    'PreCompact',
    'PostCompact',
    'Elicitation-url',
    'ElicitationResult',
    'Stop',
    'SessionEnd',
  ];
  const drafts: EventDraft[] = [];
  order.forEach((n, i) => {
    const r = mapper.map(parseHookInput(fixtures[n]), T0 + i * 1000);
    drafts.push(...r.events);
    if (r.attention) drafts.push(r.attention.request);
  });
  const types = drafts.map((d) => `${d.session.length > 40 ? 'child' : 'main'}:${d.type}`);
  assert.deepEqual(types, [
    'main:session.started',
    'main:run.started',
    'main:tool.requested',
    'main:tool.completed',
    'main:delegation.subagent.started',
    'child:session.started',
    'child:run.started',
    'child:tool.requested',
    'child:run.finished',
    'child:session.ended',
    'main:delegation.subagent.stopped',
    'main:attention.requested',
    'main:attention.answered',
    'main:attention.resolved',
    'main:run.cancelled',
    'main:run.started',
    'main:tool.failed',
    'main:progress.status',
    'main:session.compacted',
    'main:attention.requested',
    'main:attention.answered',
    'main:attention.resolved',
    'main:run.finished',
    'main:session.ended',
  ]);
  // Envelope them like the daemon would and run the cross-event rules.
  const ids = new Map<string, string>();
  const seqs = new Map<string, number>();
  const events = drafts.map((d, i) => {
    const id = `01TEST${String(i).padStart(20, '0')}`;
    if (d.ref) ids.set(d.ref, id);
    const seq = seqs.get(d.session) ?? 0;
    seqs.set(d.session, seq + 1);
    const e: Record<string, unknown> = {
      aep: '0.1',
      id,
      type: d.type,
      time: new Date(T0 + i).toISOString(),
      source: `aep://h/agent/claude-code/session/${d.session}`,
      agent: 'claude-code',
      session: d.session,
      seq,
      capture: d.capture,
    };
    if (d.run) e['run'] = d.run;
    const subject = d.subjectRef ? ids.get(d.subjectRef) : d.subject;
    if (subject) e['subject'] = subject;
    const cause = d.causeRef ? ids.get(d.causeRef) : undefined;
    if (cause) e['cause'] = cause;
    if (d.data) e['data'] = d.data;
    return e;
  });
  assert.deepEqual(validateStream(events), []);
  for (const e of events) assert.deepEqual(validateEvent(e, { emitter: true }), []);
  const child = events.find((e) => e['type'] === 'session.started' && (e['data'] as Record<string, unknown> | undefined)?.['parent']);
  assert.ok(child, 'child session carries lineage');
  const cancelled = events.find((e) => e['type'] === 'run.cancelled')!;
  assert.deepEqual(cancelled['data'], { by: 'user', duration_ms: 7000 });
});

test('a late hook after SessionEnd stays in the ended session; a resumed session gets a fresh AEP session', () => {
  const mapper = new ClaudeCodeMapper(meta);
  const sid = 'resume-me';
  const h = (o: Record<string, unknown>) => mapper.map(parseHookInput({ session_id: sid, ...o }), T0);
  h({ hook_event_name: 'SessionStart', source: 'startup' });
  const end = h({ hook_event_name: 'SessionEnd', reason: 'other' });
  assert.deepEqual(
    end.events.map((e) => e.type),
    ['session.ended'],
  );
  const late = h({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: {}, tool_use_id: 'x' });
  assert.deepEqual(
    late.events.map((e) => [e.session, e.type]),
    [[sid, 'tool.completed']],
  );
  assert.deepEqual(h({ hook_event_name: 'SessionEnd', reason: 'other' }).events, [], 'never a second session.ended');
  const again = h({ hook_event_name: 'SessionStart', source: 'resume' });
  assert.deepEqual(
    again.events.map((e) => [e.session, e.type]),
    [[`${sid}.r1`, 'session.started']],
  );
  assert.equal(h({ hook_event_name: 'Stop' }).session, `${sid}.r1`);
});

test('a Notification about a dialog we already hold open does not open a duplicate request', () => {
  const mapper = new ClaudeCodeMapper(meta);
  mapper.pendingProbe = () => true;
  const r = mapper.map(parseHookInput(fixtures['Notification-permission']), T0);
  assert.deepEqual(
    r.events.map((e) => e.type),
    ['session.started', 'progress.status'],
  );
  assert.deepEqual(r.events[1]!.data, { phase: 'permission_prompt' });
});
