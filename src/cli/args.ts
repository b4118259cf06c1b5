import { parseArgs, type ParseArgsConfig } from 'node:util';
import { FAIL_ON_VALUES, type FailOn } from '../model/finding';
import { DurationError, parseDurationSeconds } from '../core/duration';
import { GracegateError } from '../core/errors';

/** A mistake in how a command was called: printed with the command's usage, exit status 2. */
export class UsageError extends GracegateError {}

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;
export type ParsedArgs = { values: Record<string, string | boolean | undefined>; positionals: string[] };

/** node:util parseArgs in strict mode, with its errors turned into UsageError. */
function parseCommandArgs(args: string[], options: OptionSpecs, allowPositionals = true): ParsedArgs {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals }) as ParsedArgs;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Runs a command body; a UsageError is printed with the command's usage (exit status 2). Every
 * other GracegateError goes up to the CLI's one renderer (runNamedCommand).
 */
async function runCommand(usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`gracegate: ${err.message}\n\n${usage}`);
    return 2;
  }
}

/** The `--help` flag every command takes. */
const HELP_OPTION: OptionSpecs = { help: { type: 'boolean', short: 'h' } };

/**
 * The frame every command shares: parse strictly (adding `--help`), answer `--help` with the
 * usage, run the body, and print a UsageError with the usage (exit status 2).
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
      process.stdout.write(usage);
      return 0;
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
export const EXIT_USAGE = 2;

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
