/**
 * What lint knows beyond the manifests, and what it found of a pod's gracegate sidecar: the types
 * the lint context (context.ts) and the LB's view (lb-view.ts) both name, in a file of their own so
 * neither imports the other for them.
 */
import type { HcConfig } from '../contract/hc-config';
import type { LbBehaviour } from '../model/lb-behaviour';
import type { Plan } from '../plan/plan-gateway';
import type { PodChanges } from '../pod/pod-changes';
import type { LintObject } from './objects';
import type { ContainerView } from './pod-view';

/** The port and path `--lb MODEL,port=N,path=/p` names. */
export type LbProbeFlag = { port?: number; path?: string };

/** What lint knows beyond the manifests: the plan (`--spec`), or the LB alone (`--lb`), and the node count. */
export type LintOptions = {
  /** The plan the manifests should carry, and its pod changes. */
  plan?: { plan: Plan; changes: PodChanges; source: string };
  /** The LB in front of the gateways (from the plan, or `--lb`), and the port and path `--lb` says it probes. */
  lb?: { behaviour: LbBehaviour; source: string; probe?: LbProbeFlag };
  /** Nodes the gateway pods may run on (`spec.nodes`, or `--nodes`). */
  nodes?: { value: number; source: string };
  /** The proxy container's name. @default istio-proxy (or the plan's spec.envoy.containerName) */
  proxyContainer?: string;
};

/** The gracegate sidecar of a pod and the config it reads, when the input has that ConfigMap. */
export type HcSidecar = {
  container: ContainerView;
  configMapName: string | undefined;
  configMap: LintObject | undefined;
  /** The config the sidecar will run with (defaults applied); undefined when absent or refused. */
  config: HcConfig | undefined;
  /** The ConfigMap's hc.json as parsed, before the schema's defaults; undefined when absent or not JSON. */
  configJson: unknown;
};
