import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { hcConfigMapObject } from '../../pod/extra-objects';
import type { PodChanges } from '../../pod/pod-changes';
import { apiObjectOf } from './api-object';

export interface HcConfigMapProps {
  /**
   * The pod changes of the gateway (from `podChanges(plan)`); the ConfigMap holds their
   * `hcConfig` as `hc.json`.
   */
  readonly changes: PodChanges;
}

/** The hc sidecar's configuration, mounted read-only at /etc/gracegate in the gateway pods. */
export class HcConfigMap extends Construct {
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: HcConfigMapProps) {
    super(scope, id);
    this.apiObject = apiObjectOf(this, 'Resource', hcConfigMapObject(props.changes));
  }
}
