import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from '../harness/containers';
import { deletePod, type HookOutcome } from '../harness/kubelet';

// The harness's pod deletion holds to the kubelet's order (harness/kubelet.ts): a container gets
// SIGTERM when its OWN preStop returns, not when every hook has; a hook still running at the grace
// period is abandoned; SIGKILL comes at the grace period, but never sooner than the minimum stop
// grace after SIGTERM. Asserted as orderings of recorded instants, not as durations.

class FakeContainer implements Container {
  sigtermAt: number | null = null;
  sigkillAt: number | null = null;
  exitedAtMs: number | null = null;
  private exit!: () => void;
  readonly exited = new Promise<void>((resolve) => {
    this.exit = () => {
      this.exitedAtMs ??= Date.now();
      resolve();
    };
  });
  constructor(
    readonly name: string,
    private readonly exitsOnSigterm: boolean,
  ) {}
  sigterm(): void {
    this.sigtermAt ??= Date.now();
    if (this.exitsOnSigterm) setImmediate(this.exit);
  }
  sigkill(): void {
    this.sigkillAt ??= Date.now();
    this.exit();
  }
}

const hookFor =
  (ms: number | 'forever') =>
  (abort: AbortSignal): Promise<HookOutcome> =>
    new Promise((resolve) => {
      if (ms !== 'forever') setTimeout(() => resolve({ ok: true, text: `done after ${ms} ms` }), ms);
      abort.addEventListener('abort', () => resolve({ ok: false, text: 'abandoned' }), { once: true });
    });

test('each container gets SIGTERM when its own preStop returns; a container without one at once', async () => {
  const fast = new FakeContainer('fast', true);
  const slow = new FakeContainer('slow', true);
  const bare = new FakeContainer('bare', true);
  const d = await deletePod([{ container: fast, preStop: hookFor(50) }, { container: slow, preStop: hookFor(400) }, { container: bare }], 10_000, 200);
  const [f, s, b] = d.containers;
  assert.ok(f!.sigtermMs >= f!.preStop!.endMs && f!.sigtermMs < s!.preStop!.endMs, 'fast: SIGTERM after its own hook, before the slow hook returned');
  assert.ok(s!.sigtermMs >= s!.preStop!.endMs);
  assert.ok(b!.sigtermMs < f!.preStop!.endMs, 'no hook: SIGTERM at once');
  assert.deepEqual(
    d.containers.map((c) => c.sigkillMs),
    [null, null, null],
    'all exited on SIGTERM',
  );
  assert.deepEqual(
    d.containers.map((c) => c.preStop?.abandoned ?? null),
    [false, false, null],
  );
});

test('a hook still running at the grace period is abandoned; SIGKILL at the grace period, never sooner than the minimum after SIGTERM', async () => {
  const stuck = new FakeContainer('stuck', false);
  const stubborn = new FakeContainer('stubborn', false);
  const d = await deletePod(
    [
      { container: stuck, preStop: hookFor('forever') },
      { container: stubborn, preStop: hookFor(20) },
    ],
    300,
    200,
  );
  const [a, b] = d.containers;
  assert.equal(a!.preStop!.abandoned, true);
  assert.ok(a!.preStop!.endMs >= d.startMs + 300, 'abandoned at the grace period, not before');
  assert.ok(a!.sigkillMs! >= a!.sigtermMs + 200, 'the stuck one: SIGKILL no sooner than 200 ms after its SIGTERM at the grace period');
  assert.ok(b!.sigkillMs! >= d.startMs + 300, 'the stubborn one: SIGKILL at the grace period');
  assert.ok(b!.sigkillMs! < a!.sigkillMs!, 'and before the one whose hook ran out the grace period');
});

test('native sidecars (KEP-753): the preStop starts with the others, SIGTERM only after the main containers exited, in reverse order', async () => {
  const main = new FakeContainer('istio-proxy', false);
  const first = new FakeContainer('first-sidecar', true);
  const second = new FakeContainer('second-sidecar', true);
  let sidecarHookStartedAt = 0;
  const sidecarHook = (abort: AbortSignal): Promise<HookOutcome> => {
    sidecarHookStartedAt = Date.now();
    return hookFor(50)(abort);
  };
  const deleted = deletePod(
    [
      { container: main, preStop: hookFor(100) },
      { container: first, preStop: sidecarHook, nativeSidecar: true },
      { container: second, nativeSidecar: true },
    ],
    10_000,
    200,
  );
  // The main container exits 300 ms after its SIGTERM (pilot-agent's drain, say).
  await new Promise((r) => setTimeout(r, 400));
  main.sigkill();
  const d = await deleted;
  const [m, a, b] = d.containers;
  assert.ok(
    sidecarHookStartedAt >= d.startMs && sidecarHookStartedAt < m!.preStop!.endMs,
    "the native sidecar's preStop started with the main one's, before that 100 ms hook returned",
  );
  assert.ok(a!.preStop!.endMs < m!.exitMs, 'its hook returned long before the main container exited');
  assert.ok(a!.sigtermMs >= m!.exitMs && b!.sigtermMs >= m!.exitMs, 'no native sidecar gets SIGTERM before the main container exited');
  assert.ok(b!.sigtermMs <= a!.sigtermMs && a!.sigtermMs >= b!.exitMs, 'reverse order: the one declared last stops first');
  assert.ok(a!.waitedForTurnMs! > 200, `the first waited for its turn (${a!.waitedForTurnMs} ms)`);
});

test('a native sidecar waits for its turn at most until the grace period', async () => {
  const stuck = new FakeContainer('stuck-main', false);
  const sidecar = new FakeContainer('sidecar', true);
  const d = await deletePod(
    [
      { container: stuck, preStop: hookFor('forever') },
      { container: sidecar, nativeSidecar: true },
    ],
    300,
    200,
  );
  const s = d.containers[1]!;
  assert.ok(s.sigtermMs >= d.startMs + 300 && s.sigtermMs < d.containers[0]!.exitMs + 50, 'SIGTERM at the grace period, the main one still stopping');
});
