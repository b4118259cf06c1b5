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
    const list = typeof problems === 'string' ? [{ message: problems }] : byLine(problems);
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

/**
 * Problems in the order of their lines, as a user reads the file (zod reports them in the schema's
 * order); those about the whole input, with no line, first. Stable: one line's problems keep theirs.
 */
function byLine(problems: readonly Problem[]): readonly Problem[] {
  return [...problems].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** `file:line: field: message`, leaving out what is not known. */
export function formatProblem(p: Problem, source?: string): string {
  const where = source !== undefined && p.line !== undefined ? `${source}:${p.line}` : source;
  const field = p.path === undefined ? undefined : p.path || '(document)';
  return [where, field, p.message].filter((part) => part !== undefined).join(': ');
}

/** What a zod issue is about, as the error map receives it (a type import: this file loads nothing). */
type RawIssue = import('zod').z.core.$ZodRawIssue;

/** zod's type names in gracegate's words. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping (key: value)',
  record: 'a mapping (key: value)',
  null: 'null',
  date: 'a date',
};

/** A zod type name (`int`, `string`) as the words a message uses ("a whole number", "a string"). */
function typeWords(expected: string): string {
  return TYPE_WORDS[expected] ?? expected;
}

/** The value a user gave, as a message quotes it. */
function given(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 57)}...` : value}'`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'a mapping';
  return String(value);
}

const oneOf = (values: readonly unknown[]) => (values.length === 1 ? given(values[0]) : `one of ${values.map(given).join(', ')}`);

const SIZES: Readonly<Record<string, string>> = { string: 'character', array: 'entry', set: 'entry', map: 'entry', file: 'byte' };

/**
 * gracegate's words for zod's default messages ("Invalid input: expected int, received number"
 * becomes "must be a whole number, got 2.5"): every safeParse of user input passes it as `error`.
 * A message a schema sets itself still wins (zod asks the schema's own first).
 */
export function inputMessage(issue: RawIssue): string {
  const got = given(issue.input);
  switch (issue.code) {
    case 'invalid_type': {
      // z.int() asks for a number in a whole-number format (safeint): say so.
      const whole =
        issue.expected === 'number' && /int/.test(String((issue.inst as { _zod?: { def?: { format?: unknown } } } | undefined)?._zod?.def?.format ?? ''));
      const expected = typeWords(whole ? 'int' : issue.expected);
      return issue.input === undefined ? `required (${expected})` : `must be ${expected}, got ${got}`;
    }
    case 'invalid_value':
      return `must be ${oneOf(issue.values)}, got ${got}`;
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const limit = small ? issue.minimum : issue.maximum;
      const bound = issue.exact ? 'exactly' : issue.inclusive ? (small ? 'at least' : 'at most') : small ? 'more than' : 'less than';
      const unit = SIZES[issue.origin ?? ''];
      if (unit === undefined) return `must be ${bound} ${String(limit)}, got ${got}`;
      if (small && unit === 'character' && Number(limit) === 1 && issue.inclusive) return 'must not be empty';
      const length = (issue.input as { length?: number } | undefined)?.length;
      const plural = Number(limit) === 1 ? unit : unit === 'entry' ? 'entries' : `${unit}s`;
      return `must have ${bound} ${String(limit)} ${plural}${length === undefined ? '' : `, got ${length}`}`;
    }
    case 'invalid_format':
      if (issue.format === 'regex' && 'pattern' in issue) return `must match ${String(issue.pattern)}, got ${got}`;
      if (issue.format === 'starts_with' && 'prefix' in issue) return `must start with '${String(issue.prefix)}', got ${got}`;
      return `must be a valid ${issue.format}, got ${got}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}, got ${got}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length === 1 ? '' : 's'}: ${issue.keys.join(', ')}`;
    case 'invalid_union': {
      const { options, discriminator } = issue as { options?: readonly unknown[]; discriminator?: string };
      if (options && options.length > 0) {
        // A discriminated union's issue carries the whole object: the value is at its key.
        const value =
          discriminator !== undefined && typeof issue.input === 'object' && issue.input !== null
            ? (issue.input as Record<string, unknown>)[discriminator]
            : issue.input;
        return value === undefined ? `required: ${oneOf(options)}` : `must be ${oneOf(options)}, got ${given(value)}`;
      }
      if ((issue as { inclusive?: boolean }).inclusive === false) return 'matches more than one of the forms allowed here';
      // Each alternative's complaint: the types they expected, or the first one that got past its type.
      const branches = issue.errors.map((errs) => errs.filter((e) => e.path.length === 0));
      const typeOnly = branches.every((errs) => errs.length > 0 && errs.every((e) => e.code === 'invalid_type'));
      if (typeOnly) {
        const types = [...new Set(branches.flat().map((e) => typeWords((e as { expected: string }).expected)))];
        return issue.input === undefined ? `required (${types.join(' or ')})` : `must be ${types.join(' or ')}, got ${got}`;
      }
      const reason = branches.flat().find((e) => e.code !== 'invalid_type') ?? issue.errors.flat()[0];
      return reason ? reason.message : `is not valid here, got ${got}`;
    }
    case 'invalid_key':
      return 'has a key that is not allowed here';
    case 'invalid_element':
      return 'has an entry that is not allowed here';
    default:
      return `is not valid here, got ${got}`;
  }
}
