import { join, resolve } from 'node:path';

/** The repository root (scripts/run-tests.js sets it; compiled tests live in dist/test/…). */
export const REPO_ROOT = process.env.GRACEGATE_REPO_ROOT ?? resolve(__dirname, '..', '..', '..');

/**
 * The real helm and kubectl binaries `scripts/prepare-test-env.sh` unpacks from the npm
 * registry's lambda-layer packages (FACTS.md §8). Never a machine-installed copy.
 */
export const TOOLS = {
  helm3: join(REPO_ROOT, '.cache/tools/v31/helm/helm'),
  helm4: join(REPO_ROOT, '.cache/tools/v33/helm/helm'),
  kubectl: join(REPO_ROOT, '.cache/tools/v33/kubectl/kubectl'),
} as const;
