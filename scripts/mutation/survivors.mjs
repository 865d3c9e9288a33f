#!/usr/bin/env node
// Prints the score per file and the surviving (and uncovered) mutants of a Stryker JSON report
// (mutation-testing-elements schema) as Markdown, for docs/testing.md.
//
//   node scripts/mutation/survivors.mjs [reports/mutation/protocol/mutation.json | …/progress.jsonl] [--all] [--without PREFIX] [--recheck RECHECK.jsonl]
//
// --recheck: statuses from recheck.mjs output override the run's (a mutant it killed is Killed).
//
// Without --all only the score table and the survivor count per file and mutator are printed.
// --without PREFIX: the score as if the test files whose name starts with PREFIX did not exist.
// Exact for a run made with AEP_MUTATION_LAST=PREFIX (those files ran last, so a mutant they
// killed passed every other covering file): killed by such a file -> survived (or no coverage
// when no other file covers it). A timeout is kept as detected when another file covers the
// mutant (it cannot tell which file looped; docs/testing.md notes the approximation).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const args = process.argv.slice(2);
const all = args.includes('--all');
const wi = args.indexOf('--without');
const without = wi >= 0 ? args[wi + 1] : undefined;
const ri = args.indexOf('--recheck');
const recheck = new Map();
if (ri >= 0) {
  for (const l of readFileSync(args[ri + 1], 'utf8').split('\n'))
    if (l.trim()) {
      const r = JSON.parse(l);
      recheck.set(r.id, r.after);
    }
}
const file = args.find((a, i) => !a.startsWith('--') && (wi < 0 || i !== wi + 1) && (ri < 0 || i !== ri + 1)) ?? 'reports/mutation/protocol/mutation.json';
const report = file.endsWith('.jsonl') ? fromProgress(file) : JSON.parse(readFileSync(file, 'utf8'));

// progress.jsonl (progress-reporter.mjs) -> the report's shape; sources read from the work tree.
function fromProgress(path) {
  const files = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    files[m.fileName] ??= { source: readFileSync(m.fileName, 'utf8'), mutants: [] };
    files[m.fileName].mutants.push(m);
  }
  return { files };
}

const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const rows = [];
const survivors = [];
const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, compileError: 0, runtimeError: 0, ignored: 0 };
for (const [name, f] of Object.entries(report.files)) {
  const c = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, compileError: 0, runtimeError: 0, ignored: 0 };
  const lines = f.source.split('\n');
  for (const m0 of f.mutants) {
    const m1 = recheck.get(m0.id) === 'Killed' ? { ...m0, status: 'Killed' } : m0;
    const m = without ? asIfWithout(m1, report, without) : m1;
    const key = {
      Killed: 'killed',
      Timeout: 'timeout',
      Survived: 'survived',
      NoCoverage: 'noCoverage',
      CompileError: 'compileError',
      RuntimeError: 'runtimeError',
      Ignored: 'ignored',
    }[m.status];
    c[key]++;
    total[key]++;
    if (UNDETECTED.has(m.status)) {
      const line = m.location.start.line;
      survivors.push({
        file: relative(process.cwd(), name),
        line,
        col: m.location.start.column,
        mutator: m.mutatorName,
        status: m.status,
        replacement: m.replacement,
        code: (lines[line - 1] ?? '').trim(),
      });
    }
  }
  rows.push([relative(process.cwd(), name), c]);
}

function asIfWithout(m, rep, prefix) {
  const name = (id) => {
    const t = rep.testFiles
      ? Object.values(rep.testFiles)
          .flatMap((tf) => tf.tests)
          .find((x) => x.id === id)
      : undefined;
    return String(t?.name ?? id)
      .split('/')
      .pop();
  };
  const dropped = (id) => name(id).startsWith(prefix);
  const others = (m.coveredBy ?? []).filter((id) => !dropped(id));
  const undetected = others.length > 0 ? 'Survived' : 'NoCoverage';
  if (m.status === 'Killed') return (m.killedBy ?? []).some((id) => !dropped(id)) ? m : { ...m, status: undetected };
  if (m.status === 'Timeout' || m.status === 'RuntimeError') return others.length > 0 ? m : { ...m, status: 'NoCoverage' };
  if (m.status === 'Survived') return { ...m, status: undetected };
  return m;
}

// Stryker's score: detected / (detected + undetected); runtime errors count as detected.
const score = (c) => {
  const detected = c.killed + c.timeout + c.runtimeError;
  const valid = detected + c.survived + c.noCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
};

console.log('| file | score | killed | timeout | survived | no coverage | compile errors |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [name, c] of rows.sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
  console.log(`| ${name} | ${score(c).toFixed(2)} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${c.compileError} |`);
}
console.log(
  `| **all** | **${score(total).toFixed(2)}** | ${total.killed} | ${total.timeout} | ${total.survived} | ${total.noCoverage} | ${total.compileError} |`,
);
console.log();
const byMutator = {};
for (const s of survivors) byMutator[s.mutator] = (byMutator[s.mutator] ?? 0) + 1;
console.log(
  `Undetected: ${survivors.length} (${Object.entries(byMutator)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')})`,
);
if (all) {
  console.log();
  console.log('| where | mutator | status | original | mutant |');
  console.log('|---|---|---|---|---|');
  const cell = (s) => '`' + String(s).replace(/\|/g, '\\|').replace(/`/g, "'").slice(0, 90) + '`';
  for (const s of survivors.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line))) {
    console.log(`| ${s.file}:${s.line} | ${s.mutator} | ${s.status} | ${cell(s.code)} | ${cell(s.replacement ?? '')} |`);
  }
}
