// Pins the `aep` exit statuses and the CLI error table (issue 13 item 4, issue 20): every number
// in packages/cli/src/util/exit.ts, the exit table of docs/cli.md, and the code table of
// packages/cli/src/util/codes.ts row for row against docs/errors.md. One fault, one code, one
// exit status: no source passes a CLI code an exit status other than its table row's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '../packages/cli/src/util/exit.js';
import { CLI_ERRORS, exitColumn } from '../packages/cli/src/util/codes.js';
import { CliError, reportFatal } from '../packages/cli/src/util/errors.js';
import { repoRoot, runAep } from './support/cli.js';

const cliSrc = join(repoRoot, 'packages', 'cli', 'src');

function sources(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (n.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Rows `| a | b | c |` of the table that follows `heading` in a markdown file. */
function tableAfter(file: string, heading: RegExp): string[][] {
  const lines = readFileSync(join(repoRoot, 'docs', file), 'utf8').split('\n');
  const at = lines.findIndex((l) => heading.test(l));
  assert.ok(at >= 0, `${file}: no heading ${heading}`);
  const rows: string[][] = [];
  let inTable = false;
  for (const l of lines.slice(at + 1)) {
    if (l.startsWith('|')) {
      inTable = true;
      if (/^\|[-| ]+\|$/.test(l)) continue;
      rows.push(
        l
          .slice(1, -1)
          .split(' | ')
          .map((c) => c.trim()),
      );
    } else if (inTable || l.startsWith('#')) break;
  }
  return rows.slice(1); // header
}

test('exit statuses keep their numbers (a number never changes meaning)', () => {
  assert.deepEqual({ ...EXIT }, { OK: 0, INVALID: 1, USAGE: 2, REJECTED: 3, NO_ACK: 4, UNAVAILABLE: 5, INTERNAL: 70 });
});

test('docs/cli.md lists exactly these exit statuses', () => {
  const rows = tableAfter('cli.md', /^## Exit codes/);
  assert.deepEqual(
    rows.map((r) => Number(r[0])).sort((a, b) => a - b),
    Object.values(EXIT).sort((a, b) => a - b),
  );
  const internal = rows.find((r) => r[0] === String(EXIT.INTERNAL));
  assert.match(internal?.[1] ?? '', /unexpected fault/);
  assert.match(rows.find((r) => r[0] === String(EXIT.REJECTED))?.[1] ?? '', /wrong token/);
});

test('the CLI error table equals docs/errors.md row for row (code, exit status, meaning)', () => {
  const doc = tableAfter('errors.md', /^## `aep` command/).filter((r) => /^`AEP_CLI_/.test(r[0] ?? ''));
  const documented = doc.map((r) => [r[0]!.replace(/`/g, ''), r[1], r[2]]);
  const table = Object.entries(CLI_ERRORS).map(([code, info]) => [code, exitColumn(info), info.meaning]);
  assert.deepEqual(documented, table);
});

test('every CLI code is raised somewhere, and no source gives a CLI code another exit status than its row', () => {
  const files = sources(cliSrc).filter((f) => !f.endsWith(join('util', 'codes.ts')));
  const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
  for (const code of Object.keys(CLI_ERRORS))
    assert.ok(text.includes(`'${code}'`) || text.includes(`${code}:`), `${code} is in the table but nothing raises it`);
  const names = Object.fromEntries(Object.entries(EXIT).map(([k, v]) => [k, v]));
  const wrong: string[] = [];
  for (const m of text.matchAll(/new CliError\('(AEP_CLI_[A-Z_]+)'[^;]*?,\s*EXIT\.([A-Z_]+)\)/g)) {
    const info = (CLI_ERRORS as Record<string, { exit: number | undefined }>)[m[1]!];
    if (!info) wrong.push(`${m[1]} is not in the table`);
    else if (info.exit !== names[m[2]!]) wrong.push(`${m[1]} passed EXIT.${m[2]} but its row says ${info.exit}`);
  }
  assert.deepEqual(wrong, []);
});

test('CliError takes its exit status from the table; codes of other areas keep theirs', () => {
  assert.equal(new CliError('AEP_CLI_RELAY_REFUSED', 'x').exitCode, EXIT.REJECTED);
  assert.equal(new CliError('AEP_CLI_RELAY_REFUSED', 'x', EXIT.UNAVAILABLE).exitCode, EXIT.REJECTED);
  assert.equal(new CliError('AEP_CC_CONFIG_INVALID', 'x', EXIT.USAGE).exitCode, EXIT.USAGE);
  assert.equal(new CliError('AEP_SOMETHING_ELSE', 'x').exitCode, EXIT.INTERNAL);
});

test('an unexpected fault is AEP_CLI_INTERNAL with its own exit status, never the usage one', () => {
  const saved = process.exitCode;
  const write = process.stderr.write.bind(process.stderr);
  let printed = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    printed += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    reportFatal(new TypeError('x is not a function'));
    assert.equal(process.exitCode, EXIT.INTERNAL);
  } finally {
    process.stderr.write = write;
    process.exitCode = saved;
  }
  assert.equal(printed, 'aep: AEP_CLI_INTERNAL: x is not a function\n');
});

test('a usage error exits 2 and an unreachable relay 5, through the compiled CLI', async () => {
  const usage = await runAep(['respond', 'X']);
  assert.equal(usage.code, EXIT.USAGE);
  assert.match(usage.stderr, /^aep: AEP_CLI_USAGE: /);
  const down = await runAep(['inbox', '--relay', 'http://127.0.0.1:9', '--token', 't', '--timeout', '2000']);
  assert.equal(down.code, EXIT.UNAVAILABLE, down.stderr);
  assert.match(down.stderr, /^aep: AEP_CLI_RELAY_UNREACHABLE: /);
});
