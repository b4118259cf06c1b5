import { gracePath, longestSleep, type PodView } from '../pod-view';
import type { LintContext } from '../context';
import type { LintFindingDraft, LintRule } from '../rule';
import { holdOf, planTarget } from './common';

/** Seconds added beyond what the termination needs, as the plan does (spec.drain.safetyMargin's default). */
export const GRACE_SAFETY_SECONDS = 30;

/** Distroless images: no shell and no `sleep` binary to exec. */
const NO_SHELL_IMAGE = /distroless|^cgr\.dev\/chainguard\/|(^|\/)gracegate\/gracegate(:|@|$)/;

/** What the pod's termination needs before SIGKILL: the proxy's hold, then the proxy's own drain. */
function needed(ctx: LintContext, pod: PodView): { seconds: number; formula: string; numbers: NonNullable<LintFindingDraft['numbers']> } | undefined {
  const hold = holdOf(ctx, pod);
  if (!hold || hold.kind === 'unknown') return undefined;
  const drain = ctx.proxyDrain(pod);
  const proxyDrain = drain.exitOnZero.value
    ? {
        name: 'minimumDrainDuration',
        value: drain.minimumDrainSeconds.value,
        source: `${drain.minimumDrainSeconds.source} (EXIT_ON_ZERO_ACTIVE_CONNECTIONS: at least this)`,
      }
    : { name: 'terminationDrainDuration', value: drain.terminationDrainSeconds.value, source: drain.terminationDrainSeconds.source };
  const numbers: NonNullable<LintFindingDraft['numbers']> = {};
  let holdSeconds = 0;
  let formula = proxyDrain.name;
  if (hold.kind === 'gracegate') {
    if (hold.seconds === undefined) return undefined;
    holdSeconds = hold.seconds;
    formula = `lbBufferSeconds + drainTimeoutSeconds + ${formula}`;
    numbers.lbBufferSeconds = { value: hold.sidecar!.config!.lbBufferSeconds, source: `${hold.sidecar!.configMap!.id} hc.json` };
    numbers.drainTimeoutSeconds = { value: hold.sidecar!.config!.drainTimeoutSeconds, source: `${hold.sidecar!.configMap!.id} hc.json` };
  } else if (hold.kind === 'sleep') {
    holdSeconds = hold.seconds;
    formula = `preStopSleep + ${formula}`;
    numbers.preStopSleep = { value: hold.seconds, source: `${pod.owner.id} ${hold.proxy.name} preStop` };
  }
  numbers[proxyDrain.name] = { value: proxyDrain.value, source: proxyDrain.source };
  return { seconds: Math.round((holdSeconds + proxyDrain.value) * 1000) / 1000, formula, numbers };
}

export const GRACE_RULES: LintRule[] = [
  {
    id: 'grace-period-short',
    severity: 'error',
    summary: "terminationGracePeriodSeconds is shorter than the proxy's hold plus its drain after SIGTERM",
    rationale:
      "The grace period starts before preStop and preStop time counts against it; at its end the kubelet kills every container (docs/facts.md §6). The proxy needs its hold (gracegate's sequence: LB buffer + drain timeout; or a preStop sleep) and then Istio's drain after SIGTERM (terminationDrainDuration, docs/facts.md §5): a shorter grace period cuts the requests still in flight. Under --spec the plan's own grace period is the reference (plan-mismatch).",
    check: (ctx) => {
      const target = planTarget(ctx);
      return ctx.gateways.flatMap((pod) => {
        if (pod === target) return [];
        const need = needed(ctx, pod);
        const sleep = longestSleep(pod);
        // A sleep the grace period does not even cover is prestop-sleep-exceeds-grace's.
        if (!need || pod.graceSeconds >= need.seconds || (sleep && sleep.seconds >= pod.graceSeconds)) return [];
        const want = Math.ceil(need.seconds) + GRACE_SAFETY_SECONDS;
        return [
          {
            object: pod.owner,
            path: gracePath(pod),
            message: `terminationGracePeriodSeconds ${pod.graceSeconds}${pod.graceGiven ? '' : " (Kubernetes' default)"} is shorter than the ${need.seconds} s the proxy needs (${need.formula}): the kubelet kills it while requests are in flight`,
            remediation: `set terminationGracePeriodSeconds to at least ${Math.ceil(need.seconds)}; ${want} keeps gracegate's ${GRACE_SAFETY_SECONDS} s safety margin`,
            numbers: {
              terminationGracePeriodSeconds: { value: pod.graceSeconds, source: pod.graceGiven ? `${pod.owner.id}` : 'Kubernetes default 30 s' },
              ...need.numbers,
            },
            formula: `terminationGracePeriodSeconds >= ${need.formula}`,
            fix: {
              description: `terminationGracePeriodSeconds ${want} (= ${need.seconds} needed + ${GRACE_SAFETY_SECONDS} s margin, rounded up)`,
              edits: [{ object: pod.owner.id, path: gracePath(pod), set: want }],
            },
          },
        ];
      });
    },
  },
  {
    id: 'prestop-sleep-exceeds-grace',
    severity: 'error',
    summary: 'a preStop sleep as long as the grace period or longer',
    rationale:
      'preStop time counts against the grace period; when it runs out the kubelet gives one 2 s extension, then SIGKILL (docs/facts.md §6). A sleep that long means the container never gets its SIGTERM shutdown: whatever is in flight when the sleep ends is killed.',
    check: (ctx) => {
      const target = planTarget(ctx);
      return ctx.pods.flatMap((pod) =>
        pod.containers.flatMap((c) => {
          if (c.preStop.kind !== 'sleep' || c.preStop.seconds < pod.graceSeconds) return [];
          const isProxy = c.name === ctx.proxyContainer;
          const after = isProxy ? ctx.proxyDrain(pod).terminationDrainSeconds.value : 0;
          const want = Math.ceil(c.preStop.seconds + after) + GRACE_SAFETY_SECONDS;
          return [
            {
              object: pod.owner,
              path: [...c.path, 'lifecycle', 'preStop'],
              message: `${c.name}'s preStop sleeps ${c.preStop.seconds} s, but terminationGracePeriodSeconds is ${pod.graceSeconds}${pod.graceGiven ? '' : " (Kubernetes' default)"}: the kubelet kills the container before it ever gets SIGTERM`,
              remediation:
                pod === target
                  ? `the plan's grace period does not cover this sleep: shorten it below ${pod.graceSeconds} s, or raise spec.drain.safetyMargin`
                  : `raise terminationGracePeriodSeconds to at least ${Math.ceil(c.preStop.seconds + after)} s${isProxy ? " (the sleep, then the proxy's terminationDrainDuration)" : ''}, or shorten the sleep`,
              numbers: {
                preStopSleep: { value: c.preStop.seconds, source: `${pod.owner.id} ${c.name} preStop` },
                terminationGracePeriodSeconds: { value: pod.graceSeconds, source: pod.graceGiven ? pod.owner.id : 'Kubernetes default 30 s' },
              },
              formula: 'preStopSleep < terminationGracePeriodSeconds',
              related: [{ object: pod.owner, path: gracePath(pod) }],
              // Under a plan the grace period is the plan's: raising it here would be undone by plan-mismatch.
              ...(pod === target
                ? {}
                : { fix: { description: `terminationGracePeriodSeconds ${want}`, edits: [{ object: pod.owner.id, path: gracePath(pod), set: want }] } }),
            },
          ];
        }),
      );
    },
  },
  {
    id: 'prestop-exec-sleep',
    severity: 'info',
    summary: 'a preStop that execs `sleep` (warning where the image has no shell, as distroless images)',
    rationale:
      "An exec hook needs the binary in the image; distroless images have neither a shell nor sleep, so the hook fails at once and the container gets SIGTERM immediately. Kubernetes' native `lifecycle.preStop.sleep` action needs nothing in the image (KEP-3960: beta and on by default from 1.30, GA in 1.34; docs/facts.md §6).",
    check: (ctx) =>
      ctx.pods.flatMap((pod) =>
        pod.containers.flatMap((c) => {
          if (c.preStop.kind !== 'sleep' || c.preStop.native) return [];
          const noShell = NO_SHELL_IMAGE.test(c.image);
          const seconds = Math.ceil(c.preStop.seconds);
          return [
            {
              object: pod.owner,
              path: [...c.path, 'lifecycle', 'preStop', 'exec'],
              severity: noShell ? 'warning' : 'info',
              message: `${c.name}'s preStop execs ${c.preStop.shell ? 'a shell to run ' : ''}sleep ${c.preStop.seconds}${noShell ? `, but its image ${c.image} has no shell or sleep binary: the hook fails at once and the container gets SIGTERM immediately` : `: it works only while the image (${c.image || 'unset'}) carries ${c.preStop.shell ? 'a shell and ' : ''}sleep`}`,
              remediation: `use the native action: lifecycle.preStop.sleep.seconds: ${seconds} (Kubernetes >= 1.30)`,
              fix: {
                description: `preStop sleep action of ${seconds} s`,
                edits: [{ object: pod.owner.id, path: [...c.path, 'lifecycle', 'preStop'], set: { sleep: { seconds } } }],
              },
            },
          ];
        }),
      ),
  },
];
