/**
 * What a delivery path is: one way the pod changes (src/pod/) reach the pods of a gateway or a
 * workload. Each path is a folder src/delivery/<name>/ whose index.ts describes it with this shape;
 * src/delivery/registry.ts keys the descriptions by name, and synth and the CLI read them there.
 */
import type { PodChanges } from '../pod/pod-changes';
import type { WorkloadChanges } from '../pod/workload/pod-changes';
import type { GatewaySpec } from '../schema/gateway-spec';
import type { TargetRule } from './target';

/** Every delivery path, by the name of its folder (src/delivery/<name>/, plugins/<name>/). */
export const DELIVERY_PATH_NAMES = ['helm-values', 'post-render', 'kustomize', 'gateway-api', 'cdk8s', 'argocd'] as const;
export type DeliveryPathName = (typeof DELIVERY_PATH_NAMES)[number];

/** The pod changes of a spec of either kind, as a path is given them. */
export type DeliveredChanges = { kind: 'GracefulGateway'; changes: PodChanges } | { kind: 'GracefulWorkload'; changes: WorkloadChanges };

/** What `gracegate synth` asks each path for, with the spec's pod changes. */
export type SynthRequest =
  | {
      kind: 'GracefulGateway';
      changes: PodChanges;
      chart: GatewaySpec['spec']['chart'];
      /** --kustomize: the Kustomize component too. */
      kustomize: boolean;
      /** --parameters: the Gateway's own parameters ConfigMap, read when a path needs it. */
      parameters: { path: string; read(): string } | undefined;
      /** A line for stderr about the spec (synth prefixes the spec's path). */
      warn(line: string): void;
    }
  | { kind: 'GracefulWorkload'; changes: WorkloadChanges; kustomize: boolean };

/** A path's part of synth's output: files by relative path, and a line to print after writing them. */
export type SynthPart = { files: Record<string, string>; note?: string };

/** The options of a post-render: the target workload (else the kind's default) and the input's name. */
export type PostRenderRequest = { target?: TargetRule | undefined; keepReplicas?: boolean; source?: string };

export interface DeliveryPath<N extends DeliveryPathName = DeliveryPathName> {
  readonly name: N;
  /** How the pod changes get in, in a line (docs/delivery.md's table of paths). */
  readonly how: string;
  /** Where its docs say how to use it: a page of docs/ and its section. */
  readonly docs: `docs/${string}.md#${string}`;
  /** The files a user installs or copies for it (plugins/<name>/), or null. */
  readonly plugin: `plugins/${N}` | null;
  /**
   * Its files in `gracegate synth`'s output for this request, or null when the request is not its
   * own (another path delivers that spec, or the flag that asks for it is off).
   */
  readonly synth: ((request: SynthRequest) => SynthPart | null) | null;
}
