/**
 * A Service's ClusterIP as kube-proxy makes it, played by a real HAProxy (Debian's package) in TCP
 * mode: each new connection goes to one ready endpoint at random (kube-proxy's iptables rules pick
 * at random), established connections stay where they are when an endpoint leaves (conntrack), a
 * connection to an endpoint that no longer listens fails (no retry, no other endpoint: `retries 0`,
 * no redispatch), and there is no health check (kube-proxy follows the EndpointSlice, never the
 * pod). Endpoint changes take effect after a propagation delay, in the order they happened, as one
 * kube-proxy applies its syncs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHaproxyProcess, statsSocketCommand } from '../harness/haproxy';
import { freePort, Proc } from '../harness/proc';

/** Endpoint slots declared up front (HAProxy 2.6 sets a declared server's address at run time); never reused within a run. */
const SLOTS = 12;
const BACKEND = 'pods';

/** One EndpointSlice change: when it happened, when the rules had it, and how late that was against the drawn delay (load). */
export type EndpointChange = { pod: string; change: 'add' | 'remove'; requestedAtMs: number; appliedAtMs: number; delayMs: number; lateMs: number };

export class KubeProxy {
  readonly changes: EndpointChange[] = [];
  private readonly slotOf = new Map<string, number>();
  private nextSlot = 0;
  private lastApplyAt = 0;
  private readonly pending = new Set<Promise<void>>();

  private constructor(
    private readonly proc: Proc,
    readonly port: number,
    private readonly socketPath: string,
  ) {}

  static async start(dir: string): Promise<KubeProxy> {
    const port = await freePort();
    const socketPath = join(dir, 'haproxy.sock');
    const config = [
      '# test/proof/e2e-workload/kube-proxy.ts: a Service ClusterIP as kube-proxy makes it (L4, random endpoint, no retry, no health check)',
      'global',
      `    stats socket ${socketPath} level admin`,
      '    nbthread 1',
      'defaults',
      '    mode tcp',
      '    timeout connect 1s',
      // Longer than any request of the experiment (40 s) and its 60 s client timeout.
      '    timeout client 300s',
      '    timeout server 300s',
      '    retries 0',
      'frontend service',
      `    bind 127.0.0.1:${port}`,
      `    default_backend ${BACKEND}`,
      `backend ${BACKEND}`,
      '    balance random',
      ...Array.from({ length: SLOTS }, (_, i) => `    server s${i} 127.0.0.1:9 disabled`),
      '',
    ].join('\n');
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, config);
    return new KubeProxy(await startHaproxyProcess('kube-proxy', file, socketPath), port, socketPath);
  }

  /** One stats-socket command; the socket answers and closes. */
  command(cmd: string, timeoutMs = 2000): Promise<string> {
    return statsSocketCommand(this.socketPath, cmd, timeoutMs);
  }

  private async apply(pod: string, change: 'add' | 'remove', port?: number): Promise<void> {
    if (change === 'add') {
      const slot = this.nextSlot++;
      if (slot >= SLOTS) throw new Error(`kube-proxy: more than ${SLOTS} endpoints in one run`);
      this.slotOf.set(pod, slot);
      // One connection, two commands: the runtime API takes a ';'-separated list.
      await this.command(`set server ${BACKEND}/s${slot} addr 127.0.0.1 port ${port}; set server ${BACKEND}/s${slot} state ready`);
    } else {
      const slot = this.slotOf.get(pod);
      if (slot === undefined) throw new Error(`kube-proxy: ${pod} was never an endpoint`);
      await this.command(`set server ${BACKEND}/s${slot} state maint`);
    }
  }

  /** An endpoint in the rules now (the pods ready before the experiment starts). */
  async addNow(pod: string, port: number): Promise<void> {
    const at = Date.now();
    await this.apply(pod, 'add', port);
    this.changes.push({ pod, change: 'add', requestedAtMs: at, appliedAtMs: Date.now(), delayMs: 0, lateMs: Date.now() - at });
  }

  /**
   * An EndpointSlice change that reaches the rules `delayMs` later, and never before an earlier
   * change (kube-proxy applies its syncs in order). Resolves when the rules have it.
   */
  change(pod: string, change: 'add' | 'remove', delayMs: number, port?: number): Promise<void> {
    const requestedAtMs = Date.now();
    const at = Math.max(this.lastApplyAt, requestedAtMs + delayMs);
    this.lastApplyAt = at;
    const done = new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        this.apply(pod, change, port).then(() => {
          this.changes.push({ pod, change, requestedAtMs, appliedAtMs: Date.now(), delayMs, lateMs: Date.now() - at });
          resolve();
        }, reject);
      }, at - requestedAtMs);
    });
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done)).catch(() => undefined);
    return done;
  }

  /** Every scheduled change applied. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  async stop(): Promise<void> {
    await this.proc.stop(2000);
  }
}
