/**
 * `node rule-watch-main.js NAMESPACE`, run inside one node's network namespace (start-witnesses.ts
 * starts it): `nft monitor rules` reports each committed change of the node's rules as it lands; on
 * the first line of each change (a transaction is committed before its lines are reported, so one
 * save reads it whole) `iptables-save` reads the nat and filter tables, and one JSON line a save goes
 * to stdout: when the change was reported, when the save ended, the endpoint rules and the dropped
 * NodePorts of NAMESPACE's Services. A process of its own, so that a busy test process cannot delay
 * the saves (inside it they came up to 700 ms after the change).
 */
import { spawn, spawnSync } from 'node:child_process';
import { parseDroppedPorts, parseEndpointRules } from './start-witnesses';

const namespace = process.argv[2] ?? '';
let pendingSince: number | null = null;
let saving = false;

/** One sample line: the change reported at `atMs`, read from `text` (iptables-save's) now. */
function emit(atMs: number, text: string): void {
  process.stdout.write(
    `${JSON.stringify({ atMs, savedAtMs: Date.now(), endpoints: parseEndpointRules(text, namespace), dropped: parseDroppedPorts(text, namespace) })}\n`,
  );
}

function save(): void {
  if (pendingSince === null) return;
  const atMs = pendingSince;
  pendingSince = null;
  saving = true;
  const child = spawn('iptables-save', [], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    text += c;
  });
  child.on('close', () => {
    emit(atMs, text);
    saving = false;
    if (pendingSince !== null) save();
  });
}

function changed(atMs: number): void {
  pendingSince ??= atMs;
  if (!saving) save();
}

const monitor = spawn('nft', ['monitor', 'rules'], { stdio: ['ignore', 'pipe', 'ignore'] });
monitor.stdout.setEncoding('utf8').on('data', (chunk: string) => {
  // kube-proxy's nat and filter tables (kube-router rewrites the filter table too: one more sample).
  if (/ ip (nat|filter) /.test(chunk)) changed(Date.now());
});
changed(Date.now());
process.on('SIGTERM', () => {
  monitor.kill('SIGTERM');
  // A change reported last is read before the exit.
  if (pendingSince !== null && !saving) {
    emit(pendingSince, spawnSync('iptables-save', [], { encoding: 'utf8' }).stdout);
  }
  const wait = setInterval(() => {
    if (!saving) {
      clearInterval(wait);
      process.exit(0);
    }
  }, 5);
});
