import { CERTS_D, credentialsByHost, type RegistrySpec } from './registry';

const CLASH = '# Do not also set mirrors/configs under .registry: containerd refuses config_path together with them.';

/** containerd 1.6 / 1.7 (`version = 2` config): the CRI plugin's registry section. */
export function configPathV2(): string {
  return [
    '# /etc/containerd/config.toml fragment for containerd 1.6 / 1.7 (config version 2).',
    CLASH,
    '# Files under certs.d are read at each pull: adding or changing a hosts.toml needs no restart.',
    'version = 2',
    '',
    '[plugins."io.containerd.grpc.v1.cri".registry]',
    `  config_path = "${CERTS_D}"`,
    '',
  ].join('\n');
}

/** containerd 2.x (`version = 3` config): the CRI images plugin's registry section. */
export function configPathV3(): string {
  return [
    '# /etc/containerd/config.toml fragment for containerd 2.x (config version 3).',
    CLASH,
    '# Files under certs.d are read at each pull: adding or changing a hosts.toml needs no restart.',
    'version = 3',
    '',
    '[plugins."io.containerd.cri.v1.images".registry]',
    `  config_path = "${CERTS_D}"`,
    '',
  ].join('\n');
}

/** A TOML basic string (JSON's escapes are TOML's). */
const tomlString = (v: string) => JSON.stringify(v);

function authHeader(version: string): string[] {
  return [
    `# /etc/containerd/config.toml fragment for containerd ${version}: registry credentials for the node.`,
    "# HOLDS CREDENTIALS: keep this file out of Git (a vault, your node provisioning's secrets).",
    '# Merge these lines into /etc/containerd/config.toml (not with `imports`: an imported CRI section replaces',
    '# the main one, config_path included) and restart containerd: unlike certs.d, config.toml is read at start.',
    "# Keyed by the host containerd connects to (a mirror's, or the server's), not the image prefix.",
    '# Deprecated by containerd but kept until it has another place for credentials (containerd',
    "# docs/cri/registry.md); it may stand beside config_path (mirrors may not). The kubelet's pull secret,",
    '# when one matches the image, replaces these for every host: mirrors then get no credentials.',
  ];
}

function authTables(plugin: string, registries: RegistrySpec[]): string[] {
  return credentialsByHost(registries).flatMap(({ host, auth, from }) => [
    '',
    `# ${from}`,
    `[plugins.${tomlString(plugin)}.registry.configs.${tomlString(host)}.auth]`,
    ...('auth' in auth ? [`  auth = ${tomlString(auth.auth)}`] : [`  username = ${tomlString(auth.username)}`, `  password = ${tomlString(auth.password)}`]),
  ]);
}

/** containerd 1.6 / 1.7: credentials in the CRI plugin's `registry.configs."<host>".auth` (config version 2). */
export function authConfigV2(registries: RegistrySpec[]): string {
  return [...authHeader('1.6 / 1.7 (config version 2)'), 'version = 2', ...authTables('io.containerd.grpc.v1.cri', registries), ''].join('\n');
}

/** containerd 2.x: the same under the CRI images plugin (config version 3). */
export function authConfigV3(registries: RegistrySpec[]): string {
  return [...authHeader('2.x (config version 3)'), 'version = 3', ...authTables('io.containerd.cri.v1.images', registries), ''].join('\n');
}
