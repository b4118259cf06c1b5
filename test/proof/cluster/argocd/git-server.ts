/**
 * The git repository Argo CD syncs from, served from inside the cluster's network: a bare
 * repository on this machine, `git daemon` (Debian's git) in the outside namespace on its address
 * (the pods reach it through their node, as they reach the LB), and a working clone the test
 * commits to and pushes from, as a user would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { OUTSIDE } from '../layout';
import { netnsPrefix, run, runIn, waitUntil } from '../sh';

/** git's own port; the outside namespace is the cluster's, so nothing else holds it there. */
const GIT_DAEMON_PORT = 9418;
const REPO_NAME = 'gateways.git';
const BRANCH = 'main';

/** A file's new text, a directory to copy in (`{ copy: dir }`), or null to delete it. */
export type Change = string | { copy: string } | null;

/** One repository: its URL as the pods reach it, and the working clone the test commits in. */
export type GitRepo = {
  url: string;
  branch: string;
  /** The working clone (what `gracegate argocd generate` runs in, for the comparison). */
  work: string;
  /** Writes the changes into the clone, commits and pushes; the new commit's sha. */
  commit(changes: Record<string, Change>, message: string): string;
  head(): string;
};

/** The first repository (`gateways.git`), and more served beside it. */
export type GitServer = GitRepo & {
  addRepo(name: string): GitRepo;
  stop(): Promise<void>;
};

const git = (cwd: string, args: string[]): string =>
  run('git', ['-C', cwd, '-c', 'user.name=gracegate test', '-c', 'user.email=test@gracegate.invalid', '-c', 'commit.gpgsign=false', ...args], {
    timeoutMs: 30_000,
  }).trim();

function makeRepo(served: string, name: string): GitRepo {
  const bare = join(served, name);
  const work = join(dirname(served), 'work', name);
  mkdirSync(bare, { recursive: true });
  run('git', ['init', '--quiet', '--bare', `--initial-branch=${BRANCH}`, bare]);
  run('git', ['init', '--quiet', `--initial-branch=${BRANCH}`, work]);
  git(work, ['remote', 'add', 'origin', bare]);
  const repo: GitRepo = {
    url: `git://${OUTSIDE.ip}:${GIT_DAEMON_PORT}/${name}`,
    branch: BRANCH,
    work,
    commit(changes, message) {
      for (const [path, change] of Object.entries(changes)) {
        const full = join(work, path);
        rmSync(full, { recursive: true, force: true });
        if (change === null) continue;
        mkdirSync(dirname(full), { recursive: true });
        if (typeof change === 'string') writeFileSync(full, change);
        else cpSync(change.copy, full, { recursive: true });
      }
      git(work, ['add', '--all']);
      git(work, ['commit', '--quiet', '-m', message]);
      git(work, ['push', '--quiet', 'origin', BRANCH]);
      return repo.head();
    },
    head: () => git(work, ['rev-parse', 'HEAD']),
  };
  return repo;
}

export async function startGitServer(): Promise<GitServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gracegate-argocd-git-'));
  const served = join(dir, 'served');
  mkdirSync(served);
  const first = makeRepo(served, REPO_NAME);
  // Read-only (no receive-pack): the test pushes to the bare repositories through the file system.
  const argv = [
    ...netnsPrefix(OUTSIDE.netns),
    'git',
    'daemon',
    '--reuseaddr',
    '--export-all',
    '--informative-errors',
    `--listen=${OUTSIDE.ip}`,
    `--port=${GIT_DAEMON_PORT}`,
    `--base-path=${served}`,
    served,
  ];
  const daemon: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  daemon.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr = (stderr + c).slice(-4000);
  });
  const server: GitServer = {
    ...first,
    addRepo: (name) => makeRepo(served, name),
    async stop() {
      if (daemon.exitCode === null && daemon.signalCode === null) {
        const exited = new Promise((r) => daemon.once('exit', r));
        daemon.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // Served once the daemon answers from where the pods ask (the outside namespace's address).
  first.commit({ 'README.md': 'Gateways delivered by Argo CD with the gracegate plugin.\n' }, 'an empty repository of gateways');
  await waitUntil(
    `git daemon on ${first.url}`,
    30_000,
    () => {
      if (daemon.exitCode !== null) throw new Error(`git daemon exited ${daemon.exitCode}: ${stderr}`);
      return runIn(OUTSIDE.netns, 'git', ['ls-remote', first.url, BRANCH], { allowFailure: true, timeoutMs: 10_000 }).includes(`refs/heads/${BRANCH}`)
        ? true
        : undefined;
    },
    250,
  );
  return server;
}
