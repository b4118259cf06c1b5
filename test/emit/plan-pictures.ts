/**
 * The README's pictures of the three sequences ("Why the order matters"): docs/timeline/*.svg,
 * rendered from example specs by `node dist/test/emit/plan-pictures-main.js`; plan-svg.test.ts
 * fails when a committed picture differs from what the renderer makes of its example now.
 */
import { join } from 'node:path';
import { REPO_ROOT } from '../support/repo';

export const PLAN_PICTURES = [
  { file: 'docs/timeline/drain-first.svg', example: 'haproxy.yaml', sequence: 'drain-first' },
  { file: 'docs/timeline/health-first.svg', example: 'f5.yaml', sequence: 'health-first' },
  { file: 'docs/timeline/soft-drain.svg', example: 'haproxy-soft-drain.yaml', sequence: 'soft-drain' },
] as const;

export const picturePath = (file: string): string => join(REPO_ROOT, file);
