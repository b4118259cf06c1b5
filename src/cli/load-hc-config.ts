import { readHcConfig, type HcConfigOverrides } from '../hc/config-file';
import type { HcConfig } from '../contract/hc-config';

/**
 * Reads the sidecar config for `hc` and `drain`; a bad file throws HcConfigError, a GracegateError
 * that main.ts prints naming each field (exit 2).
 */
export function loadHcConfig(file: string | boolean | undefined, overrides: HcConfigOverrides = {}): HcConfig {
  return readHcConfig(typeof file === 'string' ? file : undefined, overrides);
}
