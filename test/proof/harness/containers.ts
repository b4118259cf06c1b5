/**
 * The two containers of a gateway pod, as the kubelet sees them: something that takes SIGTERM and
 * SIGKILL and exits. `hc` is the sidecar process itself. `istio-proxy` is pilot-agent with Envoy
 * as its child; the harness plays pilot-agent's part (istio/istio pkg/envoy/agent.go `terminate`
 * with EXIT_ON_ZERO_ACTIVE_CONNECTIONS off, Istio's default): on SIGTERM it asks Envoy to drain
 * (`POST /drain_listeners?graceful`), waits terminationDrainDuration, then aborts Envoy (SIGKILL:
 * "Aborting proxy"). SIGKILL of the container kills Envoy at once.
 */
import { httpCall } from './http';
import type { Proc } from './proc';
import type { PodProxy } from './proxies';

export interface Container {
  readonly name: string;
  sigterm(): void;
  sigkill(): void;
  readonly exited: Promise<unknown>;
  /** When the container's last process exited (epoch ms), null while it runs. */
  readonly exitedAtMs: number | null;
}

/** A container whose main process is the one given (the hc sidecar). */
export class ProcessContainer implements Container {
  constructor(
    readonly name: string,
    readonly proc: Proc,
  ) {}
  sigterm(): void {
    this.proc.signal('SIGTERM');
  }
  sigkill(): void {
    this.proc.signal('SIGKILL');
  }
  get exited(): Promise<unknown> {
    return this.proc.exited;
  }
  get exitedAtMs(): number | null {
    return this.proc.exitedAtMs;
  }
}

/**
 * pilot-agent's drain call on SIGTERM (istio/istio pkg/envoy/proxy.go `Drain` and
 * `DrainListeners(adminPort, e.Sidecar, skipExit)`): `inboundonly` only for sidecars, so a
 * gateway drains every listener.
 */
export const PILOT_AGENT_DRAIN = '/drain_listeners?graceful';

export class IstioProxyContainer implements Container {
  readonly name = 'istio-proxy';
  /** What pilot-agent's drain call got back, for the report. */
  drainAnswer: string | null = null;
  abortedAtMs: number | null = null;
  private terminating = false;

  constructor(
    readonly envoy: PodProxy,
    private readonly adminUrl: string,
    private readonly terminationDrainMs: number,
  ) {}

  sigterm(): void {
    if (this.terminating || this.envoy.exitedAtMs !== null) return;
    this.terminating = true;
    void httpCall('POST', `${this.adminUrl}${PILOT_AGENT_DRAIN}`, 1000).then(
      (r) => {
        this.drainAnswer = `HTTP ${r.status}`;
      },
      (e: Error) => {
        this.drainAnswer = e.message;
      },
    );
    setTimeout(() => {
      if (this.envoy.exitedAtMs !== null) return;
      this.abortedAtMs = Date.now();
      this.envoy.signal('SIGKILL');
    }, this.terminationDrainMs);
  }

  sigkill(): void {
    this.envoy.signal('SIGKILL');
  }

  get exited(): Promise<unknown> {
    return this.envoy.exited;
  }

  get exitedAtMs(): number | null {
    return this.envoy.exitedAtMs;
  }
}
