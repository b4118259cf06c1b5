import { PATHS } from '../../pod/names';
import type { LintFindingDraft, LintRule } from '../rule';
import { holdOf, lbStopSeconds } from './common';

/** The proxy's hold: Envoy must outlive the LB's reaction and the drain. */
export const PROXY_HOLD_RULES: LintRule[] = [
  {
    id: 'proxy-not-held',
    severity: 'error',
    summary: "the gateway's proxy container has no preStop: Envoy gets SIGTERM at the pod's deletion",
    rationale:
      "Kubernetes sends SIGTERM to a container as soon as its own preStop ends (docs/facts.md §6); without one, Istio's agent starts Envoy's drain at once and kills it terminationDrainDuration later (5 s by default, docs/facts.md §5), whatever the LB has noticed. An LB that takes longer to see the pod leave keeps sending to a proxy that is gone. The hold is what Contour's shutdown-manager and Envoy Gateway do (docs/facts.md §5).",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const hold = holdOf(ctx, pod);
        if (hold?.kind !== 'none') return [];
        const drain = ctx.proxyDrain(pod).terminationDrainSeconds;
        const sidecar = ctx.hcSidecar(pod);
        const witness = sidecar?.config?.witnessPort;
        return [
          {
            object: pod.owner,
            path: [...hold.proxy.path, 'lifecycle'],
            message: `container ${hold.proxy.name} has no preStop: Envoy gets SIGTERM when the pod is deleted and Istio's agent kills it ${drain.value} s later (${drain.source}), before an LB that needs longer has stopped sending${sidecar ? '; the gracegate sidecar in this pod runs its sequence with no proxy left to drain' : ''}`,
            remediation: sidecar
              ? `hold the proxy until the sequence ends: lifecycle.preStop.httpGet ${PATHS.waitClosed} on the sidecar's witness port${witness !== undefined ? ` ${witness}` : ''} (gracegate synth / post-render write it)`
              : "hold the proxy until the LB has stopped sending and in-flight requests are done: gracegate's sidecar (gracegate synth or post-render), or at least a preStop sleep of the LB's detection time",
            numbers: { terminationDrainDuration: { value: drain.value, source: drain.source } },
            ...(witness !== undefined
              ? {
                  fix: {
                    description: `add istio-proxy's preStop GET ${PATHS.waitClosed} on the witness port ${witness}`,
                    edits: [
                      {
                        object: pod.owner.id,
                        path: [...hold.proxy.path, 'lifecycle', 'preStop'],
                        set: { httpGet: { path: PATHS.waitClosed, port: witness, scheme: 'HTTP' } },
                      },
                    ],
                  },
                }
              : {}),
          },
        ];
      }),
  },
  {
    id: 'proxy-hold-wrong-port',
    severity: 'error',
    summary: "istio-proxy's preStop GET /wait-closed does not reach a gracegate sidecar's witness port (another port, or no sidecar)",
    rationale:
      'gracegate\'s sidecar answers /wait-closed only on its witness port, which no Service exposes (docs/hc.md, "Exposure"). A hook sent elsewhere fails or returns at once, so the kubelet sends SIGTERM to the proxy mid-sequence; on the health port, whoever reaches the health Service could hold or fake the termination witness.',
    check: (ctx) =>
      ctx.gateways.flatMap((pod): LintFindingDraft[] => {
        const hold = holdOf(ctx, pod);
        if (hold?.kind === 'gracegate' && !hold.sidecar) {
          return [
            {
              object: pod.owner,
              path: [...hold.proxy.path, 'lifecycle', 'preStop', 'httpGet'],
              message: `${hold.proxy.name}'s preStop waits on GET ${PATHS.waitClosed}, but the pod has no gracegate sidecar to answer it: the hook fails at once and Envoy gets SIGTERM as if nothing held it`,
              remediation: 'add the sidecar with the hold (gracegate synth or post-render write both), or remove the hook',
            },
          ];
        }
        if (hold?.kind !== 'gracegate' || !hold.sidecar?.config || hold.proxy.preStop.kind !== 'httpGet') return [];
        const port = hold.proxy.preStop.port;
        const witness = hold.sidecar.config.witnessPort;
        if (port === witness) return [];
        const onHealth = port === hold.sidecar.config.healthPort || port === 'hc-health';
        return [
          {
            object: pod.owner,
            path: [...hold.proxy.path, 'lifecycle', 'preStop', 'httpGet', 'port'],
            message: `${hold.proxy.name}'s preStop GET ${PATHS.waitClosed} goes to port ${port}, but the sidecar's witness port is ${witness} (${hold.sidecar.configMap!.id})${onHealth ? ': that is the health port, which the LB and anyone reaching the health Service can use to hold or fake the witness' : ''}`,
            remediation: `set the port to ${witness} (numeric: a hook resolves port names in its own container only)`,
            numbers: {
              hookPort: { value: port, source: `${pod.owner.id} ${hold.proxy.name} preStop` },
              witnessPort: { value: witness, source: `${hold.sidecar.configMap!.id} hc.json witnessPort` },
            },
            related: [{ object: hold.sidecar.configMap!, path: ['data', 'hc.json'] }],
            fix: {
              description: `send the hold to the witness port ${witness}`,
              edits: [{ object: pod.owner.id, path: [...hold.proxy.path, 'lifecycle', 'preStop', 'httpGet', 'port'], set: witness }],
            },
          },
        ];
      }),
  },
  {
    id: 'proxy-hold-below-lb-detection',
    severity: 'error',
    summary: 'the proxy is released before the LB has stopped sending (needs the LB: --spec or --lb)',
    rationale:
      "After the hold the proxy drains and stops listening; an LB that has not yet noticed the pod keeps sending, and those requests are refused or reset. The LB needs its detection time (probe interval x failures) and, for an AWS NLB, the propagation users measure after it (docs/facts.md §3). A preStop sleep starts counting at the pod's deletion, so it must cover that whole time; gracegate's sequence waits its lbBufferSeconds for it.",
    check: (ctx) =>
      ctx.gateways.flatMap((pod): LintFindingDraft[] => {
        const lb = lbStopSeconds(ctx, pod);
        if (!lb) return [];
        const probe = ctx.lbView(pod).probes[0];
        const seen = `the LB (${lb.source}${probe ? `; ${probe.statement}` : ''})`;
        const hold = holdOf(ctx, pod);
        if (hold?.kind === 'sleep' && hold.seconds < lb.value) {
          return [
            {
              object: pod.owner,
              path: [...hold.proxy.path, 'lifecycle', 'preStop'],
              message: `${hold.proxy.name} is held by a ${hold.seconds} s preStop sleep, but ${seen} stops sending only ${lb.value} s after the pod's deletion (${lb.formula}): for the last ${Math.round((lb.value - hold.seconds) * 1000) / 1000} s the LB sends to a draining proxy`,
              remediation: `sleep at least ${Math.ceil(lb.value)} s (and raise terminationGracePeriodSeconds to match), or let gracegate's sidecar hold the proxy for exactly as long as the sequence needs`,
              numbers: { preStopSleep: { value: hold.seconds, source: `${pod.owner.id} ${hold.proxy.name} preStop` }, ...lb.numbers },
              formula: `preStopSleep >= ${lb.formula}`,
              ...(probe ? { lbProbe: probe } : {}),
            },
          ];
        }
        const config = hold?.kind === 'gracegate' ? hold.sidecar?.config : undefined;
        if (hold?.kind === 'gracegate' && config && config.lbBufferSeconds < lb.value) {
          return [
            {
              object: hold.sidecar!.configMap!,
              path: ['data', 'hc.json'],
              message: `the sidecar's sequence waits lbBufferSeconds ${config.lbBufferSeconds} s for the LB, but ${seen} stops sending only ${lb.value} s after the pod's deletion (${lb.formula})`,
              remediation: "plan for this LB (gracegate synth with the spec's loadBalancer block) and apply the new ConfigMap; the pods roll on its hash",
              numbers: { lbBufferSeconds: { value: config.lbBufferSeconds, source: `${hold.sidecar!.configMap!.id} hc.json` }, ...lb.numbers },
              formula: `lbBufferSeconds >= ${lb.formula}`,
              related: [{ object: pod.owner, path: [...hold.proxy.path, 'lifecycle', 'preStop'] }],
              ...(probe ? { lbProbe: probe } : {}),
            },
          ];
        }
        return [];
      }),
  },
  {
    id: 'lb-detection-unknown',
    severity: 'info',
    summary: 'a preStop sleep holds the proxy: enough only if the LB stops sending within it (a question without --lb or --spec)',
    rationale:
      "A fixed sleep is the common hold (the usual advice is a sleep equal to the LB's deregistration or detection time, docs/facts.md §3); whether it is long enough depends on the LB, which the manifests do not say.",
    check: (ctx) =>
      ctx.gateways.flatMap((pod) => {
        const hold = holdOf(ctx, pod);
        if (hold?.kind !== 'sleep' || ctx.lbView(pod).timing) return [];
        return [
          {
            object: pod.owner,
            path: [...hold.proxy.path, 'lifecycle', 'preStop'],
            message: `${hold.proxy.name} is held ${hold.seconds} s: enough only if the LB stops sending to this pod within ${hold.seconds} s of its deletion (probe interval x failures, plus any propagation). Does yours?`,
            remediation: 'name the LB to check it: --lb MODEL[,field=value...] (e.g. --lb haproxy,inter=2s,fall=3) or --spec gateway.yaml',
            numbers: { preStopSleep: { value: hold.seconds, source: `${pod.owner.id} ${hold.proxy.name} preStop` } },
            formula: 'preStopSleep >= lbDetectSeconds + propagationDelay',
          },
        ];
      }),
  },
];
