// attr-match filters (AEP-0003 §6.1-§6.3) beyond the conformance corpus, from the mutation run
// (docs/testing.md): any-of arrays mixing exact values and type prefixes, the strictly-longer
// prefix rule, exact JSON equality without coercion, the defaults of absent attributes, the
// inclusive severity range and the detail of each refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFilter } from '@aep/protocol';

function matcher(filter: unknown): (e: unknown) => boolean {
  const f = compileFilter(filter);
  assert.ok(f.ok, JSON.stringify(f));
  return f.ok ? f.match : () => false;
}

test('an any-of array mixes exact values and type prefixes; a prefix matches only strictly longer types', () => {
  const m = matcher({ type: ['session.started', 'tool.*', 'attention.requested'] });
  assert.ok(m({ type: 'session.started' }));
  assert.ok(m({ type: 'attention.requested' }));
  assert.ok(m({ type: 'tool.completed' }) && m({ type: 'tool.x.y' }));
  assert.equal(m({ type: 'tool.' }), false, '"tool.*" needs something after "tool."');
  assert.equal(m({ type: 'tool' }), false);
  assert.equal(m({ type: 'toolbox.x' }), false);
  assert.equal(m({ type: 'session.ended' }), false);
  assert.equal(m({}), false, 'absent type never matches');
  assert.equal(m({ type: 5 }), false, 'a non-string value never matches a prefix');
  const only = matcher({ type: ['tool.*'] });
  assert.ok(only({ type: 'tool.a' }) && !only({ type: 'tool.' }) && !only({ type: 'x.tool.a' }));
});

test('values compare as exact JSON values: no coercion between numbers, strings and booleans', () => {
  const m = matcher({ epoch: [1, 2], flag: true, run: 'r1' });
  assert.ok(m({ epoch: 2, flag: true, run: 'r1' }));
  assert.equal(m({ epoch: '2', flag: true, run: 'r1' }), false);
  assert.equal(m({ epoch: 2, flag: 'true', run: 'r1' }), false);
  assert.equal(m({ epoch: 2, flag: 1, run: 'r1' }), false);
  assert.equal(m({ epoch: 2, flag: true, run: 'R1' }), false);
  assert.equal(m({ epoch: 3, flag: true, run: 'r1' }), false, 'every member must match');
  const one = matcher({ agent: ['a'] });
  assert.ok(one({ agent: 'a' }) && !one({ agent: 'b' }) && !one({}));
});

test('absent severity, capture and epoch take their defaults before matching; other absent attributes do not match', () => {
  assert.ok(matcher({ severity: 'info' })({}));
  assert.ok(matcher({ capture: 'metadata' })({}));
  assert.ok(matcher({ epoch: 0 })({}));
  assert.equal(matcher({ epoch: 1 })({}), false);
  assert.equal(matcher({ severity: 'notice' })({}), false);
  assert.equal(matcher({ capture: ['full', 'redacted'] })({}), false);
  assert.equal(matcher({ session: 's' })({}), false);
  assert.equal(matcher({ severity: 'info' })({ severity: null }), false, 'a present null is not the default');
});

test('severity ranges are inclusive at both ends; one bound alone is open on the other side', () => {
  const band = matcher({ severity: { gte: 'notice', lte: 'error' } });
  assert.deepEqual(
    ['debug', 'info', 'notice', 'warning', 'error', 'critical'].map((s) => band({ severity: s })),
    [false, false, true, true, true, false],
  );
  const low = matcher({ severity: { lte: 'info' } });
  assert.deepEqual(
    ['debug', 'info', 'notice'].map((s) => low({ severity: s })),
    [true, true, false],
  );
  assert.ok(low({}), 'absent severity is info');
  const high = matcher({ severity: { gte: 'critical' } });
  assert.ok(high({ severity: 'critical' }) && !high({ severity: 'error' }));
});

test('each refusal names the rule and what is wrong', () => {
  const cases: [unknown, string, string, RegExp][] = [
    [[], 'invalid-filter.not-object', '', /^invalid-filter\.not-object: an attr-match filter must be a JSON object$/],
    [{ time: 'x' }, 'invalid-filter.forbidden-key', '/time', /^invalid-filter\.forbidden-key: "time" is not filterable$/],
    [{ 'Bad-Key': 1 }, 'invalid-filter.unknown-key', '/Bad-Key', /is neither a filterable attribute nor a legal extension name$/],
    [{ type: '*' }, 'invalid-filter.bare-star', '/type', /a bare `\*` is not a pattern/],
    [{ type: 'to*l.x' }, 'invalid-filter.wildcard', '/type', /"to\*l\.x": a `\*` is only allowed as a trailing `\.\*`$/],
    [{ agent: 'a.*' }, 'invalid-filter.wildcard', '/agent', /"a\.\*": wildcards are only allowed on `type`$/],
    [{ type: [] }, 'invalid-filter.empty-array', '/type', /an inclusion array must not be empty$/],
    [{ epoch: 1.5 }, 'invalid-filter.bad-value', '/epoch', /got the non-integer number 1\.5$/],
    [{ run: { a: 1 } }, 'invalid-filter.bad-value', '/run', /got an object$/],
    [{ run: [['x']] }, 'invalid-filter.bad-value', '/run/0', /got a nested array$/],
    [{ run: [null] }, 'invalid-filter.bad-value', '/run/0', /got null$/],
    [{ severity: {} }, 'invalid-filter.severity-comparison', '/severity', /needs `gte` and\/or `lte`$/],
    [{ severity: { gt: 'info' } }, 'invalid-filter.severity-comparison', '/severity/gt', /"gt" is not a comparison; use `gte`\/`lte`$/],
    [{ severity: { gte: 'loud' } }, 'invalid-filter.severity-comparison', '/severity/gte', /"loud" is not one of the six severity levels$/],
    [{ 'a/b~c': 1 }, 'invalid-filter.unknown-key', '/a~1b~0c', /"a\/b~c"/],
  ];
  for (const [filter, rule, path, re] of cases) {
    const f = compileFilter(filter);
    assert.equal(f.ok, false, JSON.stringify(filter));
    if (f.ok) continue;
    assert.deepEqual(
      f.issues.map((i) => [i.rule, i.path]),
      [[rule, path]],
      JSON.stringify(filter),
    );
    assert.match(f.issues[0]!.message, re, JSON.stringify(filter));
  }
  assert.ok(compileFilter({ ext1: 'x', type: 'tool.*', severity: 'info' }).ok, 'extension names, a type pattern and a plain severity are fine');
});
