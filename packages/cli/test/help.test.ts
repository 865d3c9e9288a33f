// Every command answers --help with exit 0 and documents itself; usage errors exit 2 without a
// stack trace. (The exit-code table itself is pinned by test/exit-codes.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAep } from '../../../test/support/cli.js';
import { EXIT } from '../src/util/exit.js';

const COMMANDS = [
  'up',
  'relay',
  'validate',
  'downlevel',
  'redact',
  'match',
  'form',
  'tail',
  'inbox',
  'respond',
  'answer',
  'cancel',
  'pause',
  'resume',
  'demo',
  'claude-code',
  'mcp',
];

test('aep --help lists every command', async () => {
  const r = await runAep(['--help']);
  assert.equal(r.code, 0);
  for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`\\n  ${c}\\b`), `missing ${c}`);
});

test('aep --version prints the version', async () => {
  const r = await runAep(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^0\.1\.0\s*$/);
});

test('an unknown command is a usage error (exit 2), no stack trace', async () => {
  const r = await runAep(['no-such-command']);
  assert.equal(r.code, EXIT.USAGE);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

for (const c of COMMANDS) {
  test(`aep ${c} --help exits 0 and describes options`, async () => {
    const r = await runAep([c, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Usage: aep ${c}`));
  });
}

test('a reader that goes away (aep … | head) ends the command quietly: exit 0, no stack trace', async () => {
  const { spawnAep } = await import('../../../test/support/cli.js');
  for (const args of [['--help'], ['mcp', 'wrap', '--help'], ['validate', '--help']]) {
    const child = spawnAep(args);
    child.stdout?.destroy(); // close the read end before the help text is written: EPIPE
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      stderr += b.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
    assert.doesNotMatch(stderr, /EPIPE|\n\s+at /, args.join(' '));
  }
});
