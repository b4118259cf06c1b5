import type { LbView, LbViewSource } from './lb-probe';
import { albProbes } from './lb-probe-alb';
import { flagProbes } from './lb-probe-flag';
import { inferredProbes } from './lb-probe-inferred';
import { nlbProbes, nlbTiming } from './lb-probe-nlb';
import type { PodView } from './pod-view';

/**
 * The LB's view of a pod, inferred from the manifests alone: which port and path of the pod the
 * load balancer probes, and through what (a NodePort or LoadBalancer Service, a hostPort, a cloud
 * LB's annotations, or `--lb MODEL,path=…,port=N`). Every LB-side rule reads this, so a pod is
 * judged the same way with or without gracegate's sidecar and with or without --spec; each
 * finding states the inference ("the LB probes 18180 through Service/edge/x NodePort 30180").
 *
 * In order, the first that says anything wins:
 * 1. `--lb …,port=N,path=/p`: the user's word (N is matched against node ports, hostPorts, the
 *    pod's ports and a LoadBalancer's ports; a port no Service shows is taken as the pod's own).
 * 2. a cloud LB's health check from its annotations: AWS NLB on the Service
 *    (`service.beta.kubernetes.io/aws-load-balancer-healthcheck-*`, the target type), ALB on an
 *    Ingress of class alb and its backend Service (`alb.ingress.kubernetes.io/healthcheck-*`).
 * 3. an entrance from outside (a NodePort/LoadBalancer Service port or a hostPort) onto a health
 *    endpoint: gracegate's sidecar (its LB path), or a hand-made health container (a container
 *    other than the proxy serving the port the Service targets: the W6 design), or a health
 *    endpoint the proxy serves itself (a port of the proxy other than the gateway Service's
 *    traffic ports, or named like a health port, or named by `--lb …,port=`: src/lint/proxy-health.ts),
 *    or, where the pod exposes nothing else, Istio's status port 15021 (`/healthz/ready`, which the
 *    istio/gateway chart's Service carries for LB health checks).
 * 4. gracegate's sidecar with no entrance: the LB probes its LB path at the pod's IP (an in-mesh
 *    LB, or one on the pod network).
 */

/** The LB's view of one pod. */
export function lbViewOf(ctx: LbViewSource, pod: PodView): LbView {
  const clouds = [...ctx.servicesOf(pod).flatMap((svc) => nlbProbes(ctx, pod, svc)), ...albProbes(ctx, pod)];
  let probes = clouds.length > 0 ? clouds : inferredProbes(ctx, pod);
  const flag = ctx.lb?.probe;
  if (flag && ctx.gateways.includes(pod)) probes = flagProbes(ctx, pod, flag, probes);
  return { probes, timing: ctx.lb ? { behaviour: ctx.lb.behaviour, source: ctx.lb.source } : nlbTiming(ctx, pod) };
}
