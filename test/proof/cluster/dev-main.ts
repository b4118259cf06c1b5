/** Development runner: one gateway, one action, the proof's problems printed. */
import { LB_SETTINGS } from '../harness/scenario';
import { describeRun, lossProblems, runSequenceProblems } from '../harness/expect';
import { installGateway, uninstallGateway } from './gateway';
import { startLb, stopLb, terminationUnderLoad, type ClusterAction } from './termination';

async function main(): Promise<void> {
  const [settingKey = 'flushRedispatch', action = 'delete'] = process.argv.slice(2);
  const setting = (LB_SETTINGS as Record<string, (typeof LB_SETTINGS)['noFlush']>)[settingKey]!;
  const g = await installGateway({
    namespace: `dev-${settingKey.toLowerCase()}`,
    name: 'igw',
    setting,
    replicas: 2,
    healthNodePort: 30181,
    chart: '1.27.9',
    ...(process.env.ETP ? { trafficPolicy: process.env.ETP as 'Local' } : {}),
  });
  const lb = await startLb(g);
  try {
    const r = await terminationUnderLoad(g, lb, action as ClusterAction);
    console.log(describeRun(r.run));
    console.log('loss problems', lossProblems(r.run));
    console.log('sequence problems', runSequenceProblems(r.run));
    console.log(
      JSON.stringify(
        r.leaving.map((l) => ({ pod: l.pod.name, containers: l.containers, events: l.events })),
        null,
        1,
      ),
    );
  } finally {
    await stopLb(lb);
    if (!process.env.KEEP) await uninstallGateway(g);
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
