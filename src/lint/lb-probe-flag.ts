import { objAt } from './objects';
import type { LbProbeFlag } from './lint-options';
import type { PodView } from './pod-view';
import { probe, resolveTarget, type LbProbe, type LbViewSource } from './lb-probe';
import { entrances, fromEntrance, pathFor, reachedBy, roleOf } from './lb-probe-inferred';

/** `--lb MODEL,path=…,port=N`: the user's word on the LB's probe, over what lint inferred. */

/** `--lb …,port=N,path=/p` on a gateway: the entrance N names, or the pod's own port N. */
export function flagProbes(ctx: LbViewSource, pod: PodView, flag: LbProbeFlag, inferred: LbProbe[]): LbProbe[] {
  const source = ctx.lb!.source;
  if (flag.port === undefined) {
    // A path alone: the inferred probes, asking that path.
    return inferred.map((p) => probe({ ...p, path: flag.path, pathSource: source, protocol: 'HTTP' }));
  }
  const n = flag.port;
  const all = entrances(ctx, pod);
  const e =
    all.find((x) => x.via.kind === 'node-port' && x.via.port.nodePort === n) ??
    all.find((x) => x.via.kind === 'host-port' && x.via.hostPort === n) ??
    all.find((x) => resolveTarget(pod, x.target)?.port === n) ??
    all.find((x) => x.via.kind === 'node-port' && objAt(x.via.service.value, ['spec']).type === 'LoadBalancer' && x.via.port.port === n);
  const path = flag.path !== undefined ? { path: flag.path, pathSource: source } : undefined;
  if (e) {
    const r = resolveTarget(pod, e.target);
    if (r) {
      const role = roleOf(ctx, pod, r.port, r.container, typeof e.target === 'string' ? e.target : undefined, { ...reachedBy(e), flag: source });
      const p = fromEntrance(pod, e, role, r.port, path ?? pathFor(role));
      return [probe({ ...p, source: `${source}, ${p.source}` })];
    }
  }
  const r = resolveTarget(pod, n);
  const role = roleOf(ctx, pod, n, r?.container, undefined, { flag: source });
  return [
    probe({
      ...(role.role === 'proxy-health' ? { proxyHealth: role.health } : {}),
      podPort: n,
      container: role.role === 'traffic' ? undefined : role.container,
      ...(path ?? pathFor(role)),
      protocol: 'HTTP',
      via: { kind: 'pod-ip' },
      source: `${source} (no Service or hostPort of the input shows port ${n}: taken as the pod's own)`,
      evidence: { object: pod.owner, path: [...pod.specPath, 'containers'] },
      numbers: { lbProbePort: { value: n, source } },
    }),
  ];
}
