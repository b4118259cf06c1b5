import { HcConfigError, readHcConfig, type HcConfigOverrides } from '../hc/config-file';
import type { HcConfig } from '../hc/config';
import { InputError } from './args';

/** Reads the sidecar config for `hc` and `drain`; a bad file becomes an InputError (exit 2) naming each field. */
export function loadHcConfig(file: string | boolean | undefined, overrides: HcConfigOverrides = {}): HcConfig {
  try {
    return readHcConfig(typeof file === 'string' ? file : undefined, overrides);
  } catch (err) {
    if (err instanceof HcConfigError) throw new InputError(err.message, err.problems);
    throw err;
  }
}
