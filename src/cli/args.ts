import { parseArgs, type ParseArgsConfig } from 'node:util';
import { FAIL_ON_VALUES, type FailOn } from '../model/finding';
import { DurationError, parseDurationSeconds } from '../core/duration';
import { GracegateError } from '../core/errors';
import { didYouMean } from '../schema/did-you-mean';

/**
 * A mistake in how a command was called: printed with the one usage line that concerns it (the
 * option's line of the help, else the synopsis), never the whole help; exit status 2.
 */
export class UsageError extends GracegateError {}

/**
 * The one exit-code table of every gracegate command, printed at the end of each `--help`
 * (test/cli/exit-codes.test.ts holds every command to it).
 */
export const EXIT = { done: 0, refused: 1, badInput: 2 } as const;

export const EXIT_TABLE = `exit status (the same for every gracegate command):
  0  done: printed, written, measured, drained
  1  findings at or above --fail-on, or refused: the command ran and its answer is no
  2  bad input or unreachable: a wrong flag or file, or a sidecar, server or URL that did not answer
`;

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;
export type ParsedArgs = { values: Record<string, string | boolean | undefined>; positionals: string[] };

/**
 * An unknown option as the user typed it (`-format` where parseArgs saw `-f`), and the option they
 * most likely meant (`--format`; `--out` for `-o`).
 */
function unknownOption(unknown: string, args: readonly string[], options: OptionSpecs): { typed: string; near: string | undefined } {
  const names = Object.keys(options);
  // `-format` is read by parseArgs as the short options -f -o -r ...: the user typed the whole argument.
  const whole = unknown.length === 2 ? args.find((a) => a.startsWith(unknown) && !a.startsWith('--') && a.length > 2) : undefined;
  const typed = (whole ?? unknown).replace(/=.*$/, '');
  const word = typed.replace(/^-+/, '');
  const near = didYouMean(word, names);
  if (near) return { typed, near: `--${near}` };
  // A single letter: the one long option it starts, if only one does (`-o` for --out).
  const starting = word.length === 1 ? names.filter((n) => n.startsWith(word) && n !== 'help') : [];
  return { typed, near: starting.length === 1 ? `--${starting[0]}` : undefined };
}

/** node:util's parseArgs errors, in gracegate's words: what was wrong, and what was probably meant. */
function argsProblem(err: NodeJS.ErrnoException, args: readonly string[], options: OptionSpecs): string {
  const quoted = /'([^']+)'/.exec(err.message)?.[1] ?? '';
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const { typed, near } = unknownOption(quoted, args, options);
      return `unknown option '${typed}'${near ? `; did you mean '${near}'?` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const flag = /--[\w-]+/.exec(err.message)?.[0] ?? quoted;
      if (/does not take/.test(err.message)) return `${flag} takes no value`;
      if (/ambiguous/.test(err.message)) {
        const next = args[args.indexOf(flag) + 1] ?? '';
        return `${flag} needs a value, and '${next}' looks like an option (if it is the value, write ${flag}=${next})`;
      }
      return `${flag} needs a value`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument '${quoted}': this command takes options only`;
    default:
      return err.message;
  }
}

/** node:util parseArgs in strict mode, with its errors turned into UsageError in gracegate's words. */
function parseCommandArgs(args: string[], options: OptionSpecs, allowPositionals = true): ParsedArgs {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals }) as ParsedArgs;
  } catch (err) {
    throw new UsageError(argsProblem(err as NodeJS.ErrnoException, args, options));
  }
}

/** The synopsis of a command's usage: its `usage:` lines, up to the first blank line. */
export function synopsis(usage: string): string {
  return `${usage.split('\n\n')[0]!.trimEnd()}\n`;
}

/**
 * The usage line that concerns a message: the help's line (and its continuation lines) of the last
 * option the message names, where the help lists it; else the synopsis.
 */
export function usageLineFor(usage: string, message: string): string {
  const flags = message.match(/--[a-z][\w-]*/g) ?? [];
  const lines = usage.split('\n');
  for (const flag of flags.reverse()) {
    const at = lines.findIndex((l) => new RegExp(`^\\s+${flag}(?![\\w-])`).test(l));
    if (at < 0) continue;
    const indent = (l: string) => l.length - l.trimStart().length;
    let end = at + 1;
    while (end < lines.length && lines[end]!.trim() !== '' && indent(lines[end]!) > indent(lines[at]!) && !/^\s+-/.test(lines[end]!)) end++;
    return `${lines.slice(at, end).join('\n')}\n`;
  }
  return synopsis(usage);
}

/** The command a usage text is for, from its first line (`usage: gracegate plan ...`). */
function commandOf(usage: string): string {
  return /^usage: gracegate ([\w-]+)/.exec(usage)?.[1] ?? '';
}

/**
 * Runs a command body; a UsageError is printed with the usage line that concerns it (exit status
 * 2). Every other GracegateError goes up to the CLI's one renderer (runNamedCommand).
 */
async function runCommand(usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const name = commandOf(usage);
    process.stderr.write(`gracegate ${name}: ${err.message}\n${usageLineFor(usage, err.message)}Run 'gracegate help ${name}' for every option.\n`);
    return EXIT.badInput;
  }
}

/** The `--help` flag every command takes. */
const HELP_OPTION: OptionSpecs = { help: { type: 'boolean', short: 'h' } };

/** A command's whole help: its usage, then the exit-code table every command shares. */
export function helpText(usage: string): string {
  return `${usage.trimEnd()}\n\n${EXIT_TABLE}`;
}

/**
 * The frame every command shares: parse strictly (adding `--help`), answer `--help` with the
 * usage and the exit-code table, run the body, and print a UsageError with its usage line (exit status 2).
 */
export function runParsedCommand(
  usage: string,
  args: string[],
  options: OptionSpecs,
  allowPositionals: boolean,
  body: (parsed: ParsedArgs) => Promise<number>,
): Promise<number> {
  return runCommand(usage, async () => {
    const parsed = parseCommandArgs(args, { ...options, ...HELP_OPTION }, allowPositionals);
    if (parsed.values.help) {
      process.stdout.write(helpText(usage));
      return EXIT.done;
    }
    return body(parsed);
  });
}

/** A flag that must be a whole number (ports, status codes). */
export function integerFlag(name: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got '${value}'`);
  return Number(value);
}

/** A number flag within its limits (a run must stay bounded): the value, or a UsageError naming the flag. */
export function boundedFlag(name: string, value: number, min: number, max: number): number {
  if (value < min || value > max) throw new UsageError(`--${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A duration flag, in seconds: a plain number is seconds, or a number with ms, s, m or h. */
export function durationFlag(name: string, value: string): number {
  try {
    return parseDurationSeconds(/^\d+(\.\d+)?$/.test(value) ? Number(value) : value);
  } catch (err) {
    if (err instanceof DurationError) throw new UsageError(`--${name}: ${err.message}`);
    throw err;
  }
}

/** `--fail-on`, shared by the commands that stop on plan findings. */
export function failOnFlag(value: string): FailOn {
  if (!(FAIL_ON_VALUES as readonly string[]).includes(value)) throw new UsageError(`--fail-on must be error, warning, info or none, got '${value}'`);
  return value as FailOn;
}

/** A command's module: src/cli/<name>-command.ts. */
export type CommandModule = { run(args: string[]): Promise<number> };

/** Exit status of a usage error or a bad input. */
export const EXIT_USAGE = EXIT.badInput;

/**
 * Runs one command, printing a bad input's problems: the one place they are printed, each on its
 * line, located where it is known. main.ts calls it for every command; `gracegate hc`'s own bundle
 * (scripts/bundle.js) calls it without main's command table, so that the bundle holds the sidecar only.
 */
export async function runNamedCommand(name: string, load: () => CommandModule, args: string[]): Promise<number> {
  try {
    return await load().run(args);
  } catch (err) {
    if (!(err instanceof GracegateError)) throw err;
    process.stderr.write(`${err.lines(`gracegate ${name}`).join('\n')}\n`);
    return EXIT_USAGE;
  }
}
