import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveWorkloadSpec, type ResolvedWorkloadSpec } from '../../src/schema/spec-kinds';
import type { WorkloadSpecInput } from '../../src/schema/workload-spec';

let scratch: string | undefined;

/** Writes a spec into this test process's scratch directory (removed at exit) and returns its path. */
export function specFile(name: string, text: string): string {
  if (scratch === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'gracegate-workload-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    scratch = dir;
  }
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

/**
 * A minimal valid GracefulWorkload: the experiment's app (2 replicas, requests up to 40 s, graceful
 * on SIGTERM with SHUTDOWN_TIMEOUT_SEC) behind kube-proxy on 1.31, with any part of `spec` replaced.
 */
export function workloadInput(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): WorkloadSpecInput {
  return {
    apiVersion: 'gracegate.dev/v1alpha1',
    kind: 'GracefulWorkload',
    metadata: { name: 'demo', namespace: 'graceful-test', ...metadata },
    spec: {
      replicas: 2,
      kubernetesVersion: '1.31',
      traffic: { longRequestP99Seconds: 39.8, maxRequestSeconds: 40 },
      app: { gracefulShutdown: true, shutdownTimeout: { via: 'env', name: 'SHUTDOWN_TIMEOUT_SEC' } },
      ...spec,
    },
  } as WorkloadSpecInput;
}

export function resolvedWorkload(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): ResolvedWorkloadSpec {
  return resolveWorkloadSpec(workloadInput(spec, metadata));
}
