// The client error table is code (packages/client/src/errors.ts): every row of it is the row of
// docs/errors.md "Client SDK", meaning for meaning, and the docs list no code the table lacks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_ERRORS, ClientError } from '@aep/client';
import { repoRoot } from '../../../test/support/cli.js';

function documented(): Map<string, string> {
  const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');
  const start = doc.indexOf('## Client SDK');
  assert.ok(start >= 0, 'docs/errors.md has a "Client SDK" section');
  const end = doc.indexOf('\n## ', start + 1);
  const rows = new Map<string, string>();
  for (const line of doc.slice(start, end < 0 ? undefined : end).split('\n')) {
    const m = /^\| `(AEP_CLIENT_[A-Z_]+)` \| (.*) \|$/.exec(line);
    if (m) rows.set(m[1]!, m[2]!);
  }
  return rows;
}

test('CLIENT_ERRORS and docs/errors.md "Client SDK" hold the same codes with the same meanings', () => {
  assert.deepEqual(Object.fromEntries(documented()), { ...CLIENT_ERRORS });
});

test('a ClientError carries its code, message, HTTP status and wire code', () => {
  const e = new ClientError('AEP_CLIENT_REFUSED', 'relay refused: HTTP 401', { status: 401 });
  assert.equal(e.code, 'AEP_CLIENT_REFUSED');
  assert.equal(e.status, 401);
  assert.equal(e.wireCode, undefined);
  assert.equal(e.name, 'ClientError');
  assert.ok(e instanceof Error);
  assert.equal(new ClientError('AEP_CLIENT_HTTP', 'x', { wireCode: 'invalid-filter' }).wireCode, 'invalid-filter');
});
