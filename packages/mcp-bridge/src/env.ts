// The wrapped MCP server's environment (issue 11 item 4): the server is third-party code the
// bridge starts; it must not inherit the credential that lets the bridge emit, answer and read on
// the relay. docs/security.md §8, README "What the wrapped server inherits".

/**
 * `AEP_*` variables that still reach the wrapped server: none of them is a credential.
 * `AEP_DEBUG` only asks for stack traces of unexpected faults. Every other `AEP_*` name (the
 * token, the relay URL, which may carry credentials in its userinfo or query, state paths, the
 * adapter's hook settings, and any name a later version adds) is removed: deny by default.
 */
export const CHILD_ENV_ALLOW: readonly string[] = ['AEP_DEBUG'];

/** Shortest secret value searched for in other variables (shorter strings match by accident). */
const MIN_SECRET_LENGTH = 8;

/** Result of {@link childEnvironment}. */
export interface ChildEnvironment {
  /** The environment to start the server with. */
  env: NodeJS.ProcessEnv;
  /** Names of the variables removed (never their values), sorted. */
  removed: string[];
}

/**
 * The environment for the wrapped server: `parent` without any `AEP_*` variable (case-insensitive
 * prefix) other than {@link CHILD_ENV_ALLOW}, and without any variable, whatever its name, whose
 * value contains one of `secrets` (the relay token in use, e.g. exported as `MY_TOKEN` and passed
 * with `--token "$MY_TOKEN"`). Pure; `parent` is not modified.
 */
export function childEnvironment(parent: NodeJS.ProcessEnv, secrets: readonly (string | undefined)[] = []): ChildEnvironment {
  const needles = secrets.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH);
  const env: NodeJS.ProcessEnv = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const aep = /^aep_/i.test(name) && !CHILD_ENV_ALLOW.includes(name);
    if (aep || needles.some((s) => value.includes(s))) {
      removed.push(name);
      continue;
    }
    // Own data property even for a variable named "__proto__".
    Object.defineProperty(env, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { env, removed: removed.sort() };
}
