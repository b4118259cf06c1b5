import { roundSeconds } from '../../core/duration';
import type { NlbLb } from './schema';
import { derived, specInput, type GivenPaths } from '../../model/derived';
import type { LbBehaviour } from '../../model/lb-behaviour';

const P = 'spec.loadBalancer';

/**
 * An NLB routes connections at layer 4, "each individual TCP connection ... to a single target for
 * the life of the connection" (AWS Elastic Load Balancing, "How Elastic Load Balancing works").
 */
const PASS_THROUGH = {
  kind: 'vendor-doc',
  ref: 'AWS Elastic Load Balancing, "How Elastic Load Balancing works": an NLB routes each TCP connection to a single target for the life of the connection',
} as const;

/** Controller defaults differ for instance targets with externalTrafficPolicy Local (docs/facts.md §3). */
export function nlbDefaults(lb: NlbLb): { unhealthyThreshold: number; healthCheckTimeout: number } {
  const instanceLocal = lb.targetType === 'instance';
  return {
    unhealthyThreshold: lb.unhealthyThreshold ?? (instanceLocal ? 2 : 3),
    healthCheckTimeout: lb.healthCheckTimeout ?? (instanceLocal ? 6 : 10),
  };
}

/** AWS NLB: unhealthy after `unhealthyThreshold` failed checks `healthCheckInterval` apart. */
export function nlbBehaviour(lb: NlbLb, given: GivenPaths): LbBehaviour<NlbLb['model']> {
  const { unhealthyThreshold } = nlbDefaults(lb);
  const rst = lb.unhealthyConnectionTermination;
  return {
    model: 'nlb',
    probeIntervalSeconds: lb.healthCheckInterval,
    detect: derived(roundSeconds(lb.healthCheckInterval * unhealthyThreshold), 'healthCheckInterval x unhealthyThreshold', {
      healthCheckInterval: specInput(
        given,
        `${P}.healthCheckInterval`,
        lb.healthCheckInterval,
        'AWS Load Balancer Controller interval 10 s (docs/facts.md §3)',
      ),
      unhealthyThreshold: specInput(
        given,
        `${P}.unhealthyThreshold`,
        unhealthyThreshold,
        lb.targetType === 'instance' ? 'controller threshold 2 for instance targets + Local (docs/facts.md §3)' : 'controller threshold 3 (docs/facts.md §3)',
      ),
    }),
    recover: derived(roundSeconds(lb.healthCheckInterval * lb.healthyThreshold), 'healthCheckInterval x healthyThreshold', {
      healthCheckInterval: specInput(
        given,
        `${P}.healthCheckInterval`,
        lb.healthCheckInterval,
        'AWS Load Balancer Controller interval 10 s (docs/facts.md §3)',
      ),
      healthyThreshold: specInput(given, `${P}.healthyThreshold`, lb.healthyThreshold, 'controller healthy threshold 3'),
    }),
    propagation: {
      ...specInput(given, `${P}.propagationDelay`, lb.propagationDelay, '40 s measured by users before new connections stop (aws/containers-roadmap#470)'),
      value: lb.propagationDelay,
    },
    // The controller deregisters an ip target when its pod is deleted; instance targets are nodes,
    // which stay registered while their pods come and go.
    ...(lb.targetType === 'ip'
      ? {
          deregistrationLag: {
            ...specInput(
              given,
              `${P}.deregistrationLag`,
              lb.deregistrationLag,
              '120 s from deletion until a deregistered target gets no new connections (aws-load-balancer-controller#2366, aws/containers-roadmap#470)',
            ),
            value: lb.deregistrationLag,
          },
        }
      : {}),
    cutsSessionsOnDown: rst,
    onDown: rst
      ? 'target_health_state.unhealthy.connection_termination.enabled true: connections to an unhealthy target are reset'
      : 'unhealthy connection termination disabled: established connections continue',
    onDownSource: {
      kind: 'vendor-doc',
      ref: 'AWS Elastic Load Balancing, target group attribute target_health_state.unhealthy.connection_termination.enabled (Network Load Balancer guide, "Edit target group attributes")',
    },
    // An NLB passes TCP through: a refused SYN reaches the client as a refused connection.
    refused: {
      value: 'failed',
      detail: 'an NLB forwards TCP as is, each connection to one target for its life: a connection the target refuses is refused to the client',
      source: PASS_THROUGH,
      holdMs: 0,
    },
    resetRequestResent: { value: false, detail: "an NLB passes the target's reset to the client", source: PASS_THROUGH },
    reuse: {
      drainFirst: true,
      otherOrders: true,
      detail: "an NLB passes the clients' own TCP connections to the pod: a client's keep-alive connection is a connection to the pod",
      source: PASS_THROUGH,
    },
    cloudTargetType: lb.targetType,
    probeReachesSidecar: lb.targetType === 'ip',
    // ip targets are pod IPs; instance targets are probed on the node.
    probesPodIp: lb.targetType === 'ip',
  };
}
