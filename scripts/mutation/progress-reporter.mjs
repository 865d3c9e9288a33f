// StrykerJS reporter "progress-jsonl": appends one JSON line per tested mutant to
// reports/mutation/<target>/progress.jsonl as the run goes (Stryker writes its own reports only
// at the end). A run stopped early (a session ending, Ctrl-C) still leaves its results:
// `node scripts/mutation/survivors.mjs --progress reports/mutation/protocol/progress.jsonl`.
import fs from 'node:fs';
import path from 'node:path';
import { commonTokens, declareClassPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin';

export class ProgressJsonlReporter {
  static inject = tokens(commonTokens.options);

  constructor(options) {
    const file = options.progressJsonl?.fileName ?? 'reports/mutation/progress.jsonl';
    this.file = path.resolve(file);
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    fs.writeFileSync(this.file, '');
  }

  onMutantTested(m) {
    const line = {
      id: m.id,
      fileName: path.relative(process.cwd(), m.fileName),
      mutatorName: m.mutatorName,
      replacement: m.replacement,
      location: m.location,
      status: m.status,
      killedBy: m.killedBy,
      coveredBy: m.coveredBy,
      static: m.static,
    };
    fs.appendFileSync(this.file, JSON.stringify(line) + '\n');
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'progress-jsonl', ProgressJsonlReporter)];

export const strykerValidationSchema = {
  $schema: 'http://json-schema.org/draft-07/schema',
  type: 'object',
  properties: { progressJsonl: { type: 'object', properties: { fileName: { type: 'string' } }, additionalProperties: false } },
};
