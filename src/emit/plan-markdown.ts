import type { Derived } from '../model/derived';
import type { Plan } from '../plan/plan-gateway';
import { lossText } from '../plan/order-choice';
import { TIMING_ORDER } from '../plan/timings';
import { ANNOTATIONS, PATHS } from '../pod/names';
import type { PodChanges } from '../pod/pod-changes';
import { longLivedLines } from './long-lived-text';
import { minReadyBuys } from './rollout-text';
import { scalingLines } from './scaling-text';

/** A table cell: pipes escaped, newlines flattened. */
function cell(text: string | number): string {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function row(cells: Array<string | number>): string {
  return `| ${cells.map(cell).join(' | ')} |`;
}

function table(head: string[], rows: Array<Array<string | number>>): string[] {
  return [row(head), `|${head.map(() => '---').join('|')}|`, ...rows.map(row)];
}

function value(d: Derived): string {
  return d.unit === 'seconds' ? `${d.value} s` : String(d.value);
}

function inputs(d: Derived): string {
  return Object.entries(d.inputs)
    .map(([name, i]) => `${name} = ${i.value} (${i.source})`)
    .join('; ');
}

/** How the LB reaches the sidecar's LB endpoint, in words the LB team can configure from. */
function probeTarget(changes: PodChanges): string {
  const svc = changes.healthService;
  const port = changes.hcContainer.ports[0]!;
  const onGateway = changes.gatewayServiceHealthPort;
  if (onGateway) {
    return `every node's IP, NodePort ${onGateway.nodePort ?? '(allocated by Kubernetes: read it with `kubectl get svc ' + changes.gateway.name + '`)'} of the gateway's own Service \`${changes.gateway.name}\` (port \`${onGateway.name}\`, beside the traffic's: one slice, one sync, so a new pod passes only once its node's traffic rule leads to it), path \`${PATHS.lb}\``;
  }
  if (!svc) return `every node's IP, port ${port.hostPort ?? port.containerPort} (hostPort), path \`${PATHS.lb}\``;
  if (svc.type === 'NodePort') {
    return `every node's IP, NodePort ${svc.nodePort ?? '(allocated by Kubernetes: read it with `kubectl get svc ' + svc.name + '`)'} of Service \`${svc.name}\` (externalTrafficPolicy Local), path \`${PATHS.lb}\``;
  }
  return `Service \`${svc.name}\` (ClusterIP) or the pod IPs, port ${svc.port}, path \`${PATHS.lb}\``;
}

function lbTeamSection(plan: Plan, changes: PodChanges): string[] {
  const lb = plan.loadBalancer;
  const out = ['## What to hand the LB team', ''];
  out.push(`- **Health check target**: ${probeTarget(changes)}. 200 means in the pool; 503 means out.`);
  out.push(
    `- **Detection the plan assumes**: ${lb.lbDetectSeconds} s from the first failing probe to DOWN (${plan.derivations.lbDetectSeconds.formula}). A slower monitor than this makes the sequence end before the LB has acted.`,
  );
  out.push(`- **On DOWN**: ${lb.onDown}.`);
  if (lb.gracefulSignal && plan.sequence === 'soft-drain') {
    out.push(
      `- **Graceful signal**: the endpoint answers ${lb.gracefulSignal.status}${lb.gracefulSignal.body ? ` with body \`${lb.gracefulSignal.body}\`` : ''} to ask for ${lb.gracefulSignal.lbState}; the monitor must keep that configured (${lb.gracefulSignal.source}).`,
    );
  }
  out.push(`- **Refused connections**: ${lb.refused.detail}.`);
  if (changes.gatewayServiceTrafficPolicy) {
    out.push(
      `- **Traffic to the nodes**: the gateway's own Service has \`externalTrafficPolicy: ${changes.gatewayServiceTrafficPolicy}\` (the values overlay's \`service.externalTrafficPolicy\`), so what the LB sends to a node reaches that node's gateway pod, the one its probe of that node asked; a node without one answers nothing and stays out of the pool.`,
    );
  }
  const annotations = Object.entries(changes.gatewayServiceAnnotations);
  if (annotations.length > 0) {
    out.push(
      '',
      "The gateway's LoadBalancer Service carries these AWS Load Balancer Controller annotations (in the values overlay under `service.annotations`):",
      '',
    );
    out.push('```yaml', ...annotations.map(([k, v]) => `${k}: "${v}"`), '```');
  }
  const labels = Object.entries(changes.namespaceLabels);
  if (labels.length > 0) {
    out.push(
      '',
      `The namespace \`${changes.gateway.namespace}\` needs these labels (\`manifests.yaml\` carries them; with post-render or Argo CD, label it yourself):`,
      '',
    );
    out.push('```sh', `kubectl label namespace ${changes.gateway.namespace} ${labels.map(([k, v]) => `${k}=${v}`).join(' ')}`, '```');
  }
  out.push('', "`gracegate lb-config <spec>` prints the LB-side settings in the vendor's own syntax.");
  return out;
}

function podSection(plan: Plan, changes: PodChanges): string[] {
  const c = changes.hcContainer;
  return [
    '## What the pod gets',
    '',
    `- Sidecar \`${c.name}\` (\`${c.image}\`), ${changes.hcPlacement === 'initContainers' ? 'a native sidecar (init container with `restartPolicy: Always`: started before the proxy, SIGTERM only after the proxy exited)' : 'an ordinary container next to the proxy'} (${plan.hcSidecar.reason}): health port ${c.ports[0]!.containerPort} (\`${c.ports[0]!.name}\`${c.ports[0]!.hostPort ? `, hostPort ${c.ports[0]!.hostPort}` : ''}); readiness \`${PATHS.readiness}\`, liveness \`${PATHS.liveness}\`; preStop \`GET ${c.lifecycle.preStop.httpGet.path}\` on the witness port ${c.lifecycle.preStop.httpGet.port}. The control port stays on 127.0.0.1.`,
    `- \`${changes.proxy.containerName}\` is held by preStop \`GET ${changes.proxy.lifecycle.preStop.httpGet.path}\` on port ${changes.proxy.lifecycle.preStop.httpGet.port}: Envoy gets SIGTERM only after the sequence (≤ ${plan.timings.sequenceSeconds} s). That request is also the termination witness: a restart of the sidecar alone never starts a drain.`,
    `- \`terminationGracePeriodSeconds: ${changes.terminationGracePeriodSeconds}\`, \`proxy.istio.io/config\` = \`${changes.podAnnotations[ANNOTATIONS.proxyConfig]}\`.`,
    `- Strategy RollingUpdate maxSurge ${changes.strategy.rollingUpdate.maxSurge}, maxUnavailable ${changes.strategy.rollingUpdate.maxUnavailable}, minReadySeconds ${changes.minReadySeconds} (${minReadyBuys(plan)}); anti-affinity ${plan.rollout.antiAffinity}; ${changes.disruptionBudget ? `PodDisruptionBudget maxUnavailable ${changes.disruptionBudget.maxUnavailable}` : 'no PodDisruptionBudget'}.`,
    '',
    'Notes for whoever applies it:',
    '',
    ...(changes.gatewayApi ? gatewayApiNotes(changes) : helmNotes(changes)),
  ];
}

/** Istio's Gateway API path: no chart; istiod applies the parameters ConfigMap. */
function gatewayApiNotes(changes: PodChanges): string[] {
  const g = changes.gatewayApi!;
  return [
    g.classDefaults
      ? `- \`gateway-parameters.yaml\` holds the defaults of class \`${g.className}\` (in \`${g.parametersNamespace}\`, istiod's namespace): istiod applies them to every Gateway of the class, before any Gateway's own parametersRef ConfigMap.`
      : `- Add to the Gateway: \`spec.infrastructure.parametersRef: {group: "", kind: ConfigMap, name: ${g.parametersName}}\` (or use the Kustomize component). istiod applies the class defaults first, then this ConfigMap, to its Deployment \`${g.deploymentName}\`.`,
    `- istiod creates the PodDisruptionBudget${changes.autoscaler ? ' and the HorizontalPodAutoscaler' : ''} only because their keys are in the ConfigMap; \`manifests.yaml\` holds the hc ConfigMap${changes.healthService ? ' and the health Service' : ''}${changes.gatewayServiceHealthPort ? "; the `service` key adds the health port to istiod's Service of the Gateway" : ''}.`,
    `- Selectors use the label istiod puts on a Gateway's pods: ${Object.entries(changes.selectorLabels)
      .map(([k, v]) => `\`${k}: ${v}\``)
      .join(', ')}.`,
  ];
}

/** A Helm chart renders the gateway. */
function helmNotes(changes: PodChanges): string[] {
  return [
    changes.autoscaler
      ? `- The chart's HPA stays on with ${changes.autoscaler.minReplicas} to ${changes.autoscaler.maxReplicas} replicas; the Deployment carries no \`replicas\` (the HPA owns the count).`
      : "- The istio/gateway overlay turns the chart's HPA off: every number here is computed for the spec's replicas.",
    "- Leave the chart's own `podDisruptionBudget` empty: two PDBs over one pod make every eviction fail.",
    `- Helm replaces lists: if your own values set \`volumes\` or \`${changes.hcPlacement === 'initContainers' ? 'initContainers' : 'additionalContainers'}\`, merge them into the overlay by hand.`,
    `- Selectors assume the Helm release is named \`${changes.gateway.name}\` (pods labelled ${Object.entries(changes.selectorLabels)
      .map(([k, v]) => `\`${k}: ${v}\``)
      .join(', ')}).`,
  ];
}

/**
 * PLAN.md: the plan for the reviewer of the GitOps change. Every number with its formula and
 * inputs, the timeline, the rollout, the findings, and (given the pod changes) what the pod gets
 * and what to hand the LB team. `picture`: the timeline's SVG beside it (synth writes plan.svg).
 */
export function renderPlanMarkdown(plan: Plan, changes?: PodChanges, picture?: string): string {
  const lb = plan.loadBalancer;
  const out: string[] = [
    `# Termination plan: ${plan.gateway.namespace}/${plan.gateway.name}`,
    '',
    `Generated by \`gracegate synth\` from the gateway spec; \`plan.json\` beside this file holds the same plan as data.`,
    '',
    `**Sequence: ${plan.sequence}.** ${plan.sequenceReason}.`,
    '',
    `**${plan.timeline.lossless ? 'Lossless' : 'Not lossless'}**: ${plan.timeline.losslessReason}.`,
    '',
    '## Orders',
    '',
    `Expected requests lost per pod termination at ${plan.traffic.requestsPerSecondPerPod} requests/s per pod (${plan.traffic.requestsPerSecondSource}), request lengths \`${plan.traffic.requestDurations}\` (${plan.traffic.requestDurationsSource}), by the loss model \`gracegate simulate\` runs (docs/simulate.md):`,
    '',
    ...table(
      ['order', 'expected loss', 'refused', 'cut at DOWN', 'cut at exit', 'keep-alive race'],
      plan.orders.map((o) =>
        o.runnable
          ? [
              o.order === plan.sequence ? `**${o.order}** (the plan's)` : o.order,
              lossText(o.expected),
              lossText(o.byFate.refused),
              lossText(o.byFate.cutAtDown),
              lossText(o.byFate.cutAtExit),
              lossText(o.byFate.keepAliveRace),
            ]
          : [o.order, `not runnable: ${o.notRunnable}`, '', '', '', ''],
      ),
    ),
    ...plan.lbOptions.map(
      (o) => `- Option: ${o.fix.description}: ${o.order} would lose ${lossText(o.expected)} (\`gracegate lb-config\` prints the LB lines).`,
    ),
    ...(plan.decidingUnknown ? [`- Not known, and it would change the choice: ${plan.decidingUnknown}.`] : []),
    '',
    '## Load balancer',
    '',
    `- Model: ${lb.model}; detects a failing probe in ${lb.lbDetectSeconds} s.`,
    `- On DOWN: ${lb.onDown}.`,
    `- Refused connections: ${lb.refused.detail}.`,
    ...(lb.gracefulSignal
      ? [
          `- Graceful signal: ${lb.gracefulSignal.status}${lb.gracefulSignal.body ? ` + body \`${lb.gracefulSignal.body}\`` : ''} → ${lb.gracefulSignal.lbState}.`,
        ]
      : []),
    `- The probe ${lb.probeReachesSidecar ? 'reaches' : 'does **not** reach'} the sidecar.`,
    '',
    '## Timings',
    '',
    ...table(
      ['timing', 'value', 'formula', 'inputs'],
      TIMING_ORDER.map((k) => {
        const d = plan.derivations[k];
        return [`\`${k}\``, value(d), d.formula, inputs(d)];
      }),
    ),
    '',
    '## Timeline',
    '',
    'Seconds after the preStop hooks start; ≤ means "no later than", depending on traffic.',
    '',
    ...(picture ? [`![The timeline: the Kubernetes and LB clocks, the six events, the waits and where a request can still be lost](${picture})`, ''] : []),
    ...table(
      ['at', 'event', 'what', 'note'],
      plan.timeline.entries.map((e) => [`${e.bound === 'by' ? '≤ ' : ''}${e.atSeconds} s`, e.event ? `[${e.event}]` : '', e.name, e.note]),
    ),
    '',
    '## Rollout',
    '',
    `maxSurge ${plan.rollout.maxSurge}, maxUnavailable ${plan.rollout.maxUnavailable}, anti-affinity ${plan.rollout.antiAffinity}${plan.rollout.onePodPerNode ? ' (one pod per node)' : ''}, PodDisruptionBudget ${plan.rollout.pdbMaxUnavailable === null ? 'none' : `maxUnavailable ${plan.rollout.pdbMaxUnavailable}`}: ${plan.rollout.reason}.`,
    '',
    ...(plan.scaling.mode === 'autoscaled' ? ['## Scaling', '', ...scalingLines(plan).map((l) => `- ${l}`), ''] : []),
    ...(plan.longLived
      ? ['## Long-lived streams', '', ...longLivedLines(plan).map((l) => `- ${l}`), '', 'Measured on real Envoy: `docs/long-lived.md`.', '']
      : []),
    '## Findings',
    '',
    ...(plan.findings.length === 0
      ? ['None.']
      : table(
          ['severity', 'id', 'field', 'message', 'fix'],
          plan.findings.map((f) => [
            f.severity,
            `\`${f.id}\``,
            `\`${f.field}\``,
            f.evidence ? `${f.message} (measured: \`${f.evidence}\`)` : f.message,
            f.remediation,
          ]),
        )),
  ];
  if (changes) out.push('', ...podSection(plan, changes), '', ...lbTeamSection(plan, changes));
  return `${out.join('\n')}\n`;
}
