import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { disruptionBudgetObject } from '../../pod/extra-objects';
import type { PodChanges } from '../../pod/pod-changes';
import { apiObjectOf } from './api-object';

export interface GatewayDisruptionBudgetProps {
  /** The pod changes of the gateway; `disruptionBudget.maxUnavailable` comes from the rollout plan. */
  readonly changes: PodChanges;
}

/** The PodDisruptionBudget consistent with the rollout plan (none for one replica). */
export class GatewayDisruptionBudget extends Construct {
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: GatewayDisruptionBudgetProps) {
    super(scope, id);
    const body = disruptionBudgetObject(props.changes);
    if (!body)
      throw new Error("'replicas' is 1: a PodDisruptionBudget would block every node drain, so the plan has none; do not create a GatewayDisruptionBudget");
    this.apiObject = apiObjectOf(this, 'Resource', body);
  }
}
