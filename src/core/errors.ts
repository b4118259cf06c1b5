/**
 * One problem with something a user gave gracegate: where it is (the field path, the line) and
 * what is wrong, in words that say what to change.
 */
export type Problem = {
  /** Dot path of the field (`spec.loadBalancer.inter`); '' for the document as a whole. */
  path?: string;
  line?: number;
  message: string;
};

/**
 * The one base of every error that is about the user's input rather than a bug: every problem
 * found, at once, and the file or stream they are in. The CLI prints `lines()` and exits 2 in one
 * place (src/cli/main.ts); a library caller reads `problems`.
 */
export class GracegateError extends Error {
  readonly problems: readonly Problem[];
  private where: string | undefined;

  constructor(problems: string | readonly Problem[], source?: string) {
    const list = typeof problems === 'string' ? [{ message: problems }] : problems;
    super(list.map((p) => formatProblem(p, source)).join('\n'));
    this.name = new.target.name;
    this.problems = list;
    this.where = source;
  }

  /** The file, stream or object the problems are in, if known. */
  get source(): string | undefined {
    return this.where;
  }

  /**
   * Places the problems in `source` (the spec they were derived from, the object they concern)
   * unless they already say where they are. Returns the error, for `throw err.locate(file)`.
   */
  locate(source: string): this {
    if (this.where === undefined) {
      this.where = source;
      this.message = this.lines().join('\n');
    }
    return this;
  }

  /** One line per problem, located; `fallback` names the problems' origin when nothing else does. */
  lines(fallback?: string): string[] {
    return this.problems.map((p) => formatProblem(p, this.where ?? fallback));
  }
}

/** `file:line: field: message`, leaving out what is not known. */
export function formatProblem(p: Problem, source?: string): string {
  const where = source !== undefined && p.line !== undefined ? `${source}:${p.line}` : source;
  const field = p.path === undefined ? undefined : p.path || '(document)';
  return [where, field, p.message].filter((part) => part !== undefined).join(': ');
}
