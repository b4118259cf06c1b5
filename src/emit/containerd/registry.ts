import type { GatewaySpec } from '../../schema/gateway-spec';
import { GracegateError } from '../../errors';

export type RegistrySpec = GatewaySpec['spec']['registry'][number];
export type MirrorSpec = RegistrySpec['mirrors'][number];

/** A registry prefix that is not a host[:port] (or `_default`) cannot name a certs.d directory. */
export class RegistryPrefixError extends GracegateError {}

const HOST_PORT = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/;

/** The certs.d directory name: the prefix itself, checked so it can never escape certs.d. */
export function certsDirName(registry: RegistrySpec, index: number): string {
  if (registry.prefix === '_default' || HOST_PORT.test(registry.prefix)) return registry.prefix;
  throw new RegistryPrefixError(`spec.registry[${index}].prefix: '${registry.prefix}' is not a host[:port] or _default (it names the directory certs.d/<prefix>/)`);
}

/** Where containerd looks for hosts.toml files (the config_path both snippets set). */
export const CERTS_D = '/etc/containerd/certs.d';
