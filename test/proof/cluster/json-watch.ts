/**
 * `kubectl get <kind> -w -o json` in the outside namespace: every version of every object as the
 * API server reports it, each with the time it arrived. A watch reports each change once, in
 * order; arrival is within a few ms of the API server's write on this machine.
 */
import { spawn } from 'node:child_process';
import { clusterEnv } from './kubectl';
import { OUTSIDE } from './layout';
import { inNetns } from './sh';

export class JsonWatch<T> {
  private readonly child;
  private buffer = '';

  /** `args`: what follows `kubectl` (namespace, `get`, the kind, a selector); `take` gets each object and its arrival. */
  constructor(args: readonly string[], take: (doc: T, atMs: number) => void) {
    const [cmd, ...rest] = inNetns(OUTSIDE.netns, 'kubectl', [...args, '-w', '--output-watch-events=false', '-o', 'json']);
    this.child = spawn(cmd!, rest, { env: clusterEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const atMs = Date.now();
      this.buffer += chunk;
      for (;;) {
        const end = documentEnd(this.buffer);
        if (end < 0) return;
        const text = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end);
        try {
          take(JSON.parse(text) as T, atMs);
        } catch {
          // a partial document cannot happen (documentEnd balanced it); anything else is not an object
        }
      }
    });
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

/** kubectl prints one pretty JSON document per change: the end offset of the first complete top-level object in `text`, or -1. */
function documentEnd(text: string): number {
  let depth = 0;
  let inString = false;
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      depth++;
      started = true;
    } else if (c === '}') {
      depth--;
      if (started && depth === 0) return i + 1;
    }
  }
  return -1;
}
