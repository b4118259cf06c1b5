import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { healthServiceObject } from '../../pod/extra-objects';
import type { PodChanges } from '../../pod/pod-changes';
import { apiObjectOf } from './api-object';

export interface HealthServiceProps {
  /**
   * The pod changes of the gateway. Their `healthService` decides the type: NodePort with
   * `externalTrafficPolicy: Local` (and the fixed nodePort when the spec gives one) for
   * `exposure: nodePort`, ClusterIP for `exposure: clusterIP`.
   */
  readonly changes: PodChanges;
}

/**
 * The Service the LB probes `/health_check.html` through. A plain ApiObject because cdk8s-plus-28's
 * Service cannot express `externalTrafficPolicy` (docs/facts.md §7).
 */
export class HealthService extends Construct {
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: HealthServiceProps) {
    super(scope, id);
    const body = healthServiceObject(props.changes);
    if (!body)
      throw new Error(
        props.changes.gatewayServiceHealthPort
          ? "the plan puts the health port on the gateway's own Service (the LB's probe takes the traffic's path) and no health Service exists; do not create a HealthService"
          : "'health.exposure' is 'hostPort': the LB probes the node's host port directly and no health Service exists; do not create a HealthService",
      );
    this.apiObject = apiObjectOf(this, 'Resource', body);
  }
}
