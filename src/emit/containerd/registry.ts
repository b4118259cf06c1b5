import type { GatewaySpec } from '../../schema/gateway-spec';
import { GracegateError } from '../../core/errors';

export type RegistrySpec = GatewaySpec['spec']['registry'][number];
export type MirrorSpec = RegistrySpec['mirrors'][number];

/** A registry prefix that is not a host[:port] (or `_default`) cannot name a certs.d directory. */
export class RegistryPrefixError extends GracegateError {}

const HOST_PORT = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/;

/** The certs.d directory name: the prefix itself, checked so it can never escape certs.d. */
export function certsDirName(registry: RegistrySpec, index: number): string {
  if (registry.prefix === '_default' || HOST_PORT.test(registry.prefix)) return registry.prefix;
  throw new RegistryPrefixError(
    `spec.registry[${index}].prefix: '${registry.prefix}' is not a host[:port] or _default (it names the directory certs.d/<prefix>/)`,
  );
}

/** Where containerd looks for hosts.toml files (the config_path both snippets set). */
export const CERTS_D = '/etc/containerd/certs.d';

/**
 * Where containerd sends a prefix's pulls when no mirror answers: the spec's `server`, else
 * containerd's own default, https://<prefix> (https://registry-1.docker.io for docker.io;
 * containerd docs/hosts.md). None for `_default`, whose file serves every other registry.
 */
export function serverOf(registry: RegistrySpec): { url: string; given: boolean } | undefined {
  if (registry.server !== undefined) return { url: registry.server, given: true };
  if (registry.prefix === '_default') return undefined;
  return { url: registry.prefix === 'docker.io' ? 'https://registry-1.docker.io' : `https://${registry.prefix}`, given: false };
}

/** host[:port] of an http(s) URL: the name containerd looks credentials up by (`registry.configs."<host>"`). */
export function hostOf(url: string): string {
  return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`).host;
}

/** Credentials per host containerd connects to: the server's (registry auth) and each mirror's. */
export function credentialsByHost(registries: RegistrySpec[]): Array<{ host: string; auth: NonNullable<RegistrySpec['auth']>; from: string }> {
  const out: Array<{ host: string; auth: NonNullable<RegistrySpec['auth']>; from: string }> = [];
  registries.forEach((r, i) => {
    const server = serverOf(r);
    if (r.auth !== undefined && server) out.push({ host: hostOf(server.url), auth: r.auth, from: `spec.registry[${i}].auth` });
    r.mirrors.forEach((m, j) => {
      if (m.auth !== undefined) out.push({ host: hostOf(m.host), auth: m.auth, from: `spec.registry[${i}].mirrors[${j}].auth` });
    });
  });
  return out;
}
