// The relay process's scavenge tuning (issue 19; src/gc.ts): which mode each machine gets, that
// the V8 flag really takes effect when set after start-up (a Node upgrade that ignores it fails
// here), and what `aep relay` does with a bad value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { SCAVENGE_ENV, SMALL_MACHINE_CPUS, scavengeMode, RelayOptionError } from '@aep/relay';
import { repoRoot, runAep } from '../../../test/support/cli.js';

describe('scavenge mode', () => {
  it('auto: one task on machines of up to 2 CPUs, V8 default above', () => {
    assert.equal(SMALL_MACHINE_CPUS, 2);
    for (const v of [undefined, '', 'auto']) {
      assert.equal(scavengeMode(1, v), 'single');
      assert.equal(scavengeMode(2, v), 'single');
      assert.equal(scavengeMode(3, v), 'parallel');
      assert.equal(scavengeMode(64, v), 'parallel');
    }
  });

  it('an explicit value wins over the CPU count', () => {
    assert.equal(scavengeMode(64, 'single'), 'single');
    assert.equal(scavengeMode(1, 'parallel'), 'parallel');
  });

  it('anything else is refused, naming the variable and the values', () => {
    for (const bad of ['Single', 'off', '1', ' single']) {
      assert.throws(
        () => scavengeMode(2, bad),
        (e: unknown) =>
          e instanceof RelayOptionError &&
          e.code === 'AEP_RELAY_BAD_OPTION' &&
          e.message.includes(SCAVENGE_ENV) &&
          e.message.includes('auto, single or parallel'),
      );
    }
  });
});

/**
 * Runs tuneGc (2 CPUs, the given override) in a fresh process under `--trace-parallel-scavenge`,
 * which prints one line per scavenger task, then makes garbage. Returns [task lines, scavenges]
 * after a forced full collection that marks the moment tuneGc returned in V8's own output (what
 * loading the modules collected before it ran as V8's default).
 */
function tasksPerScavenge(value: string, cpus = 2, nodeFlags: string[] = []): Promise<[number, number]> {
  const script = [
    "import { tuneGc } from '@aep/relay';",
    `const mode = tuneGc({ ${SCAVENGE_ENV}: process.argv[1] }, ${cpus});`,
    "process.stderr.write('MODE ' + mode + '\\n');",
    'globalThis.gc();',
    'let keep = [];',
    "for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 100000) keep = []; }",
  ].join('\n');
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--conditions=source',
      '--import',
      'tsx',
      '--expose-gc',
      '--trace-parallel-scavenge',
      '--trace-gc',
      '--input-type=module',
      '-e',
      script,
      value,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${err}`));
      assert.match(err, new RegExp(`^MODE ${scavengeMode(cpus, value)}$`, 'm'));
      // The main isolate's lines only (tsx may start a loader thread with an isolate of its own).
      const lines = out.split('\n');
      const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(lines.find((l) => / Scavenge /.test(l)) ?? '')?.[1];
      assert.ok(isolate, out.slice(0, 500));
      const all = lines.filter((l) => l.includes(`:${isolate}]`));
      const marker = all.findIndex((l) => / Mark-Compact .*testing/.test(l));
      assert.ok(marker >= 0, 'no forced collection in the trace');
      const mine = all.slice(marker + 1);
      resolve([mine.filter((l) => / scavenge\[/.test(l)).length, mine.filter((l) => / Scavenge /.test(l)).length]);
    });
  });
}

describe('tuneGc in a running process', () => {
  it('single: every scavenge runs as one task; parallel (the control): V8 splits them', async () => {
    const [singleTasks, singleScavenges] = await tasksPerScavenge('single');
    assert.ok(singleScavenges >= 5, `only ${singleScavenges} scavenges`);
    assert.equal(singleTasks, singleScavenges);
    const [parallelTasks, parallelScavenges] = await tasksPerScavenge('parallel');
    assert.ok(parallelScavenges >= 5, `only ${parallelScavenges} scavenges`);
    assert.ok(parallelTasks > parallelScavenges, `${parallelTasks} tasks for ${parallelScavenges} scavenges`);
  });

  it('auto on a larger machine leaves the flags the process started with; an explicit parallel overrides them', async () => {
    const [autoTasks, autoScavenges] = await tasksPerScavenge('auto', 8, ['--no-parallel-scavenge']);
    assert.ok(autoScavenges >= 5, `only ${autoScavenges} scavenges`);
    assert.equal(autoTasks, autoScavenges);
    const [parallelTasks, parallelScavenges] = await tasksPerScavenge('parallel', 8, ['--no-parallel-scavenge']);
    assert.ok(parallelTasks > parallelScavenges, `${parallelTasks} tasks for ${parallelScavenges} scavenges`);
  });
});

describe('aep relay and AEP_RELAY_SCAVENGE', () => {
  it('a bad value is a usage error naming the variable (exit 2), before anything listens', async () => {
    const r = await runAep(['relay', '--memory', '--port', '0'], undefined, { env: { ...process.env, [SCAVENGE_ENV]: 'fast' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^aep: AEP_CLI_BAD_OPTION: AEP_RELAY_SCAVENGE must be auto, single or parallel, got "fast"$/m);
    assert.equal(r.stdout, '');
  });
});
