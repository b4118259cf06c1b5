/**
 * gracegate as a library: the spec, the planner, the pod changes and the cdk8s constructs.
 * Loading this entry loads cdk8s (for the constructs); code that must stay light (a post-renderer,
 * the hc sidecar) imports `gracegate/dist/src/pod` or the planner modules directly instead.
 */
export * from './schema/gateway-spec';
export { parseGatewaySpec, resolveGatewaySpec, SpecError, type ResolvedSpec, type SpecProblem } from './schema/parse-spec';
export { planGateway, PLAN_API_VERSION, type Plan } from './plan/plan-gateway';
export type { Finding, Severity } from './plan/finding';
export type { Sequence } from './plan/sequence';
export type { Timings, TimingDerivations } from './plan/timings';
export * from './pod';
export * from './constructs';
export { valuesOverlay, valuesOverlayYaml, OverlayUnsupportedError } from './emit/values-overlay';
export { containerdFiles } from './emit/containerd';
export { renderPlanMarkdown } from './emit/plan-markdown';
