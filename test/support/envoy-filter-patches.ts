/**
 * Applies an Istio EnvoyFilter's config patches to an Envoy bootstrap as istiod would apply them to
 * a gateway's listeners (test support). Only the shapes gracegate emits are understood —
 * `applyTo: NETWORK_FILTER`, `match.context: GATEWAY`, `match.listener.filterChain.filter.name`,
 * `patch.operation: MERGE` — anything else throws, so a new shape cannot pass untested. MERGE is
 * a protobuf merge: messages merge field by field, scalars and lists in the patch replace (lists
 * append in proto3 merge; no patch here carries one, and one that does throws). Only the gateway
 * listeners (those istiod serves over LDS; here the ones with `traffic_direction: OUTBOUND`) are
 * patched: the bootstrap's own 15021/15090 listeners never see an EnvoyFilter.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function protoMerge(into: Obj, patch: Obj, at: string): void {
  for (const [k, v] of Object.entries(patch)) {
    if (Array.isArray(v)) throw new Error(`${at}.${k}: a list in a MERGE patch (proto merge appends) is not handled here`);
    if (k === '@type' && into[k] !== undefined && into[k] !== v)
      throw new Error(`${at}: patch @type ${String(v)} does not match the filter's ${String(into[k])} (istiod rejects it)`);
    if (isObj(v) && isObj(into[k])) protoMerge(into[k] as Obj, v, `${at}.${k}`);
    else into[k] = isObj(v) ? structuredClone(v) : v;
  }
}

/** Returns how many filters each patch changed (a patch that matched nothing is 0). */
export function applyEnvoyFilterPatches(bootstrap: Obj, patches: readonly unknown[]): number[] {
  const listeners = ((bootstrap['static_resources'] as Obj)['listeners'] as Obj[]).filter((l) => l['traffic_direction'] === 'OUTBOUND');
  return patches.map((p, i) => {
    const at = `configPatches[${i}]`;
    if (!isObj(p) || p['applyTo'] !== 'NETWORK_FILTER') throw new Error(`${at}: only applyTo NETWORK_FILTER is handled`);
    const match = p['match'] as Obj;
    if (match['context'] !== 'GATEWAY') throw new Error(`${at}: only match.context GATEWAY is handled`);
    const name = (((match['listener'] as Obj)['filterChain'] as Obj)['filter'] as Obj)['name'];
    const patch = p['patch'] as Obj;
    if (patch['operation'] !== 'MERGE') throw new Error(`${at}: only patch.operation MERGE is handled`);
    let changed = 0;
    for (const l of listeners) {
      for (const chain of l['filter_chains'] as Obj[]) {
        for (const filter of chain['filters'] as Obj[]) {
          if (filter['name'] !== name) continue;
          protoMerge(filter, patch['value'] as Obj, `${at} on ${String(l['name'])}`);
          changed++;
        }
      }
    }
    return changed;
  });
}
