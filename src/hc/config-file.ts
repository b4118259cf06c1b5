/** Reads the JSON config file `gracegate synth` writes, applies command-line overrides, validates. */
import { z } from 'zod';
import { HC_CONFIG_MAX_BYTES, readBounded } from '../bounded-read';
import { hcConfigSchema, type HcConfig } from './config';

export class HcConfigError extends Error {
  constructor(message: string, readonly problems: string[] = [message]) {
    super(message);
  }
}

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
      throw new HcConfigError(`${file}: ${(err as Error).message}`);
    }
    try {
      fromFile = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new HcConfigError(`${file}: not valid JSON: ${(err as Error).message}`);
    }
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)) throw new HcConfigError(`${file}: the config must be a JSON object`);
  }
  const merged: Record<string, unknown> = { ...fromFile, ...overrides };
  if (overrides.softSignal !== undefined) merged['softSignal'] = { ...(fromFile['softSignal'] as object | undefined), ...overrides.softSignal };
  const result = hcConfigSchema.safeParse(merged);
  if (!result.success) {
    const where = file ?? 'the hc configuration';
    throw new HcConfigError(`${where}: invalid configuration`, [`${where}: invalid configuration`, z.prettifyError(result.error)]);
  }
  return result.data;
}
