import { CERTS_D, credentialsByHost, type RegistrySpec } from './registry';

const CLASH = '# Do not also set mirrors/configs under .registry: containerd refuses config_path together with them.';

/**
 * containerd's config versions and the containerd releases that read each as their own (containerd
 * RELEASES.md, "Daemon Configuration": version 2 from 1.3, 3 from 2.0, 4 from 2.3). A containerd
 * reads older versions too, migrating them at every start with a warning ("Configuration migrated
 * from version 3, use `containerd config migrate`"), and refuses newer ones. Version 4 moved only
 * the server listeners (grpc, ttrpc, debug, metrics) into plugins: the CRI images plugin's registry
 * section is the same as in version 3.
 */
export interface ContainerdConfig {
  readonly configVersion: 2 | 3 | 4;
  /** The containerd releases it is for, as the files' comments say it. */
  readonly containerd: string;
  /** The file name suffix: `config.toml.<suffix>`. */
  readonly suffix: string;
  /** The plugin that holds `registry`. */
  readonly plugin: string;
  /** Whether a containerd `major.minor` reads this version as its current one. */
  fits(major: number, minor: number): boolean;
}

export const CONTAINERD_CONFIGS: readonly ContainerdConfig[] = [
  { configVersion: 2, containerd: '1.6 / 1.7', suffix: 'containerd-1.6-1.7', plugin: 'io.containerd.grpc.v1.cri', fits: (major) => major < 2 },
  {
    configVersion: 3,
    containerd: '2.0 to 2.2',
    suffix: 'containerd-2.0-2.2',
    plugin: 'io.containerd.cri.v1.images',
    fits: (major, minor) => major === 2 && minor < 3,
  },
  {
    configVersion: 4,
    containerd: '2.3 and later',
    suffix: 'containerd-2.3+',
    plugin: 'io.containerd.cri.v1.images',
    fits: (major, minor) => major > 2 || (major === 2 && minor >= 3),
  },
];

/** The config version a containerd `1.7`, `2.3.1` or `v2.2` reads as its own. */
export function containerdConfigFor(version: string): ContainerdConfig {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number) as [number, number];
  return CONTAINERD_CONFIGS.find((c) => c.fits(major, minor))!;
}

const forWhom = (c: ContainerdConfig) => `containerd ${c.containerd} (config version ${c.configVersion})`;

/** The config_path fragment: the CRI registry section pointing at certs.d. */
export function configPathFragment(c: ContainerdConfig): string {
  return [
    `# /etc/containerd/config.toml fragment for ${forWhom(c)}.`,
    CLASH,
    '# Files under certs.d are read at each pull: adding or changing a hosts.toml needs no restart.',
    `version = ${c.configVersion}`,
    '',
    `[plugins.${tomlString(c.plugin)}.registry]`,
    `  config_path = "${CERTS_D}"`,
    '',
  ].join('\n');
}

/** A TOML basic string (JSON's escapes are TOML's). */
const tomlString = (v: string) => JSON.stringify(v);

function authHeader(c: ContainerdConfig): string[] {
  return [
    `# /etc/containerd/config.toml fragment for ${forWhom(c)}: registry credentials for the node.`,
    "# HOLDS CREDENTIALS: keep this file out of Git (a vault, your node provisioning's secrets).",
    '# Merge these lines into /etc/containerd/config.toml (not with `imports`: an imported CRI section replaces',
    '# the main one, config_path included) and restart containerd: unlike certs.d, config.toml is read at start.',
    "# Keyed by the host containerd connects to (a mirror's, or the server's), not the image prefix.",
    '# Deprecated by containerd but kept until it has another place for credentials (containerd',
    "# docs/cri/registry.md); it may stand beside config_path (mirrors may not). The kubelet's pull secret,",
    '# when one matches the image, replaces these for every host: mirrors then get no credentials.',
  ];
}

/** Credentials in the CRI plugin's `registry.configs."<host>".auth`. */
export function authFragment(c: ContainerdConfig, registries: RegistrySpec[]): string {
  const tables = credentialsByHost(registries).flatMap(({ host, auth, from }) => [
    '',
    `# ${from}`,
    `[plugins.${tomlString(c.plugin)}.registry.configs.${tomlString(host)}.auth]`,
    ...('auth' in auth ? [`  auth = ${tomlString(auth.auth)}`] : [`  username = ${tomlString(auth.username)}`, `  password = ${tomlString(auth.password)}`]),
  ]);
  return [...authHeader(c), `version = ${c.configVersion}`, ...tables, ''].join('\n');
}
