// `*` globs for agent, source, session and tool names: `*` matches any run of characters,
// everything else is literal and case-sensitive. Compiled once per pattern.
const cache = new Map<string, RegExp>();

export function globMatch(pattern: string, value: string): boolean {
  let re = cache.get(pattern);
  if (!re) {
    re = new RegExp(
      `^${pattern
        .split('*')
        .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      's',
    );
    if (cache.size > 10_000) cache.clear();
    cache.set(pattern, re);
  }
  return re.test(value);
}
