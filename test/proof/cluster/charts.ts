/**
 * The istio/gateway charts the cluster installs come from the fixtures locator
 * (test/support/fixtures.ts): the released ones, and "1.31" from the Istio source the cluster build
 * uses (the pseudo-version scripts/cluster/go/istio/go.mod pins, in the machine's module cache).
 */
export { gatewayChart as chartDir } from '../../support/fixtures';
