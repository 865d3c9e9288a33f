// The bridge's error tables in code (src/errors.ts) and docs/errors.md say the same thing: every
// code with its exit status or JSON-RPC recipient, no row missing and no stale row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BRIDGE_ERRORS, BRIDGE_JSONRPC_ERRORS, BridgeError } from '@aep/mcp-bridge';
import { repoRoot } from '../../../test/support/cli.js';

function bridgeSection(): string[] {
  const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');
  const start = doc.indexOf('## MCP bridge');
  assert.ok(start >= 0, 'docs/errors.md has an MCP bridge section');
  const rest = doc.slice(start + 1);
  const end = rest.search(/\n## /);
  return (end === -1 ? rest : rest.slice(0, end)).split('\n');
}

test('local codes: docs/errors.md rows = BRIDGE_ERRORS (code and exit status)', () => {
  const rows = bridgeSection()
    .map((l) => /^\| `(AEP_MCP_[A-Z0-9_]+)` \| (\d+) \|/.exec(l))
    .filter((m) => m !== null)
    .map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(
    rows.sort(),
    Object.entries(BRIDGE_ERRORS)
      .map(([code, e]) => [code, e.exit])
      .sort(),
  );
});

test('JSON-RPC codes: docs/errors.md rows = BRIDGE_JSONRPC_ERRORS (code and recipient)', () => {
  const rows = bridgeSection()
    .map((l) => /^\| (-\d+) \| (server|host) \|/.exec(l))
    .filter((m) => m !== null)
    .map((m) => [Number(m[1]), m[2]]);
  assert.deepEqual(
    rows.sort(),
    Object.values(BRIDGE_JSONRPC_ERRORS)
      .map((e) => [e.code, e.to])
      .sort(),
  );
});

test('BridgeError carries the exit status of its table row', () => {
  const e = new BridgeError('AEP_MCP_SPAWN', 'x');
  assert.equal(e.exit, BRIDGE_ERRORS.AEP_MCP_SPAWN.exit);
  assert.equal(e.code, 'AEP_MCP_SPAWN');
});
