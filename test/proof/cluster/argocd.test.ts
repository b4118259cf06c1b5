/**
 * The GitOps plugin inside a real Argo CD v3.2.12 (issue 35): Argo CD Core's own install
 * (argocd/install.ts says what differs from its manifests and why), gracegate's CMP sidecar added
 * as the README says, a git repository served by `git daemon` from the outside namespace, and two
 * Applications: one found by discovery without parameters, one naming the plugin with parameters
 * (argocd/gateways.ts). For each, what Argo CD applied equals `gracegate argocd generate` run on
 * the same checkout, the live pods carry every field podChanges(plan) sets, and the Application is
 * Synced and Healthy. Then what users do: a commit that raises the spec's p99 (and so changes the
 * pod template) is synced by Argo CD, replacing every pod while 12 keep-alive clients send through
 * HAProxy (0 lost, every sequence to CLOSED, no SIGKILL); and a commit of an invalid spec reaches
 * the Application's conditions in gracegate's words while nothing is applied, and so does a commit of
 * a spec whose plan has an error finding (refused as `gracegate synth` refuses it). A hostile tenant's
 * Applications (a flag as the release name, a file outside the repository, a URL) get conditions
 * naming the refused parameter and deploy nothing; the plugin's sidecar runs without a token, on a
 * read-only root, in a pod Pod Security `restricted` admits. Last, the
 * ApplicationSet of plugins/argocd/applicationset/ over a repository holding its example-repo/
 * (three gateways, two namespaces): the real ApplicationSet controller makes three Applications,
 * each rendered through the plugin as generate renders it, synced, Synced and Healthy, each
 * gateway's pods carrying its own plan (argocd/fleet.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { PodChanges } from '../../../src/pod/pod-changes';
import { planGateway } from '../../../src/plan/plan-gateway';
import { resolveGatewaySpec } from '../../../src/schema/parse-spec';
import type { Param } from '../../delivery/argocd-env';
import { HC_CONTAINER_NAME } from '../../../src/pod/names';
import { describeRun, lossProblems, runSequenceProblems } from '../harness/expect';
import { freePort } from '../../support/ports';
import { REPO_ROOT } from '../../support/repo';
import {
  APPSET_DIR,
  APPSET_NAME,
  createFleetNamespaces,
  EXAMPLE_URL,
  usesHostPort,
  fleetApps,
  removeFleet,
  syncApplication,
  waitFleetSyncedHealthy,
} from './argocd/fleet';
import {
  appliedManifest,
  applicationManifest,
  appStatus,
  asApplied,
  describeApp,
  localGenerate,
  objects,
  refresh,
  TRACKING_ANNOTATION,
  waitSyncedHealthy,
  type AppSource,
  type AppStatus,
} from './argocd/apps';
import { DISCOVERED, GATEWAYS, NAMED, PLUGIN_NAME, specOf, specText, type ArgoGateway } from './argocd/gateways';
import { ARGOCD_NAMESPACE, ARGOCD_VERSION } from './argocd/install';
import { changesOf, gitopsRollout, RAISED_P99_SECONDS, selectorOf, setUpArgoCd, tearDownArgoCd, type ArgoCdSession } from './argocd/session';
import { expectedPod, leafCount, neighbourDifferences, podDifferences, type LivePodObject } from './delivery/live-fields';
import { deleteNamespacesNow, kubectl, kubectlApply, kubectlJson, waitNamespacesGone } from './kubectl';
import { STATIC_NODE_PORTS } from './layout';
import { restrictedCheck, restrictedNamespace } from './pod-security';
import { requireCluster } from './require-cluster';
import { recordRun } from './results-file';
import { waitUntil } from './sh';

let s: ArgoCdSession | undefined;

before(async () => {
  requireCluster();
  s = await setUpArgoCd();
});

after(async () => {
  await tearDownArgoCd(s);
});

const session = (): ArgoCdSession => {
  if (!s) throw new Error('Argo CD was not set up (see the before hook)');
  return s;
};

type PodList = { items: Array<LivePodObject & { metadata: { uid: string; deletionTimestamp?: string } }> };

/** Where a gateway Argo CD delivered runs: its test key, namespace and name (its Deployment's and Service's). */
type Target = { key: string; namespace: string; gateway: string };
const targetOf = (g: ArgoGateway): Target => ({ key: g.key, namespace: g.namespace, gateway: g.options.name });

/** The gateway's pods, by name and uid (a pod replaced has another uid). */
const podIds = (g: ArgoGateway, changes: PodChanges): string[] =>
  kubectlJson<PodList>(['-n', g.namespace, 'get', 'pods', '-l', selectorOf(changes)])
    .items.map((p) => `${p.metadata.name} ${p.metadata.uid}`)
    .sort();

/** The live gateway pods (none leaving) against the plan's pod changes, and the objects around them. */
function assertLiveCarries(g: Target, changes: PodChanges): string {
  const pods = kubectlJson<PodList>(['-n', g.namespace, 'get', 'pods', '-l', selectorOf(changes)]).items.filter((p) => !p.metadata.deletionTimestamp);
  assert.equal(pods.length, changes.replicas, `${g.namespace}: ${pods.length} gateway pods, planned ${changes.replicas}`);
  for (const pod of pods) {
    const diffs = podDifferences(changes, pod);
    assert.deepEqual(
      diffs,
      [],
      `${g.key}: the live pod ${pod.metadata.name} differs from podChanges(plan) in ${diffs.length} field(s):\n${diffs.map((x) => `  ${x.path}: planned ${JSON.stringify(x.expected)}, live ${JSON.stringify(x.live)}`).join('\n')}`,
    );
  }
  const around = neighbourDifferences(changes, { namespace: g.namespace, deployment: g.gateway, gatewayService: g.gateway });
  assert.deepEqual(
    around.differences,
    [],
    `${g.key}: the live objects differ from podChanges(plan):\n${around.differences.map((x) => `  ${x.path}: planned ${JSON.stringify(x.expected)}, live ${JSON.stringify(x.live)}`).join('\n')}`,
  );
  return `${leafCount(expectedPod(changes))} pod fields x ${pods.length} pods and ${around.compared} fields of the objects around them equal the plan's`;
}

const key = (o: Record<string, any>): string => `${o.kind}/${o.metadata?.name ?? o.name}`;

/** What Argo CD applied for the Application at `revision` against `gracegate argocd generate` on the same checkout. */
function assertAppliedIsGenerated(
  g: AppSource & { key: string },
  status: AppStatus,
  revision: string,
  repo: { work: string; url: string } = session().git,
): string {
  const { kubeVersion } = session();
  const local = localGenerate(repo.work, g, revision, repo.url, kubeVersion);
  assert.equal(local.status, 0, `${g.key}: gracegate argocd generate on the checkout: ${local.stderr}`);
  const generated = objects(local.stdout);
  assert.deepEqual(
    (status.resources ?? []).map(key).sort(),
    generated.map(key).sort(),
    `${g.key}: the Application's resources are the objects generate prints`,
  );
  assert.ok(
    // Among the containers, or the init containers where the plan makes it a native sidecar.
    generated.some(
      (o) =>
        o.kind === 'Deployment' &&
        [...o.spec.template.spec.containers, ...(o.spec.template.spec.initContainers ?? [])].some((c: { name: string }) => c.name === HC_CONTAINER_NAME),
    ),
    `${g.key}: the generated Deployment has the hc container`,
  );
  for (const o of generated)
    assert.deepEqual(appliedManifest(o, g.namespace), asApplied(o, g.namespace), `${g.key}: what Argo CD applied as ${key(o)} is what generate printed`);
  return `${generated.length} objects (${generated.map(key).join(', ')}) applied by Argo CD as generate printed them`;
}

for (const g of GATEWAYS) {
  test(`Argo CD ${ARGOCD_VERSION}, plugin ${g.title}: what the repo server generated through the CMP sidecar is what gracegate argocd generate prints on the same checkout; the live pods carry the pod changes; Synced and Healthy`, {
    timeout: 420_000,
  }, async (t) => {
    const { seeded, commands } = session();
    const status = await waitSyncedHealthy(g.name, seeded, 360_000);
    t.diagnostic(`${g.key}: ${commands.join('; ')}`);
    t.diagnostic(`${g.key}: ${assertAppliedIsGenerated(g, status, seeded)}`);
    t.diagnostic(`${g.key}: ${assertLiveCarries(targetOf(g), changesOf(session(), g, specOf(g)))}`);
  });
}

/** The commit of the rollout, once made, and the invalid one after it. */
let synced = '';
let bad = '';

test(`GitOps rollout (${DISCOVERED.title}): a commit raising the p99 from 2 s to ${RAISED_P99_SECONDS} s, synced by Argo CD, replaces every gateway pod under 12 keep-alive clients through HAProxy: 0 lost, every sequence to CLOSED, no SIGKILL; Synced and Healthy again`, {
  timeout: 600_000,
}, async (t) => {
  const g = DISCOVERED;
  const oldChanges = changesOf(session(), g, specOf(g));
  const r = await gitopsRollout(session(), g, session().seeded, await freePort());
  const newChanges = changesOf(session(), g, r.after);
  assert.notEqual(newChanges.terminationGracePeriodSeconds, oldChanges.terminationGracePeriodSeconds, 'the p99 changed the pod template');
  synced = r.revision;
  recordRun(r.summary);
  const problems = [...lossProblems(r.run.run), ...runSequenceProblems(r.run.run)];
  assert.deepEqual(problems, [], `${g.key}:\n${describeRun(r.run.run)}`);
  assert.equal(r.run.run.result.failureTotal, 0, `requests lost:\n${describeRun(r.run.run)}`);
  assert.equal(r.run.leaving.length, g.options.replicas, 'the sync replaced every pod');
  for (const left of r.run.leaving) {
    assert.equal(left.state?.state, 'CLOSED', `${left.pod.name}: the sequence ended CLOSED (${JSON.stringify(left.state?.history)})`);
    for (const c of left.containers) assert.equal(c.sigkillMs, null, `${left.pod.name}: ${c.name} was not SIGKILLed`);
  }
  t.diagnostic(
    `rollout by Argo CD: ${r.run.run.result.requests} requests, ${r.run.run.result.failureTotal} lost; ${r.run.run.plan.sequence}; ${r.run.leaving.length} pods to CLOSED; settled ${r.run.settledMs} ms after the commit`,
  );
  const status = await waitSyncedHealthy(g.name, synced);
  t.diagnostic(`after the sync: ${describeApp(status)}`);
  t.diagnostic(`${g.key}: ${assertAppliedIsGenerated(g, status, synced)}`);
  t.diagnostic(`${g.key}: ${assertLiveCarries(targetOf(g), newChanges)}`);
});

/** A namespace enforcing Pod Security `restricted`, for a server-side dry run of the repo-server pod. */
const RESTRICTED_PROBE_NAMESPACE = 'ac-restricted-probe';

/** The gateway Deployment's generation: a change to its spec raises it. */
const generationOf = (g: ArgoGateway): number =>
  kubectlJson<{ metadata: { generation: number } }>(['-n', g.namespace, 'get', 'deployment', g.options.name]).metadata.generation;

/**
 * A commit the plugin refuses: the Application's condition carries every line of `words` (what
 * generate prints on the checkout), and once compared again it has synced nothing at `revision`:
 * the gateway Deployment keeps its generation and the same pods run.
 */
async function assertRefusedCommit(
  g: ArgoGateway,
  revision: string,
  words: string[],
  before: { generation: number; pods: string[]; changes: PodChanges },
): Promise<{ message: string; after: AppStatus }> {
  refresh(g.name);
  const condition = await waitUntil(
    `the Application ${g.name} compared at ${revision.slice(0, 8)} with gracegate's error`,
    180_000,
    () => {
      const st = appStatus(g.name);
      const c = (st.conditions ?? []).find((x) => x.type === 'ComparisonError' && words.every((w) => x.message.includes(w)));
      return c ? { status: st, message: c.message } : undefined;
    },
    1000,
  );
  // Compared again once the controller has written the error (a second refresh): still no sync at the refused commit.
  const reconciled = condition.status.reconciledAt;
  refresh(g.name);
  const again = await waitUntil(
    `the Application ${g.name} reconciled again`,
    120_000,
    () => {
      const st = appStatus(g.name);
      return st.reconciledAt !== reconciled ? st : undefined;
    },
    1000,
  );
  assert.equal(again.operationState?.syncResult?.revision, synced, `no sync at the refused commit: ${describeApp(again)}`);
  assert.notEqual(again.sync?.status, 'Synced', 'the Application is not Synced to a commit it cannot render');
  assert.equal(generationOf(g), before.generation, 'the gateway Deployment unchanged (same generation)');
  assert.deepEqual(podIds(g, before.changes), before.pods, 'the same gateway pods run');
  return { message: condition.message, after: again };
}

test(`an invalid spec committed (${DISCOVERED.title}): the plugin's error reaches the Application's conditions in gracegate's words (file, line, field); nothing is applied, the running gateway untouched`, {
  timeout: 300_000,
}, async (t) => {
  const g = DISCOVERED;
  const { git, kubeVersion } = session();
  assert.notEqual(synced, '', 'the rollout test committed first');
  const changes = changesOf(session(), g, specOf(g));
  const before = { generation: generationOf(g), pods: podIds(g, changes), changes };
  const invalid = specText(specOf(g, { traffic: { longRequestP99Seconds: -3 } }));
  bad = git.commit({ [g.specPath]: invalid }, `${g.options.name}: a p99 below zero`);
  const local = localGenerate(git.work, g, bad, git.url, kubeVersion);
  assert.equal(local.status, 2, `generate on the checkout refuses the spec (stdout: ${local.stdout.slice(0, 200)})`);
  const words = local.stderr
    .trim()
    .split('\n')
    .filter((l) => /^gracegate\.yaml:\d+: spec\./.test(l));
  const line = invalid.split('\n').findIndex((l) => /longRequestP99Seconds: -3/.test(l)) + 1;
  assert.ok(
    words.some((w) => w.startsWith(`gracegate.yaml:${line}: spec.traffic.longRequestP99Seconds:`)),
    `generate names the field and its line (${line}): ${local.stderr}`,
  );
  const condition = await assertRefusedCommit(g, bad, words, before);
  t.diagnostic(`the Application's condition: ${condition.message.slice(0, 600)}`);
  t.diagnostic(`after: ${describeApp(condition.after)}`);
});

test(`the invalid spec is one gateway's: the other Application (${NAMED.title}) is Synced and Healthy at that commit, its pods untouched`, {
  timeout: 180_000,
}, async (t) => {
  assert.notEqual(bad, '', 'the invalid commit was made');
  const changes = changesOf(session(), NAMED, specOf(NAMED));
  const pods = podIds(NAMED, changes);
  refresh(NAMED.name);
  const st = await waitUntil(
    `Application ${NAMED.name} compared at ${bad.slice(0, 8)}`,
    120_000,
    () => {
      const x = appStatus(NAMED.name);
      return x.sync?.revision === bad ? x : undefined;
    },
    1000,
  );
  assert.equal(st.sync?.status, 'Synced', describeApp(st));
  assert.equal(st.health?.status, 'Healthy', describeApp(st));
  assert.deepEqual(podIds(NAMED, changes), pods, 'the same pods run');
  t.diagnostic(`${NAMED.key}: ${describeApp(st)}`);
});

test(`a spec with an error finding committed (${DISCOVERED.title}): the plugin refuses it as synth does, the finding reaches the Application's conditions, nothing is applied (issue 48, item 5)`, {
  timeout: 300_000,
}, async (t) => {
  const g = DISCOVERED;
  const { git, kubeVersion } = session();
  assert.notEqual(bad, '', 'after the invalid commit (the tests before compare at it)');
  const changes = changesOf(session(), g, specOf(g));
  const before = { generation: generationOf(g), pods: podIds(g, changes), changes };
  // As many replicas as nodes, one pod per node, no pod unavailable: the surge pod never schedules (kubernetes#116891).
  const deadlock = specOf(g, { replicas: 3, nodes: 3, rollout: { maxSurge: 1, maxUnavailable: 0, antiAffinity: 'required' } });
  const plan = planGateway(resolveGatewaySpec(deadlock, 'gracegate.yaml'));
  assert.ok(
    plan.findings.some((f) => f.severity === 'error' && f.id === 'rollout-surge-deadlock'),
    'the plan has the error finding',
  );
  const refused = git.commit({ [g.specPath]: specText(deadlock) }, `${g.options.name}: a rollout that deadlocks`);
  const local = localGenerate(git.work, g, refused, git.url, kubeVersion);
  assert.equal(local.status, 1, `generate on the checkout refuses the plan (stdout: ${local.stdout.slice(0, 200)})`);
  assert.equal(local.stdout, '');
  const words = local.stderr
    .trim()
    .split('\n')
    .filter((l) => /^gracegate\.yaml: error rollout-surge-deadlock \(spec\.rollout\): /.test(l));
  assert.equal(words.length, 1, local.stderr);
  const condition = await assertRefusedCommit(g, refused, words, before);
  t.diagnostic(`the Application's condition: ${condition.message.slice(0, 600)}`);
});

test('a hostile tenant (issue 46, 1-3): an Application whose parameters try a flag as the release name, a file outside the repository or a URL gets a condition naming the refused parameter, and nothing is deployed', {
  timeout: 300_000,
}, async (t) => {
  const { git } = session();
  const namespace = 'ac-hostile';
  const path = 'tenants/hostile';
  kubectl(['create', 'namespace', namespace]);
  const revision = git.commit(
    {
      [`${path}/gracegate.yaml`]: specText({ ...specOf(DISCOVERED), metadata: { name: 'igw', namespace } }),
      [`${path}/values.yaml`]: 'autoscaling:\n  enabled: false\n',
    },
    'a tenant with hostile parameters',
  );
  const chart = { name: 'chart', string: '../../charts/gateway' };
  const attempts: Array<{ key: string; parameters: Param[]; words: string }> = [
    {
      key: 'exec',
      parameters: [chart, { name: 'release-name', string: '--post-renderer=/bin/sh' }],
      words: `plugin parameter 'release-name' is "--post-renderer=/bin/sh", not a helm release name`,
    },
    {
      key: 'read',
      parameters: [chart, { name: 'release-name', string: '--set-file=x=/var/run/argocd/argocd-cmp-server' }],
      words: `plugin parameter 'release-name' is "--set-file=x=/var/run/argocd/argocd-cmp-server", not a helm release name`,
    },
    {
      key: 'path',
      parameters: [chart, { name: 'values-files', array: ['values.yaml', '../../../../../etc/passwd'] }],
      words: `plugin parameter 'values-files'[1] '../../../../../etc/passwd'`,
    },
    {
      key: 'url',
      parameters: [chart, { name: 'values-files', array: ['http://169.254.169.254/latest/meta-data'] }],
      words: `the URL scheme 'http' is not allowed`,
    },
  ];
  const apps = attempts.map((a) => ({ ...a, name: `hostile-${a.key}`, namespace, path, plugin: { name: PLUGIN_NAME, parameters: a.parameters } }));
  try {
    for (const a of apps) kubectlApply(JSON.stringify(applicationManifest(a, git.url, git.branch)));
    for (const a of apps) {
      const message = await waitUntil(
        `Application ${a.name} compared at ${revision.slice(0, 8)} with the refused parameter`,
        180_000,
        () => appStatus(a.name).conditions?.find((c) => c.type === 'ComparisonError' && c.message.includes(a.words))?.message,
        1000,
      );
      const st = appStatus(a.name);
      assert.deepEqual(st.resources ?? [], [], `${a.name}: no resources (${describeApp(st)})`);
      t.diagnostic(`${a.name}: ${message.slice(0, 400)}`);
    }
    // What Argo CD applies carries its tracking annotation; istiod's own ConfigMaps in every namespace do not.
    const applied = kubectlJson<{ items: Array<{ kind: string; metadata: { name: string; annotations?: Record<string, string> } }> }>([
      '-n',
      namespace,
      'get',
      'deployments,services,configmaps,poddisruptionbudgets,networkpolicies,serviceaccounts',
    ]).items.filter((o) => o.metadata.annotations?.[TRACKING_ANNOTATION] !== undefined);
    assert.deepEqual(
      applied.map((o) => `${o.kind}/${o.metadata.name}`),
      [],
      `nothing deployed by Argo CD in ${namespace}`,
    );
  } finally {
    for (const a of apps)
      kubectl(['-n', ARGOCD_NAMESPACE, 'delete', 'application', a.name, '--ignore-not-found', '--wait=true', '--timeout=60s'], {
        allowFailure: true,
        timeoutMs: 70_000,
      });
    deleteNamespacesNow([namespace]);
    await waitNamespacesGone('the hostile tenant namespace', [namespace], 120_000);
  }
});

test('the plugin sidecar holds nothing a tenant could take: no service-account token, a read-only root, and the repo-server pod admitted by Pod Security restricted', async (t) => {
  type Container = { name: string; securityContext?: Record<string, unknown>; volumeMounts?: Array<{ name: string; mountPath: string }> };
  type RepoPod = {
    metadata: { name: string };
    spec: { automountServiceAccountToken?: boolean; containers: Container[]; volumes?: Array<{ name: string; emptyDir?: unknown }> };
  };
  const pods = kubectlJson<{ items: RepoPod[] }>(['-n', ARGOCD_NAMESPACE, 'get', 'pods', '-l', 'app.kubernetes.io/name=argocd-repo-server']).items;
  assert.equal(pods.length, 1, 'one repo-server pod');
  const pod = pods[0]!;
  const sidecar = pod.spec.containers.find((c) => c.name === 'gracegate-cmp');
  assert.ok(sidecar, 'the gracegate-cmp container runs');
  assert.equal(pod.spec.automountServiceAccountToken, false);
  const token = sidecar.volumeMounts?.find((m) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount');
  assert.ok(token && pod.spec.volumes?.find((v) => v.name === token.name)?.emptyDir !== undefined, 'an empty directory where a token would be');
  // What a tenant's template or a hijacked helm would see, asked of node in the sidecar itself.
  const inSidecar = (code: string): string =>
    kubectl(['-n', ARGOCD_NAMESPACE, 'exec', pod.metadata.name, '-c', 'gracegate-cmp', '--', 'node', '-e', code]).trim();
  assert.equal(
    inSidecar("console.log(require('fs').readdirSync('/var/run/secrets/kubernetes.io/serviceaccount').length)"),
    '0',
    'no token file in the sidecar',
  );
  assert.equal(sidecar.securityContext?.readOnlyRootFilesystem, true);
  const write = inSidecar("try { require('fs').writeFileSync('/x', 'x'); console.log('written') } catch (e) { console.log(e.code) }");
  assert.equal(write, 'EROFS', 'the root filesystem is read-only');
  await restrictedNamespace(RESTRICTED_PROBE_NAMESPACE);
  try {
    const check = restrictedCheck(pod as unknown as Parameters<typeof restrictedCheck>[0], RESTRICTED_PROBE_NAMESPACE);
    assert.equal(check.refusal, '', `Pod Security restricted refuses the repo-server pod: ${check.refusal}`);
  } finally {
    deleteNamespacesNow([RESTRICTED_PROBE_NAMESPACE]);
    await waitNamespacesGone('the Pod Security probe namespace', [RESTRICTED_PROBE_NAMESPACE], 120_000);
  }
  t.diagnostic(`${pod.metadata.name}: gracegate-cmp without a token, read-only root; the pod admitted under restricted`);
});

test(`ApplicationSet (plugins/argocd/applicationset/applicationset.yaml, its repoURL replaced as its comment says) over a repository holding its example-repo/ (in namespaces of the test's own): the ApplicationSet controller makes three Applications, the repo server renders each through the plugin into what gracegate argocd generate prints, and once synced each is Synced and Healthy, each gateway's pods carrying its own plan; deleting the ApplicationSet leaves every gateway running (preserveResourcesOnDeletion)`, {
  timeout: 600_000,
}, async (t) => {
  const { git, kubeVersion } = session();
  const started = Date.now();
  const phases: string[] = [];
  const phase = (what: string) => phases.push(`${what} +${((Date.now() - started) / 1000).toFixed(1)} s`);
  const appset = readFileSync(join(APPSET_DIR, 'applicationset.yaml'), 'utf8');
  assert.equal(appset.split(EXAMPLE_URL).length - 1, 2, 'the ApplicationSet names the example repoURL twice');
  // The template's plugin parameters, as Argo CD reads them: one `chart`.
  const chart = /name: chart\n\s+string: (\S+)/.exec(appset)?.[1];
  assert.ok(chart, 'the template names the chart parameter');
  const apps = fleetApps(PLUGIN_NAME, chart);
  assert.equal(apps.length, 3, 'the example repo has three gateways');
  // Ports a spec names itself belong in the static band; these two are reserved for it in layout.ts.
  assert.deepEqual(
    apps.flatMap((a) => (a.nodePort !== undefined ? [a.nodePort] : [])).sort(),
    [STATIC_NODE_PORTS.applicationSet, STATIC_NODE_PORTS.applicationSet + 1],
    "the example specs' health NodePorts are the ones layout.ts keeps for them",
  );
  const fleet = git.addRepo('fleet.git');
  const revision = fleet.commit(
    {
      ...Object.fromEntries(apps.map((a) => [`${a.path}/gracegate.yaml`, a.specText])),
      'charts/gateway-additional-containers': { copy: join(REPO_ROOT, 'charts/gateway-additional-containers') },
    },
    'three gateways',
  );
  createFleetNamespaces(apps);
  kubectlApply(appset.replaceAll(EXAMPLE_URL, fleet.url));
  try {
    const statuses = await waitUntil(
      `the ApplicationSet's ${apps.length} Applications compared at ${revision.slice(0, 8)}`,
      240_000,
      () => {
        const found = kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { destination: { namespace: string } }; status?: AppStatus }> }>([
          '-n',
          ARGOCD_NAMESPACE,
          'get',
          'applications',
          '-l',
          'app.kubernetes.io/managed-by=gracegate',
        ]).items;
        const done = found.filter((a) => a.status?.sync?.revision === revision && (a.status.resources?.length ?? 0) > 0);
        return done.length === apps.length || found.some((a) => a.status?.conditions?.some((c) => c.type === 'ComparisonError')) ? found : undefined;
      },
      1000,
    );
    phase('compared');
    assert.deepEqual(
      statuses.map((a) => `${a.metadata.name} -> ${a.spec.destination.namespace}`).sort(),
      apps.map((a) => `${a.name} -> ${a.namespace}`).sort(),
      'one Application a gateway directory, named <namespace>-<gateway>, deploying to its namespace',
    );
    for (const a of apps) {
      const st = statuses.find((x) => x.metadata.name === a.name)!.status!;
      assert.deepEqual(st.conditions ?? [], [], `${a.name}: no error rendering it (${describeApp(st)})`);
      const local = localGenerate(fleet.work, a, revision, fleet.url, kubeVersion);
      assert.equal(local.status, 0, `${a.name}: generate on the checkout: ${local.stderr}`);
      assert.deepEqual(
        (st.resources ?? []).map(key).sort(),
        objects(local.stdout).map(key).sort(),
        `${a.name}: the Application's resources are the objects generate prints`,
      );
    }
    // The template has no automated sync: a user syncs each Application (argocd app sync).
    for (const a of apps) syncApplication(a.name, revision);
    phase('sync asked');
    const synced = await waitFleetSyncedHealthy(apps, revision, 300_000);
    phase('Synced and Healthy');
    for (const a of apps) {
      const target = { key: a.name, namespace: a.namespace, gateway: a.gateway };
      t.diagnostic(`${a.name}: ${assertAppliedIsGenerated({ ...a, key: a.name }, synced.get(a.name)!, revision, fleet)}`);
      t.diagnostic(`${a.name}: ${assertLiveCarries(target, a.changes)}; ${describeApp(synced.get(a.name)!)}`);
    }
    // Each its own plan: the three specs differ in LB and p99, so their pods' grace periods do.
    const graces = apps.map((a) => a.changes.terminationGracePeriodSeconds);
    assert.equal(new Set(graces).size, apps.length, `three plans, three grace periods (${graces.join(', ')} s)`);
    // The hostPort finding's Pod Security sentence, asked of the API server: the NetScaler gateway's
    // live pod, created in a namespace enforcing baseline (a server-side dry run), is refused for
    // its host port, and only the hc container is named.
    const hostPorted = apps.find(usesHostPort);
    const baselineNs = apps.find((a) => !usesHostPort(a))?.namespace;
    assert.ok(hostPorted && baselineNs, 'the example has a hostPort gateway and a namespace enforcing baseline');
    assert.ok(
      hostPorted.findings.some((f) => f.id === 'hostport-one-pod-per-node' && /Pod Security's baseline/.test(f.message)),
      `${hostPorted.name}: the plan says baseline refuses a host port`,
    );
    const pod = kubectlJson<PodList>(['-n', hostPorted.namespace, 'get', 'pods', '-l', selectorOf(hostPorted.changes)]).items[0]!;
    const refused = restrictedCheck(pod, baselineNs);
    assert.match(refused.refusal, /violates PodSecurity "baseline:latest":.*\bhostPort\b/, `${hostPorted.name}'s pod in ${baselineNs}`);
    assert.deepEqual(refused.containers, [HC_CONTAINER_NAME], `the refusal names the hc container only: ${refused.refusal}`);
    t.diagnostic(`${hostPorted.name}'s pod in ${baselineNs} (baseline): ${refused.refusal.replace(/^[\s\S]*?(violates)/, '$1').slice(0, 300)}`);
    // The template's syncPolicy.preserveResourcesOnDeletion: no Application carries Argo CD's
    // resources finalizer, and deleting the ApplicationSet takes its Applications and leaves every
    // gateway's pods as they were (Argo CD's default would delete every gateway with it).
    const livePods = (a: (typeof apps)[number]) =>
      kubectlJson<PodList>(['-n', a.namespace, 'get', 'pods', '-l', selectorOf(a.changes)])
        .items.filter((p) => !p.metadata.deletionTimestamp)
        .map((p) => `${p.metadata.name} ${p.metadata.uid}`)
        .sort();
    const podsBefore = apps.map(livePods);
    for (const a of apps) {
      const { finalizers = [] } = kubectlJson<{ metadata: { finalizers?: string[] } }>(['-n', ARGOCD_NAMESPACE, 'get', 'application', a.name]).metadata;
      assert.deepEqual(finalizers, [], `${a.name}: no resources finalizer on an Application the ApplicationSet made`);
    }
    kubectl(['-n', ARGOCD_NAMESPACE, 'delete', 'applicationset', APPSET_NAME, '--wait=true', '--timeout=60s'], { timeoutMs: 70_000 });
    await waitUntil(
      "the ApplicationSet's Applications gone with it",
      60_000,
      () =>
        kubectl(['-n', ARGOCD_NAMESPACE, 'get', 'applications', '-l', 'app.kubernetes.io/managed-by=gracegate', '-o', 'name']).trim() === '' ? true : undefined,
      500,
    );
    assert.deepEqual(apps.map(livePods), podsBefore, 'every gateway pod still running, none replaced, after the ApplicationSet was deleted');
    phase('ApplicationSet deleted, gateways kept');
    t.diagnostic(`ApplicationSet deleted: its ${apps.length} Applications gone, ${podsBefore.flat().length} gateway pods untouched`);
  } finally {
    await removeFleet(apps);
    phase('removed');
    t.diagnostic(`times: ${phases.join(', ')}`);
  }
});
