/** The hc unit tests' stand-ins: a clock whose time moves when the test says, an Envoy whose answers it sets, a config, a logger. */
import { hcConfigSchema, type HcConfig, type HcConfigInput } from '../../src/contract/hc-config';
import type { Clock, EnvoyPort, EnvoyProfile, EnvoyServerState, LogLevel } from '../../src/hc/types';

/** Lets pending promise callbacks run (not a sleep: no time passes on the fake clock). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** A clock whose time moves only when the test says so. */
export class FakeClock implements Clock {
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  constructor(public current = Date.UTC(2026, 0, 1)) {}
  now = () => this.current;
  setTimer = (ms: number, fn: () => void) => {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  };
  /** Moves time forward, firing due timers in order and letting their promises settle. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await flush();
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = due.at;
      due.fn();
      await flush();
    }
    this.current = target;
    await flush();
  }
}

/** An Envoy whose answers the test sets; records every call. */
export class FakeEnvoy implements EnvoyPort {
  ready: EnvoyServerState | Error = 'LIVE';
  count: number | Error = 0;
  drainError: Error | undefined;
  readonly calls: string[] = [];
  async serverState(): Promise<EnvoyServerState> {
    this.calls.push('ready');
    if (this.ready instanceof Error) throw this.ready;
    return this.ready;
  }
  async inFlight(): Promise<number> {
    this.calls.push('stats');
    if (this.count instanceof Error) throw this.count;
    return this.count;
  }
  /** What drainSent() answers (a start without a trusted state file asks it). */
  drained: boolean | Error = false;
  async drainSent(): Promise<boolean> {
    if (this.drained instanceof Error) throw this.drained;
    return this.drained;
  }
  /** What configServed() answers: null, Envoy serves its configuration; a text, what it still waits for. */
  served: string | null | Error = null;
  async configServed(): Promise<string | null> {
    this.calls.push('config');
    if (this.served instanceof Error) throw this.served;
    return this.served;
  }
  async drainListeners(): Promise<void> {
    this.calls.push('drain');
    if (this.drainError) throw this.drainError;
  }
  profile(): EnvoyProfile {
    return {
      versionString: null,
      version: null,
      versionUnknown: { reason: 'not-read-yet', detail: 'fake', failures: 0 },
      drainCalls: ['/drain_listeners', '/drain_listeners?graceful'],
      drainCallsBasis: 'fallback',
      drainCallsWhy: 'fake',
      statsPath: '/stats',
      drainStrategy: null,
      counting: null,
      lastCount: null,
    };
  }
}

export function testConfig(input: HcConfigInput = {}): HcConfig {
  return hcConfigSchema.parse({ stateFile: '/nonexistent/unused.json', ...input });
}

export interface LogLine {
  level: LogLevel;
  msg: string;
  fields?: Readonly<Record<string, unknown>> | undefined;
}

export function collectingLogger(): { lines: LogLine[]; log: (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void } {
  const lines: LogLine[] = [];
  return { lines, log: (level, msg, fields) => lines.push({ level, msg, fields }) };
}
