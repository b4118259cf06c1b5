/** Reads the JSON config file `gracegate synth` writes, applies command-line overrides, validates. */
import { HC_CONFIG_MAX_BYTES, readBounded } from '../core/bounded-read';
import { GracegateError, inputMessage } from '../core/errors';
import { hcConfigSchema, type HcConfig } from '../contract/hc-config';

/**
 * A config the sidecar cannot run with: every problem, each naming its field, in the file it is in
 * (the CLI prints them and exits 2). The one error base of gracegate (src/core/errors.ts) imports
 * nothing, so the sidecar shares it without loading any planner code.
 */
export class HcConfigError extends GracegateError {}

/** Overrides are merged over the file's top level (softSignal field by field). */
export interface HcConfigOverrides {
  readonly [key: string]: unknown;
  readonly softSignal?: { readonly status: number };
}

export function readHcConfig(file: string | undefined, overrides: HcConfigOverrides = {}): HcConfig {
  let fromFile: Record<string, unknown> = {};
  if (file !== undefined) {
    let text: string;
    try {
      text = readBounded(file, HC_CONFIG_MAX_BYTES, 'the config');
    } catch (err) {
      throw new HcConfigError((err as Error).message, file);
    }
    try {
      fromFile = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new HcConfigError(`not valid JSON: ${(err as Error).message}`, file);
    }
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)) throw new HcConfigError('the config must be a JSON object', file);
  }
  const merged: Record<string, unknown> = { ...fromFile, ...overrides };
  if (overrides.softSignal !== undefined) merged['softSignal'] = { ...(fromFile['softSignal'] as object | undefined), ...overrides.softSignal };
  const result = hcConfigSchema.safeParse(merged, { error: inputMessage });
  if (!result.success) {
    throw new HcConfigError(
      result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
      file,
    );
  }
  return result.data;
}
