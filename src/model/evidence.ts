/**
 * Where the end-to-end measurements behind the findings are written up: sections of
 * docs/e2e/RESULTS.md, which ships with gracegate and is regenerated from the same runs as the
 * tests. A finding links there instead of quoting run counts that would go stale in code.
 */
const RESULTS = 'docs/e2e/RESULTS.md';

export const EVIDENCE = {
  /** drain-first behind an LB that does not re-send refused connections: the S5 rows of the prediction table. */
  refusedConnections: `${RESULTS}#planner-prediction-against-measurement`,
  /** drain-first's connect race at DOWN, measured and bounded. */
  connectRaceAtDown: `${RESULTS}#drain-firsts-connect-race-at-down`,
  /** HTTP/1's keep-alive race and what retry-on does to it. */
  keepAliveRace: `${RESULTS}#http1s-keep-alive-race-one-hop-in`,
  /** drain-first behind an LB that reuses connections, on real Envoy and HAProxy. */
  connectionReuse: 'docs/envoy.md#drain-first-behind-an-lb-that-reuses-connections',
  /** One node, two gateway pods: the health NodePort answers for either (the real cluster). */
  sharedNode: 'docs/cluster.md#one-node-one-pod',
  /** A new pod in the LB before its node's rules lead to it: the windows witnessed on the real cluster. */
  startHalf: 'docs/cluster.md#the-start-half-of-a-rollout',
} as const;
