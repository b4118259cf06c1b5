/** Writes docs/sequences.json from the model and the README's and docs/facts.md's sequence tables from it. */
import { REPO_ROOT } from '../support/repo';
import { writeSequences } from './sequences';

writeSequences(REPO_ROOT);
process.stderr.write('wrote docs/sequences.json and the sequence tables of README.md and docs/facts.md\n');
