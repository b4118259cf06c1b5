/**
 * JSON as gracegate reads and writes it (specs, manifests, plan.json, fixes), and paths into it.
 * Paths are lists of keys (strings for maps, numbers for list items), not dotted text: manifest
 * keys such as `proxy.istio.io/config` contain dots.
 */
export type JsonScalar = string | number | boolean | null;
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = JsonScalar | JsonValue[] | JsonObject;

/** A path into a document: keys for maps, numbers for list items. */
export type Path = ReadonlyArray<string | number>;

/** A map (not null, not a list). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when it is a map, else an empty one: for reading nested fields of parsed input. */
export function asObject(v: unknown): Record<string, unknown> {
  return isObject(v) ? v : {};
}

/** The value at `path`, or undefined where any step is missing or of the wrong kind. */
export function at(o: unknown, path: Path): unknown {
  let v: unknown = o;
  for (const part of path) {
    if (typeof part === 'number') v = Array.isArray(v) ? v[part] : undefined;
    else v = isObject(v) ? v[part] : undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

/** The map at `path`, or an empty one where there is none: `asObject` along a path. */
export function objAt(o: unknown, path: Path): Record<string, unknown> {
  const v = at(o, path);
  return isObject(v) ? v : {};
}

/** `['spec', 'rollout', 'maxSurge']` → `spec.rollout.maxSurge`; list items as `[n]`. */
export function pathText(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '');
}
