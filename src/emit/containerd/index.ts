import type { GatewaySpec } from '../../schema/gateway-spec';
import { authFragment, configPathFragment, containerdConfigFor, CONTAINERD_CONFIGS } from './config-snippets';
import { hostsToml } from './hosts-toml';
import { kubesprayVars } from './kubespray';
import { certsDirName, credentialsByHost } from './registry';

export { RegistryPrefixError, CERTS_D } from './registry';
export { hostsToml } from './hosts-toml';
export { authFragment, configPathFragment, containerdConfigFor, CONTAINERD_CONFIGS, type ContainerdConfig } from './config-snippets';
export { kubesprayVars } from './kubespray';

/**
 * The files under `out/containerd/` (paths relative to it), or none when the spec has no
 * `registry`: one certs.d/<prefix>/hosts.toml per registry, the config_path fragment for the
 * containerd spec.containerdVersion names (one per config version when it names none, each saying
 * which containerd it is for), the kubespray variables, and the credentials fragments when any
 * registry or mirror has `auth`.
 */
export function containerdFiles(spec: GatewaySpec): Record<string, string> {
  const registries = spec.spec.registry;
  if (registries.length === 0) return {};
  const files: Record<string, string> = {};
  registries.forEach((r, i) => {
    files[`certs.d/${certsDirName(r, i)}/hosts.toml`] = hostsToml(r, i);
  });
  const configs = spec.spec.containerdVersion === undefined ? CONTAINERD_CONFIGS : [containerdConfigFor(spec.spec.containerdVersion)];
  const withAuth = credentialsByHost(registries).length > 0;
  for (const c of configs) {
    files[`config.toml.${c.suffix}`] = configPathFragment(c);
    if (withAuth) files[`config.toml.registry-auth.${c.suffix}`] = authFragment(c, registries);
  }
  files['kubespray-containerd.yml'] = kubesprayVars(registries);
  return files;
}
