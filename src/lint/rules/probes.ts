import { NLB_ANNOTATION_PREFIX } from '../../lb-config/nlb-service-annotations';
import { HC_CONTAINER_NAME, PATHS } from '../../pod/names';
import type { LintContext } from '../context';
import { objAt } from '../objects';
import type { ContainerView, PodView } from '../pod-view';
import type { LintRule } from '../rule';
import { probePort } from './common';

/** Istio's agent readiness endpoint: it fails once the proxy drains. */
const ISTIO_READY = { path: '/healthz/ready', port: 15021 };

/** The paths the LB probes on this pod: gracegate's LB path where its sidecar runs, and an NLB's health check path. */
function lbPaths(ctx: LintContext, pod: PodView): Array<{ path: string; port?: number; why: string }> {
  const out: Array<{ path: string; port?: number; why: string }> = [];
  const sidecar = ctx.hcSidecar(pod);
  if (sidecar || (ctx.plan && ctx.gateways.includes(pod))) {
    out.push({ path: PATHS.lb, ...(sidecar?.config ? { port: sidecar.config.healthPort } : {}), why: "gracegate's LB endpoint" });
  }
  for (const svc of ctx.servicesOf(pod)) {
    const a = objAt(svc.value, ['metadata', 'annotations']);
    const path = a[`${NLB_ANNOTATION_PREFIX}healthcheck-path`];
    const port = a[`${NLB_ANNOTATION_PREFIX}healthcheck-port`];
    if (typeof path === 'string')
      out.push({ path, ...(typeof port === 'string' && /^\d+$/.test(port) ? { port: Number(port) } : {}), why: `the NLB health check of ${svc.id}` });
  }
  return out;
}

/** Endpoints that answer failure while the pod drains: readiness ones. */
function drainAware(ctx: LintContext, pod: PodView, c: ContainerView): Array<{ path: string; port?: number; why: string }> {
  const out = [...lbPaths(ctx, pod)];
  if (c.readiness?.httpPath)
    out.push({
      path: c.readiness.httpPath,
      ...(probePort(c, c.readiness) !== undefined ? { port: probePort(c, c.readiness)! } : {}),
      why: 'its own readiness probe',
    });
  if (c.name === HC_CONTAINER_NAME) out.push({ path: PATHS.readiness, why: "the sidecar's readiness endpoint" });
  if (c.name === ctx.proxyContainer) out.push({ ...ISTIO_READY, why: "Istio's agent readiness" });
  return out;
}

const samePort = (a: number | undefined, b: number | undefined) => a === undefined || b === undefined || a === b;

export const PROBE_RULES: LintRule[] = [
  {
    id: 'readiness-on-lb-path',
    severity: 'error',
    summary: "a readiness probe on the LB's health path",
    rationale:
      "The LB and Kubernetes readiness are two parties that must hear different answers at different times: readiness on the LB's endpoint pulls the Kubernetes endpoint and the LB backend at the same instant, so no order of the two is possible (docs/facts.md §1).",
    check: (ctx) =>
      ctx.pods.flatMap((pod) =>
        pod.containers.flatMap((c) => {
          const r = c.readiness;
          if (!r?.httpPath) return [];
          const port = probePort(c, r);
          const hit = lbPaths(ctx, pod).find((p) => p.path === r.httpPath && samePort(p.port, port));
          if (!hit) return [];
          const isSidecar = c.name === HC_CONTAINER_NAME;
          return [
            {
              object: pod.owner,
              path: [...r.path, 'httpGet', 'path'],
              message: `${c.name}'s readiness probe is GET ${r.httpPath}, ${hit.why}: Kubernetes and the LB then drop the pod at the same instant`,
              remediation: isSidecar
                ? `point readiness at ${PATHS.readiness} (the sidecar's Kubernetes endpoint)`
                : 'give readiness its own endpoint, apart from the one the LB probes',
              ...(isSidecar
                ? {
                    fix: {
                      description: `readiness on ${PATHS.readiness}`,
                      edits: [{ object: pod.owner.id, path: [...r.path, 'httpGet', 'path'], set: PATHS.readiness }],
                    },
                  }
                : {}),
            },
          ];
        }),
      ),
  },
  {
    id: 'liveness-on-drain-aware-path',
    severity: 'warning',
    summary: 'a liveness probe on an endpoint that fails during the drain (readiness, the LB path)',
    rationale:
      'Readiness and LB endpoints fail on purpose while the pod drains; a liveness probe on one makes the kubelet restart the container mid-drain, and a restart runs its preStop again (docs/facts.md §6, contour#4851): restart storms during every rollout. Liveness must answer 200 for as long as the process works, draining included (docs/facts.md §1).',
    check: (ctx) =>
      ctx.pods.flatMap((pod) =>
        pod.containers.flatMap((c) => {
          const l = c.liveness;
          if (!l?.httpPath) return [];
          const port = probePort(c, l);
          const hit = drainAware(ctx, pod, c).find((p) => p.path === l.httpPath && samePort(p.port, port));
          if (!hit) return [];
          const isSidecar = c.name === HC_CONTAINER_NAME;
          return [
            {
              object: pod.owner,
              path: [...l.path, 'httpGet', 'path'],
              message: `${c.name}'s liveness probe is GET ${l.httpPath}, ${hit.why}, which fails while the pod drains: the kubelet restarts the container mid-drain`,
              remediation: isSidecar
                ? `point liveness at ${PATHS.liveness}`
                : 'give liveness an endpoint that answers 200 while the process works, draining included',
              ...(isSidecar
                ? {
                    fix: {
                      description: `liveness on ${PATHS.liveness}`,
                      edits: [{ object: pod.owner.id, path: [...l.path, 'httpGet', 'path'], set: PATHS.liveness }],
                    },
                  }
                : {}),
            },
          ];
        }),
      ),
  },
];
