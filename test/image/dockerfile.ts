/**
 * A Dockerfile read into its stages, enough to compare one with a built image: line
 * continuations joined, comments dropped, `FROM image AS name` per stage, and the ENV / LABEL
 * forms `k=v k2="v 2"` as maps.
 */

export type Instruction = { keyword: string; args: string };
export type DockerStage = {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
  /** The one instruction of that keyword (throws when there are none or several). */
  single(keyword: string): string;
  /** Every instruction of that keyword, space-separated words flattened. */
  all(keyword: string): string[];
  /** `k=v` pairs of every instruction of that keyword (ENV, LABEL), quotes removed. */
  keyValues(keyword: string): Record<string, string>;
};

function instructions(text: string): Instruction[] {
  const lines: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw)) continue; // comments, also between continued lines
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') lines.push(current.trim());
    current = '';
  }
  return lines.map((line) => {
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile: unparsed line '${line}'`);
    return { keyword: m[1]!.toUpperCase(), args: m[2]!.replace(/\s+/g, ' ').trim() };
  });
}

function pairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    out[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
  }
  return out;
}

export function dockerStages(text: string): DockerStage[] {
  const stages: DockerStage[] = [];
  for (const ins of instructions(text)) {
    if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`Dockerfile: unparsed FROM '${ins.args}'`);
      const list: Instruction[] = [];
      const of = (k: string) => list.filter((i) => i.keyword === k).map((i) => i.args);
      stages.push({
        from: m[1]!,
        name: m[2],
        instructions: list,
        single(keyword) {
          const found = of(keyword);
          if (found.length !== 1) throw new Error(`Dockerfile stage ${m[2]}: ${found.length} ${keyword} instructions, expected one`);
          return found[0]!;
        },
        all: (keyword) => of(keyword).flatMap((a) => a.split(' ')),
        keyValues: (keyword) => Object.assign({}, ...of(keyword).map(pairs)) as Record<string, string>,
      });
    } else {
      if (stages.length === 0) throw new Error(`Dockerfile: ${ins.keyword} before the first FROM`);
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return stages;
}
