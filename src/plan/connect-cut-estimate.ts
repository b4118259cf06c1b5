import type { GatewaySpec } from '../schema/gateway-spec';

/*
 * drain-first's residual loss (finding drain-first-cuts-connects-at-down). Until DOWN the LB keeps
 * choosing the draining pod; each pick is a connect the pod refuses, and the pick that is still
 * connecting at the instant of DOWN is killed with the flush. So the loss is the rate of picks
 * times how long one lasts: one LB-to-pod round trip, plus the LB's own reaction time, which no
 * spec knows: hence an estimate, and a floor.
 */

/** Requests cut per pod termination by drain-first's connect race: rate x one refused connect. */
export function connectCutEstimate(traffic: GatewaySpec['spec']['traffic'], replicas: number): string {
  const rtt = traffic.lbToPodRoundTripMs;
  const rate = traffic.requestsPerSecondPerPod;
  if (rate === undefined) {
    return `Expected loss per pod termination = requests/s the LB sends the pod x one LB-to-pod round trip (spec.traffic.lbToPodRoundTripMs ${rtt} ms), e.g. 1,000 req/s -> ${formatCount((1000 * rtt) / 1000)} requests; set spec.traffic.requestsPerSecondPerPod for this gateway's number`;
  }
  const perPod = (rate * rtt) / 1000;
  return `Expected loss = spec.traffic.requestsPerSecondPerPod ${rate} req/s x spec.traffic.lbToPodRoundTripMs ${rtt} ms = ${formatCount(perPod)} requests per pod termination, ${formatCount(perPod * replicas)} per rollout of all ${replicas} pods`;
}

/** A count or rate: whole from 10, two significant digits below (an estimate, not a measurement). */
export function formatCount(n: number): string {
  return n >= 10 ? String(Math.round(n)) : String(Number(n.toPrecision(2)));
}
