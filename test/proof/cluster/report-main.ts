/**
 * `npm run cluster:report`: measures everything docs/cluster.md and the README's real-cluster rows
 * show, on the cluster (started bare if it is not up), and writes docs/cluster/results.json, then
 * renders both documents from it. About 15 minutes on 2 cores; a run that fails half-way resumes
 * where it stopped (`--fresh` starts over). `--render` only renders the committed results file again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release } from 'node:os';
import { dirname, join } from 'node:path';
import { LB_SETTINGS } from '../harness/scenario';
import { REPO_ROOT } from '../../support/repo';
import { refreshSidecarImage, status, up } from './cluster';
import { kubectl } from './kubectl';
import { compareKubelet, KUBELET_MODEL_NS } from './kubelet-model';
import { ISTIO_VERSION, KUBERNETES_VERSION, PROXY_ENVOY_VERSION } from './layout';
import { finalScrape, longDrain, probeLoad } from './measurements';
import type { ClusterResults } from './render';
import { readClusterResults, RESULTS_FILE, renderDocs, writeClusterResults } from './results-file';
import { runSession, SESSIONS, VARIANT_SESSIONS } from './sessions';
import { waitSyncedHealthy } from './argocd/apps';
import { DISCOVERED } from './argocd/gateways';
import { ARGOCD_VERSION } from './argocd/install';
import { gitopsRollout, setUpArgoCd, tearDownArgoCd, type ArgoCdSession } from './argocd/session';
import { freePort } from '../../support/ports';

const say = (line: string): void => {
  process.stderr.write(`cluster report: ${line}\n`);
};

/** What a report run measured so far: a run that fails half-way resumes from here (`--fresh` starts over). */
const PARTIAL = join(REPO_ROOT, '.cache', 'cluster', 'report-partial.json');

type SoFar = Partial<Omit<ClusterResults, 'generated'>> & { sessions?: Record<string, ClusterResults['runs']> };

function savePartial(p: SoFar): void {
  mkdirSync(dirname(PARTIAL), { recursive: true });
  writeFileSync(PARTIAL, JSON.stringify(p));
}

async function measure(fresh: boolean): Promise<ClusterResults> {
  const p: SoFar = !fresh && existsSync(PARTIAL) ? (JSON.parse(readFileSync(PARTIAL, 'utf8')) as SoFar) : {};
  p.sessions ??= {};
  if (!status().ready) await up({ bare: true });
  await refreshSidecarImage();
  if (!p.kubeletModel) {
    kubectl(['create', 'namespace', KUBELET_MODEL_NS], { allowFailure: true });
    p.kubeletModel = [await compareKubelet(false), await compareKubelet(true)];
    kubectl(['delete', 'namespace', KUBELET_MODEL_NS, '--wait=false'], { allowFailure: true });
    savePartial(p);
    say('kubelet compared');
  }
  for (const [i, s] of [...SESSIONS, ...VARIANT_SESSIONS].entries()) {
    if (p.sessions[s.key]) continue;
    const o = await runSession(s, i);
    for (const r of o.runs) if (r.problems.length > 0) say(`${s.key} ${r.run.action}: ${r.problems.join('; ')}`);
    p.sessions[s.key] = o.runs.map((r) => r.summary);
    savePartial(p);
    say(`session ${s.key} done`);
  }
  if (!p.probeLoad) {
    p.probeLoad = await probeLoad(0);
    savePartial(p);
    say('probe load done');
  }
  if (!p.longDrain) {
    p.longDrain = [await longDrain(LB_SETTINGS.flushRedispatch, 0), await longDrain(LB_SETTINGS.noFlush, 1)];
    savePartial(p);
    say('long drains done');
  }
  if (!p.finalScrape) {
    p.finalScrape = await finalScrape(0);
    savePartial(p);
    say('final scrape done');
  }
  if (!p.argocd) {
    let s: ArgoCdSession | undefined;
    try {
      s = await setUpArgoCd();
      await waitSyncedHealthy(DISCOVERED.name, s.seeded, 360_000);
      const r = await gitopsRollout(s, DISCOVERED, s.seeded, await freePort());
      p.argocd = { version: ARGOCD_VERSION, runs: [r.summary] };
    } finally {
      await tearDownArgoCd(s);
    }
    savePartial(p);
    say('Argo CD GitOps rollout done');
  }
  const runs = SESSIONS.flatMap((s) => p.sessions![s.key] ?? []);
  const containerd = spawnSync('containerd', ['--version'], { encoding: 'utf8' }).stdout.split(' ')[2] ?? 'unknown';
  return {
    generated: {
      at: new Date().toISOString(),
      machine: `${cpus().length} vCPUs, Linux ${release()}`,
      versions: {
        kubernetes: KUBERNETES_VERSION,
        istio: ISTIO_VERSION,
        envoy: PROXY_ENVOY_VERSION,
        haproxy: runs[0]?.versions.haproxy ?? 'HAProxy',
        containerd,
      },
    },
    runs,
    variants: VARIANT_SESSIONS.flatMap((s) => p.sessions![s.key] ?? []),
    kubeletModel: p.kubeletModel,
    probeLoad: p.probeLoad,
    longDrain: p.longDrain,
    finalScrape: p.finalScrape,
    argocd: p.argocd,
  };
}

async function main(): Promise<void> {
  if (process.argv.includes('--render')) {
    renderDocs(JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as ClusterResults);
  } else {
    const res = await measure(process.argv.includes('--fresh'));
    // The start-half sessions are measured by start-half-main.ts, not here: keep the committed ones.
    res.startHalf ??= readClusterResults()?.startHalf;
    writeClusterResults(res);
    rmSync(PARTIAL, { force: true });
    say(`wrote ${RESULTS_FILE}`);
  }
  say('rendered docs/cluster.md and the README');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`cluster report: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
