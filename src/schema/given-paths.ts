/**
 * The dot-separated paths of every value a user wrote in a spec (`spec.loadBalancer.inter`), so the
 * plan can say "you set this" apart from "the vendor's default applied".
 */
export function givenPaths(input: unknown, prefix = ''): Set<string> {
  const out = new Set<string>();
  const walk = (value: unknown, path: string): void => {
    if (path) out.add(path);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) walk(child, path ? `${path}.${key}` : key);
    }
  };
  walk(input, prefix);
  return out;
}
