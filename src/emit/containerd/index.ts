import type { GatewaySpec } from '../../schema/gateway-spec';
import { authConfigV2, authConfigV3, configPathV2, configPathV3 } from './config-snippets';
import { hostsToml } from './hosts-toml';
import { kubesprayVars } from './kubespray';
import { certsDirName, credentialsByHost } from './registry';

export { RegistryPrefixError, CERTS_D } from './registry';
export { hostsToml } from './hosts-toml';
export { authConfigV2, authConfigV3, configPathV2, configPathV3 } from './config-snippets';
export { kubesprayVars } from './kubespray';

/**
 * The files under `out/containerd/` (paths relative to it), or none when the spec has no
 * `registry`: one certs.d/<prefix>/hosts.toml per registry, the config_path snippets for
 * containerd 1.6/1.7 and 2.x, the kubespray variables, and the credentials snippets when any
 * registry or mirror has `auth`.
 */
export function containerdFiles(spec: GatewaySpec): Record<string, string> {
  const registries = spec.spec.registry;
  if (registries.length === 0) return {};
  const files: Record<string, string> = {};
  registries.forEach((r, i) => {
    files[`certs.d/${certsDirName(r, i)}/hosts.toml`] = hostsToml(r, i);
  });
  files['config.toml.containerd-1.6-1.7'] = configPathV2();
  files['config.toml.containerd-2.x'] = configPathV3();
  files['kubespray-containerd.yml'] = kubesprayVars(registries);
  if (credentialsByHost(registries).length > 0) {
    files['config.toml.registry-auth.containerd-1.6-1.7'] = authConfigV2(registries);
    files['config.toml.registry-auth.containerd-2.x'] = authConfigV3(registries);
  }
  return files;
}
