/** Prints one scenario's raw result as JSON: node dist/test/proof/longlived/probe-main.js <version> <drain|rotate> */
import { runScenario, type Scenario } from './probe';

runScenario(process.argv[2]!, process.argv[3] as Scenario)
  .then((r) => process.stdout.write(`${JSON.stringify(r, null, 1)}\n`))
  .catch((e: Error) => {
    console.error(e);
    process.exit(1);
  });
