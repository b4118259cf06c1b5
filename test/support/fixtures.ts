/**
 * The one place every test and bench finds the fixtures the project does not own: the
 * `istio/gateway` Helm charts and the golden outputs of istiod's Gateway API deployment controller.
 * Nothing else reads `../shared`. Each is looked for, in order:
 *
 * 1. the shared fixtures beside the clone, `../shared/fixtures` (GRACEGATE_SHARED_FIXTURES names
 *    another directory of the same layout);
 * 2. the machine's cache (`scripts/cache-dir.sh`), where `scripts/prepare-test-env.sh` puts a copy:
 *    `fixtures/istio-gateway-chart/X/` and `fixtures/istio-gateway-api/X/`, copied from the shared
 *    fixtures of a clone that has them, else the charts from `helm pull istio/gateway --version X`;
 * 3. for version `1.31` only: Istio's release-1.31 source from the Go module proxy, the
 *    pseudo-version `scripts/cluster/go/istio/go.mod` pins (the cluster build's), which the test
 *    preparation downloads into the cache's module cache: `manifests/charts/gateway` and
 *    `pilot/pkg/config/kube/gatewaycommon/testdata/deployment`.
 *
 * Anything else is a FixtureMissingError that says where it looked and how to get the fixture.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './repo';

/** The istio/gateway chart versions the tests render (test/support/istio-chart-versions.json, which the test preparation reads too). */
export const CHART_VERSIONS: readonly string[] = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'support', 'istio-chart-versions.json'), 'utf8')) as { versions: string[] }
).versions;
/** The version the Istio source from the Go module proxy is offered as (its branch, release-1.31). */
export const SOURCE_VERSION = '1.31';
/** Where Istio serves its charts (`helm pull istio/gateway --repo …`). */
export const ISTIO_CHART_REPO = 'https://istio-release.storage.googleapis.com/charts';

export class FixtureMissingError extends Error {
  override name = 'FixtureMissingError';
}

/** The shared fixtures directory (it may not exist: a clone has no ../shared). */
export function sharedFixtures(): string {
  return process.env.GRACEGATE_SHARED_FIXTURES ?? resolve(REPO_ROOT, '..', 'shared', 'fixtures');
}

let cache: string | undefined;
/** The machine's cache folder, as scripts/cache-dir.sh says (the one rule for it). */
export function cacheDir(): string {
  cache ??= execFileSync('bash', [join(REPO_ROOT, 'scripts', 'cache-dir.sh')], { encoding: 'utf8' }).trim();
  return cache;
}

/** `istio.io/istio`'s pseudo-version the cluster build pins: release-1.31. */
export function istioSourceModuleVersion(): string {
  const goMod = readFileSync(join(REPO_ROOT, 'scripts', 'cluster', 'go', 'istio', 'go.mod'), 'utf8');
  const m = /^\s*istio\.io\/istio (v\S+)/m.exec(goMod);
  if (!m) throw new Error('scripts/cluster/go/istio/go.mod requires no istio.io/istio');
  return m[1]!;
}

/** Istio's source tree in the cache's Go module cache (scripts/go-env.sh: GOMODCACHE). */
export function istioSourceDir(): string {
  return join(cacheDir(), 'go', 'mod', `istio.io/istio@${istioSourceModuleVersion()}`);
}

function firstExisting(what: string, candidates: string[], howToGet: string): string {
  const found = candidates.find((c) => existsSync(c));
  if (found) return found;
  throw new FixtureMissingError(`${what} not found; looked in:\n${candidates.map((c) => `  ${c}`).join('\n')}\n${howToGet}`);
}

/** The istio/gateway chart of `version` (1.26.8, 1.27.9, 1.30.3, or 1.31 from Istio's source). */
export function gatewayChart(version: string): string {
  const candidates = [join(sharedFixtures(), 'istio-gateway-chart', version), join(cacheDir(), 'fixtures', 'istio-gateway-chart', version)];
  if (version === SOURCE_VERSION) candidates.push(join(istioSourceDir(), 'manifests', 'charts', 'gateway'));
  return firstExisting(
    `the istio/gateway chart ${version}`,
    candidates,
    version === SOURCE_VERSION
      ? "get it with: bash scripts/prepare-test-env.sh (go mod download of Istio's release-1.31 source from the Go module proxy)"
      : `get it with: bash scripts/prepare-test-env.sh (helm pull istio/gateway --version ${version} --repo ${ISTIO_CHART_REPO}), or put the chart in one of those directories`,
  );
}

/** The golden outputs of istiod's Gateway API deployment controller at `version` (1.27.9, or 1.31 from Istio's source). */
export function gatewayApiGoldens(version: string): string {
  const candidates = [join(sharedFixtures(), 'istio-gateway-api', version), join(cacheDir(), 'fixtures', 'istio-gateway-api', version)];
  if (version === SOURCE_VERSION) candidates.push(join(istioSourceDir(), 'pilot', 'pkg', 'config', 'kube', 'gatewaycommon', 'testdata', 'deployment'));
  return firstExisting(
    `istiod's Gateway API golden outputs ${version}`,
    candidates,
    "get them with: bash scripts/prepare-test-env.sh (Istio's release-1.31 source from the Go module proxy has them as 1.31), or copy istio/istio's pilot/pkg/config/kube/gateway/testdata/deployment at that tag there",
  );
}

/**
 * The Istio version whose Gateway API goldens and gateway chart are both at hand: 1.27.9 (the
 * shared fixtures, the Istio release the examples name) when present, else 1.31 (Istio's source).
 */
export function gatewayApiVersion(): string {
  const misses: string[] = [];
  for (const version of ['1.27.9', SOURCE_VERSION]) {
    try {
      gatewayApiGoldens(version);
      gatewayChart(version);
      return version;
    } catch (err) {
      if (!(err instanceof FixtureMissingError)) throw err;
      misses.push(err.message);
    }
  }
  throw new FixtureMissingError(misses.join('\n'));
}
