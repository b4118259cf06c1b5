/** One JSON object per line on stdout: what kubectl logs and every log shipper expect. */
import type { Logger } from './types';

export function jsonLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  return (level, msg, fields) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
}
