// Reading a policy file from disk (YAML or JSON, the Cedar file it names relative to it).
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { DelegateError } from './errors.js';
import { POLICY_LIMITS, parsePolicy } from './policy.js';
import type { Policy } from './policy.js';

/** Reads and checks a policy file; `AEP_DELEGATE_POLICY_READ` / `AEP_DELEGATE_POLICY` / `AEP_DELEGATE_CEDAR`. */
export function loadPolicyFile(file: string): Policy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DelegateError(
      'AEP_DELEGATE_POLICY_READ',
      `cannot read the policy file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const dir = dirname(file);
  return parsePolicy(text, {
    file: basename(file),
    readCedar: (name) => {
      const p = isAbsolute(name) ? name : join(dir, name);
      const t = readFileSync(p, 'utf8');
      if (t.length > POLICY_LIMITS.bytes) throw new Error(`larger than ${POLICY_LIMITS.bytes} bytes`);
      return t;
    },
  });
}
