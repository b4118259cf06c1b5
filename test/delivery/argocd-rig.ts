/**
 * `gracegate argocd generate` run the way argocd-cmp-server runs it: in the app directory of a
 * repo copy, with Argo CD's environment variables (ARGOCD_APP_SOURCE_PATH the app directory's path
 * in the copy), helm 3.17 and node on PATH (as in the sidecar image), a HOME of its own and every
 * proxy pointing at a closed port (no network).
 */
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/repo';
import { requireTool, run, tempDir, TOOLS, type RunResult } from './tools';

type Obj = Record<string, any>;

export const objects = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);

export type ArgoCdRig = {
  tmp: string;
  /** The bin directory on the command's PATH. */
  bin: string;
  /** A repo copy at tmp/<name> with `files` (path -> text) and `charts` (dest -> path in this repository); returns its root. */
  repo(name: string, files: Record<string, string>, charts?: Record<string, string>): string;
  /** Runs generate in `cwd` (inside a repo copy) with the rig's environment and `env`. */
  generate(cwd: string, env: NodeJS.ProcessEnv, options?: { timeoutMs?: number }): RunResult;
};

export function argoCdRig(prefix: string): ArgoCdRig {
  const tmp = tempDir(prefix);
  const bin = join(tmp, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(requireTool(TOOLS.helm3), join(bin, 'helm'));
  symlinkSync(process.execPath, join(bin, 'node'));
  return {
    tmp,
    bin,
    repo(name, files, charts = {}) {
      const root = join(tmp, name);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      for (const [dest, src] of Object.entries(charts)) cpSync(join(REPO_ROOT, src), join(root, dest), { recursive: true });
      return root;
    },
    generate(cwd, env, options = {}) {
      // The repo copy is the first directory under tmp; the app directory's path in it is the Application's path.
      const root = join(tmp, relative(tmp, cwd).split(sep)[0]!);
      const home = join(tmp, 'home');
      mkdirSync(home, { recursive: true });
      return run(process.execPath, [join(REPO_ROOT, 'bin/gracegate.js'), 'argocd', 'generate'], {
        cwd,
        // Argo CD kills generate after 90 s by default: the same bound here.
        timeoutMs: options.timeoutMs ?? 90_000,
        env: {
          PATH: bin,
          HOME: home,
          HTTP_PROXY: 'http://127.0.0.1:9',
          HTTPS_PROXY: 'http://127.0.0.1:9',
          NO_PROXY: '',
          ARGOCD_APP_NAME: 'igw-public-prod',
          ARGOCD_APP_NAMESPACE: 'istio-ingress',
          ARGOCD_APP_REVISION: '0123456789abcdef0123456789abcdef01234567',
          ARGOCD_APP_SOURCE_PATH: relative(root, cwd) || '.',
          KUBE_VERSION: '1.31.9',
          ...env,
        },
      });
    },
  };
}
