/**
 * docs/lb-model.md: each LB's behaviour as the model has it (src/lb/<vendor>/behaviour.ts), fact by
 * fact, with the source of each, for each vendor's defaults and the settings that change a fact;
 * then every fact nothing establishes ("not known"). Rendered from the code itself:
 * `node dist/test/lb/lb-model-main.js` writes it, test/lb/lb-model-docs.test.ts fails when it is
 * stale.
 */
import { lbBehaviour, loadBalancerSchema } from '../../src/lb/registry';
import type { FactSource, LbBehaviour } from '../../src/model/lb-behaviour';

/** Each vendor at its defaults, then each setting that changes one of its facts. */
export const VARIANTS: Array<{ label: string; block: Record<string, unknown> }> = [
  { label: 'HAProxy (defaults)', block: { model: 'haproxy' } },
  { label: 'HAProxy `on-marked-down shutdown-sessions`', block: { model: 'haproxy', onMarkedDown: 'shutdown-sessions' } },
  { label: 'HAProxy `retries 3` + `option redispatch`', block: { model: 'haproxy', redispatch: true } },
  { label: 'HAProxy `retry-on empty-response`', block: { model: 'haproxy', retryOnEmptyResponse: true } },
  { label: 'HAProxy `httpServerClose: false`', block: { model: 'haproxy', httpServerClose: false } },
  { label: 'HAProxy `http-check disable-on-404`', block: { model: 'haproxy', disableOn404: true } },
  { label: 'NetScaler (defaults)', block: { model: 'citrix' } },
  { label: 'NetScaler `downStateFlush DISABLED`', block: { model: 'citrix', downStateFlush: 'DISABLED' } },
  { label: 'NetScaler AppQoE `-retryOnReset YES`', block: { model: 'citrix', retryOnReset: true } },
  { label: 'NetScaler `-maxReq 1`', block: { model: 'citrix', maxReq: 1 } },
  { label: 'NetScaler `-trofsCode 299`', block: { model: 'citrix', trofsCode: 299 } },
  { label: 'F5 BIG-IP (defaults)', block: { model: 'f5' } },
  { label: 'F5 `service-down-action reset`', block: { model: 'f5', serviceDownAction: 'reset' } },
  { label: 'F5 `reselect-tries 1`', block: { model: 'f5', reselectTries: 1 } },
  { label: 'F5 `recv-disable`', block: { model: 'f5', recvDisable: 'DRAINING' } },
  { label: 'AWS NLB (defaults: instance targets)', block: { model: 'nlb' } },
  { label: 'AWS NLB ip targets, connection termination off', block: { model: 'nlb', targetType: 'ip', unhealthyConnectionTermination: false } },
  { label: 'in-mesh Envoy (HTTP)', block: { model: 'envoy', activeHealthCheck: { interval: 2 } } },
  { label: 'in-mesh Envoy (tcp_proxy)', block: { model: 'envoy', activeHealthCheck: { interval: 2 }, upstreamProtocol: 'tcp' } },
];

function behaviourOf(block: Record<string, unknown>): LbBehaviour {
  const lb = loadBalancerSchema.parse(block);
  return lbBehaviour(lb, new Set(Object.keys(block).map((k) => `spec.loadBalancer.${k}`)));
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** Every distinct source, numbered in the order met. */
class Sources {
  readonly list: FactSource[] = [];
  ref(s: FactSource): string {
    let i = this.list.findIndex((x) => x.kind === s.kind && x.ref === s.ref);
    if (i < 0) i = this.list.push(s) - 1;
    return `[${i + 1}]`;
  }
}

export function renderLbModel(): string {
  const sources = new Sources();
  const rows = VARIANTS.map(({ label, block }) => {
    const b = behaviourOf(block);
    const signal = b.gracefulSignal
      ? `${b.gracefulSignal.status}${b.gracefulSignal.body ? ` + "${b.gracefulSignal.body}"` : ''} → ${b.gracefulSignal.lbState} ${sources.ref(b.gracefulSignal.doc)}`
      : 'none';
    return `| ${label} | ${cell(b.onDown)} ${sources.ref(b.onDownSource)} | **${b.refused.value}**: ${cell(b.refused.detail)} ${sources.ref(b.refused.source)} | ${b.resetRequestResent.value ? 'yes' : 'no'} ${sources.ref(b.resetRequestResent.source)} | ${b.reuse.drainFirst ? 'yes' : 'no'} / ${b.reuse.otherOrders ? 'yes' : 'no'} ${sources.ref(b.reuse.source)} | ${cell(signal)} |`;
  });
  const unknown = VARIANTS.flatMap(({ label, block }) => {
    const b = behaviourOf(block);
    const facts: Array<[string, FactSource, string]> = [
      ['on DOWN', b.onDownSource, b.onDown],
      ['a refused connection', b.refused.source, b.refused.detail],
      ['a request reset under it', b.resetRequestResent.source, b.resetRequestResent.detail],
      ['connections reused', b.reuse.source, b.reuse.detail],
    ];
    return facts
      .filter(([, s]) => s.kind === 'not-known')
      .map(([what, s, detail]) => `- ${label.split(' ')[0]}, ${what}: ${detail} (${s.ref}); the planner takes the worse value.`);
  }).filter((line, i, all) => all.indexOf(line) === i);
  return [
    '# The LB model, fact by fact',
    '',
    '<!-- generated from src/lb/<vendor>/behaviour.ts: `npm run build && node dist/test/lb/lb-model-main.js` -->',
    '',
    'What each load balancer does, as the one model of it has it (`src/lb/<vendor>/behaviour.ts`): the',
    'planner ranks the orders by it, `simulate` runs it, `lb-config` writes its settings, `lint` reads it',
    "for the LB it infers. Each fact names its source: the vendor's own documentation, a measurement",
    'on a real binary (docs/e2e/RESULTS.md, docs/envoy.md), or nothing ("not known", below).',
    '',
    '| LB, setting | on DOWN | a connection the pod refuses | a request reset under it re-sent | connections reused (drain-first / other orders) | graceful signal |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    '## Sources',
    '',
    ...sources.list.map(
      (s, i) =>
        `${i + 1}. ${s.kind === 'vendor-doc' ? "the vendor's documentation" : s.kind === 'measured' ? 'measured' : s.kind === 'users' ? 'measured by users' : 'not known'}: ${s.ref}`,
    ),
    '',
    '## Not known',
    '',
    ...(unknown.length > 0 ? unknown : ['Nothing: every fact above has a source.']),
    '',
  ].join('\n');
}
