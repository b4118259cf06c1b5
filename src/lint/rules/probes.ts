import type { Path } from '../../core/json';
import { ANNOTATIONS, HC_CONTAINER_NAME, PATHS } from '../../pod/names';
import type { LintContext } from '../context';
import { ISTIO_READY_PATH, ISTIO_STATUS_PORT } from '../istio';
import type { LbProbe } from '../lb-probe';
import { at, isObjectAt } from '../objects';
import { portNumber, type ContainerView, type PodView } from '../pod-view';
import type { LintRule } from '../rule';
import { probePort } from './common';

/** The readiness probe a container runs: its own, or the one Istio's injector gives istio-proxy (the gateway injection template's GET /healthz/ready :15021). */
function readinessOf(
  ctx: LintContext,
  pod: PodView,
  c: ContainerView,
): { probe: { path: Path; httpPath?: string; port?: number | string }; injected: boolean } | undefined {
  if (c.readiness) return { probe: c.readiness, injected: false };
  if (c.name === ctx.proxyContainer && ctx.injection(pod).injected)
    return { probe: { path: [...c.path, 'name'], httpPath: ISTIO_READY_PATH, port: ISTIO_STATUS_PORT }, injected: true };
  return undefined;
}

/** The LB's probes of the pod that ask an HTTP path (the LB's view, src/lint/lb-view.ts). */
function lbPaths(ctx: LintContext, pod: PodView): LbProbe[] {
  return ctx.lbView(pod).probes.filter((p) => p.path !== undefined && p.podPort !== undefined);
}

/** Endpoints that answer failure while the pod drains: the LB's and readiness ones. */
function drainAware(ctx: LintContext, pod: PodView, c: ContainerView): Array<{ path: string; port?: number; why: string; lb?: LbProbe }> {
  const out: Array<{ path: string; port?: number; why: string; lb?: LbProbe }> = lbPaths(ctx, pod).map((p) => ({
    path: p.path!,
    port: p.podPort!,
    why: `the path the LB probes (${p.statement})`,
    lb: p,
  }));
  if (c.readiness?.httpPath)
    out.push({
      path: c.readiness.httpPath,
      ...(probePort(c, c.readiness) !== undefined ? { port: probePort(c, c.readiness)! } : {}),
      why: 'its own readiness probe',
    });
  if (c.name === HC_CONTAINER_NAME) out.push({ path: PATHS.readiness, why: "the sidecar's readiness endpoint" });
  if (c.name === ctx.proxyContainer) out.push({ path: ISTIO_READY_PATH, port: ISTIO_STATUS_PORT, why: "Istio's agent readiness" });
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
          const readiness = readinessOf(ctx, pod, c);
          const r = readiness?.probe;
          if (!r?.httpPath) return [];
          const port = portNumber(c, r.port);
          const hit = lbPaths(ctx, pod).find((p) => p.path === r.httpPath && p.podPort === port);
          if (!hit) return [];
          const isSidecar = c.name === HC_CONTAINER_NAME;
          const probeText = `GET ${r.httpPath} :${port}`;
          return [
            {
              object: pod.owner,
              path: readiness!.injected ? r.path : [...r.path, 'httpGet', 'path'],
              message: `${c.name}'s readiness probe${readiness!.injected ? ` (Istio's injector adds it: ${ctx.injection(pod).why})` : ''} is ${probeText}, the path the LB probes: ${hit.statement}. Kubernetes and the LB then drop the pod at the same instant`,
              remediation: isSidecar
                ? `point readiness at ${PATHS.readiness} (the sidecar's Kubernetes endpoint)`
                : readiness!.injected || c.name === ctx.proxyContainer
                  ? "give the LB an endpoint of its own that answers apart from readiness (gracegate's sidecar: gracegate synth or post-render), and point the LB's health check at it"
                  : 'give readiness its own endpoint, apart from the one the LB probes',
              numbers: {
                readinessPort: {
                  value: port ?? String(r.port),
                  source: `${pod.owner.id} ${c.name} readinessProbe${readiness!.injected ? " (Istio's gateway injection template)" : ''}`,
                },
                ...hit.numbers,
              },
              lbProbe: hit,
              ...(isSidecar && !readiness!.injected
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
          const lb = hit.lb;
          const isSidecar = c.name === HC_CONTAINER_NAME;
          return [
            {
              object: pod.owner,
              path: [...l.path, 'httpGet', 'path'],
              message: `${c.name}'s liveness probe is GET ${l.httpPath}, ${hit.why}, which fails while the pod drains: the kubelet restarts the container mid-drain`,
              remediation: isSidecar
                ? `point liveness at ${PATHS.liveness}`
                : 'give liveness an endpoint that answers 200 while the process works, draining included',
              ...(lb ? { numbers: lb.numbers, lbProbe: lb } : {}),
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
  {
    id: 'hc-probes-rewritten',
    severity: 'error',
    summary: "Istio's injector would rewrite the gracegate sidecar's probes to pilot-agent's port (no sidecar.istio.io/rewriteAppHTTPProbers: \"false\")",
    rationale:
      "Where Istio injects a pod, its injector moves every HTTP, TCP and gRPC probe of the other containers to pilot-agent's status port (GET /app-health/<container>/readyz :15020) unless the pod's sidecar.istio.io/rewriteAppHTTPProbers annotation says false, which wins over the mesh's sidecarInjectorWebhook.rewriteAppHTTPProbe, true by default (istio/istio pkg/kube/inject/app_probe.go ShouldRewriteAppHTTPProbers; docs/facts.md §5). The sidecar's health then depends on pilot-agent: it fails while the agent starts, and after istio-proxy's SIGTERM its liveness is refused while the sidecar still runs, so the kubelet can restart it mid-sequence; a native sidecar's startup probe waits on istio-proxy, which the kubelet starts after it, and the pod never starts. Seen on a real istiod (docs/facts.md §5).",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const sidecar = ctx.hcSidecar(pod);
        if (!sidecar) return [];
        const injection = ctx.injection(pod);
        const rewrite = ctx.probeRewrite(pod);
        if (!injection.injected || !rewrite.value) return [];
        const c = sidecar.container;
        const probes = (['readinessProbe', 'livenessProbe', 'startupProbe'] as const).filter((k) => isObjectAt(c.value, [k]));
        if (probes.length === 0) return [];
        const suffix = { readinessProbe: 'readyz', livenessProbe: 'livez', startupProbe: 'startupz' } as const;
        const rewritten = probes.map((k) => {
          const get = at(c.value, [k, 'httpGet']);
          const was = isObjectAt(c.value, [k, 'httpGet'])
            ? `GET ${String(at(get, ['path']) ?? '/')} :${String(at(get, ['port']))}`
            : Object.keys(at(c.value, [k]) as object).join('/');
          return `${k} ${was} -> GET /app-health/${c.name}/${suffix[k]} :${rewrite.agentPort}`;
        });
        const path: Path = [...pod.metaPath, 'annotations', ANNOTATIONS.rewriteAppHttpProbers];
        return [
          {
            object: pod.owner,
            path: rewrite.path ?? [...pod.metaPath, 'annotations'],
            message: `Istio injects this pod (${injection.why}) and rewrites its app probes (${rewrite.source}): the ${c.name} sidecar's ${rewritten.join('; ')}. Its health then answers through pilot-agent, refused once istio-proxy has its SIGTERM while the sidecar still runs`,
            remediation: `annotate the pod template ${ANNOTATIONS.rewriteAppHttpProbers}: "false" (gracegate synth and post-render write it)`,
            numbers: { agentPort: { value: rewrite.agentPort, source: "status.sidecar.istio.io/port, else Istio's default statusPort 15020" } },
            fix: { description: `${ANNOTATIONS.rewriteAppHttpProbers}: "false"`, edits: [{ object: pod.owner.id, path, set: 'false' }] },
          },
        ];
      }),
  },
];
