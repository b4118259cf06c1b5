import { CERTS_D } from './registry';

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
