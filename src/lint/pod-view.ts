import { at, listAt, objAt, type LintObject, type Obj } from './objects';
import { isObject, type Path } from '../core/json';

/**
 * A pod as the lint rules read it, whatever object carries it (a Deployment's template, a
 * StatefulSet's, a bare Pod): the rule inputs are this view, not the workload kinds, so an app
 * workload (a GracefulWorkload's Deployment) is linted by the same rules as a gateway.
 */

/** Kubernetes' default terminationGracePeriodSeconds (docs/facts.md §6). */
export const DEFAULT_GRACE_SECONDS = 30;

/** What a container's preStop hook does, as far as the termination's timing goes. */
export type PreStop =
  | { kind: 'none' }
  /** `lifecycle.preStop.sleep` (KEP-3960) or an exec of `sleep N` (directly or through a shell). */
  | { kind: 'sleep'; seconds: number; native: boolean; shell: boolean }
  | { kind: 'httpGet'; path: string; port: number | string }
  /** `exec gracegate drain` (gracegate's sidecar preStop before it became `httpGet /hc-stopping`): blocks until the sequence ends. */
  | { kind: 'gracegate-drain' }
  | { kind: 'other' };

export type ProbeView = { path: Path; httpPath?: string; port?: number | string; value: Obj };

export type ContainerView = {
  name: string;
  /** Path of the container in its object. */
  path: Path;
  image: string;
  value: Obj;
  preStop: PreStop;
  readiness?: ProbeView;
  liveness?: ProbeView;
  /** containerPort numbers by port name, for resolving named probe ports. */
  portsByName: Record<string, number>;
};

export type PodView = {
  owner: LintObject;
  /** Path of the pod spec in the owner (['spec'] for a Pod, ['spec','template','spec'] for workloads). */
  specPath: Path;
  /** Path of the pod metadata in the owner. */
  metaPath: Path;
  spec: Obj;
  labels: Obj;
  annotations: Obj;
  /** spec.replicas where the kind has it and the manifest sets it. */
  replicas: number | undefined;
  /** Whether the kind has a replica count (Deployment, StatefulSet, ReplicaSet). */
  scalable: boolean;
  graceSeconds: number;
  graceGiven: boolean;
  /** The containers, then the native sidecars (init containers with restartPolicy Always). */
  containers: ContainerView[];
};

const TEMPLATED_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job']);
const SCALABLE_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController']);

function sleepSeconds(arg: unknown): number | undefined {
  const m = typeof arg === 'string' || typeof arg === 'number' ? /^(\d+(?:\.\d+)?)s?$/.exec(String(arg).trim()) : null;
  return m ? Number(m[1]) : undefined;
}

const SHELLS = /(^|\/)(sh|bash|ash|dash)$/;

/** What a preStop does, read from its hook. */
export function preStopOf(container: Obj): PreStop {
  const hook = objAt(container, ['lifecycle', 'preStop']);
  if (isObject(hook.sleep)) {
    const s = Number(hook.sleep.seconds);
    return Number.isFinite(s) ? { kind: 'sleep', seconds: s, native: true, shell: false } : { kind: 'other' };
  }
  if (isObject(hook.httpGet)) {
    return { kind: 'httpGet', path: String(hook.httpGet.path ?? '/'), port: hook.httpGet.port as number | string };
  }
  if (isObject(hook.exec)) {
    const cmd = listAt(hook.exec, ['command']).map(String);
    const bin = cmd[0] ?? '';
    if (/(^|\/)sleep$/.test(bin) && cmd.length === 2) {
      const s = sleepSeconds(cmd[1]);
      return s !== undefined ? { kind: 'sleep', seconds: s, native: false, shell: false } : { kind: 'other' };
    }
    if (SHELLS.test(bin) && cmd[1] === '-c' && cmd.length === 3) {
      const m = /^\s*(?:exec\s+)?sleep\s+(\S+)\s*;?\s*$/.exec(cmd[2]!);
      const s = m ? sleepSeconds(m[1]) : undefined;
      if (s !== undefined) return { kind: 'sleep', seconds: s, native: false, shell: true };
    }
    if (/(^|\/)gracegate$/.test(bin) && cmd[1] === 'drain') return { kind: 'gracegate-drain' };
    return { kind: 'other' };
  }
  return Object.keys(hook).length > 0 ? { kind: 'other' } : { kind: 'none' };
}

function probeOf(container: Obj, base: Path, key: string): ProbeView | undefined {
  const value = container[key];
  if (!isObject(value)) return undefined;
  const get = objAt(value, ['httpGet']);
  return {
    path: [...base, key],
    value,
    ...(typeof get.path === 'string' ? { httpPath: get.path } : {}),
    ...(typeof get.port === 'number' || typeof get.port === 'string' ? { port: get.port } : {}),
  };
}

function containerView(value: Obj, path: Path): ContainerView {
  const portsByName: Record<string, number> = {};
  for (const p of listAt(value, ['ports'])) {
    if (isObject(p) && typeof p.name === 'string' && typeof p.containerPort === 'number') portsByName[p.name] = p.containerPort;
  }
  const readiness = probeOf(value, path, 'readinessProbe');
  const liveness = probeOf(value, path, 'livenessProbe');
  return {
    name: String(value.name ?? ''),
    path,
    image: String(value.image ?? ''),
    value,
    preStop: preStopOf(value),
    ...(readiness ? { readiness } : {}),
    ...(liveness ? { liveness } : {}),
    portsByName,
  };
}

/** The pod an object carries, or undefined for an object that carries none. */
export function podViewOf(owner: LintObject): PodView | undefined {
  const isPod = owner.kind === 'Pod';
  if (!isPod && !TEMPLATED_KINDS.has(owner.kind)) return undefined;
  const specPath = isPod ? ['spec'] : ['spec', 'template', 'spec'];
  const metaPath = isPod ? ['metadata'] : ['spec', 'template', 'metadata'];
  const spec = at(owner.value, specPath);
  if (!isObject(spec)) return undefined;
  const grace = spec.terminationGracePeriodSeconds;
  const replicas = at(owner.value, ['spec', 'replicas']);
  return {
    owner,
    specPath,
    metaPath,
    spec,
    labels: objAt(owner.value, [...metaPath, 'labels']),
    annotations: objAt(owner.value, [...metaPath, 'annotations']),
    replicas: SCALABLE_KINDS.has(owner.kind) && typeof replicas === 'number' ? replicas : undefined,
    scalable: SCALABLE_KINDS.has(owner.kind),
    graceSeconds: typeof grace === 'number' ? grace : DEFAULT_GRACE_SECONDS,
    graceGiven: typeof grace === 'number',
    containers: [
      ...listAt(spec, ['containers']).flatMap((c, i) => (isObject(c) ? [containerView(c, [...specPath, 'containers', i])] : [])),
      // Native sidecars (KEP-753): init containers that run beside the others until the end.
      ...listAt(spec, ['initContainers']).flatMap((c, i) =>
        isObject(c) && c.restartPolicy === 'Always' ? [containerView(c, [...specPath, 'initContainers', i])] : [],
      ),
    ],
  };
}

/** The path of the grace period in the pod's owner. */
export function gracePath(pod: PodView): Path {
  return [...pod.specPath, 'terminationGracePeriodSeconds'];
}

/** A probe's or hook's port as a number, resolving a port name in the container. */
export function portNumber(container: ContainerView, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  return port !== undefined ? container.portsByName[port] : undefined;
}

/** The longest preStop sleep of the pod's containers (they run at once: docs/facts.md §6), if any. */
export function longestSleep(pod: PodView): { container: ContainerView; seconds: number } | undefined {
  let best: { container: ContainerView; seconds: number } | undefined;
  for (const c of pod.containers) {
    if (c.preStop.kind === 'sleep' && (!best || c.preStop.seconds > best.seconds)) best = { container: c, seconds: c.preStop.seconds };
  }
  return best;
}
