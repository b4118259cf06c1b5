import { HcConfigError, readHcConfig, type HcConfigOverrides } from '../hc/config-file';
import type { HcConfig } from '../hc/config';
import { GracegateError } from '../errors';

/**
 * Reads the sidecar config for `hc` and `drain`; a bad file becomes a GracegateError (exit 2)
 * naming each field. The sidecar keeps its own error type: it loads nothing outside src/hc/.
 */
export function loadHcConfig(file: string | boolean | undefined, overrides: HcConfigOverrides = {}): HcConfig {
  try {
    return readHcConfig(typeof file === 'string' ? file : undefined, overrides);
  } catch (err) {
    if (err instanceof HcConfigError) throw new GracegateError(err.problems.map((message) => ({ message })));
    throw err;
  }
}
