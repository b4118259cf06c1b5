/**
 * The cluster's certificates (openssl, EC P-256): one CA; the API server's serving certificate for
 * its node address and the `kubernetes` Service; a client certificate per identity, named as
 * Kubernetes' default RBAC expects (system:kube-controller-manager, system:kube-scheduler,
 * system:kube-proxy, system:node:<name> in system:nodes, and an admin in system:masters; kube-router
 * has a user of its own, bound to its ClusterRole); the
 * service-account signing key. Made once per clone and kept (they change only with the layout).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_DOMAIN, CONTROL_PLANE, KUBERNETES_SERVICE_IP, NODES, dirs } from './layout';
import { run } from './sh';

export type Identity = { file: string; cn: string; org?: string };

export const IDENTITIES: readonly Identity[] = [
  { file: 'admin', cn: 'gracegate-admin', org: 'system:masters' },
  { file: 'controller-manager', cn: 'system:kube-controller-manager' },
  { file: 'scheduler', cn: 'system:kube-scheduler' },
  { file: 'kube-proxy', cn: 'system:kube-proxy' },
  // kube-router's NetworkPolicy controller: bound to its own ClusterRole (components.ts KUBE_ROUTER_RBAC).
  { file: 'kube-router', cn: 'gracegate:kube-router' },
  { file: 'apiserver-kubelet-client', cn: 'kube-apiserver-kubelet-client', org: 'system:masters' },
  ...NODES.map((n) => ({ file: `kubelet-${n.name}`, cn: `system:node:${n.name}`, org: 'system:nodes' })),
];

export const pkiFile = (name: string): string => join(dirs.pki, name);

const openssl = (args: string[]): string => run('openssl', args, { timeoutMs: 30_000 });

function key(name: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', pkiFile(`${name}.key`)]);
}

function sign(name: string, subject: string, ext: string): void {
  key(name);
  openssl(['req', '-new', '-key', pkiFile(`${name}.key`), '-subj', subject, '-out', pkiFile(`${name}.csr`)]);
  writeFileSync(pkiFile(`${name}.ext`), ext);
  openssl([
    'x509',
    '-req',
    '-in',
    pkiFile(`${name}.csr`),
    '-CA',
    pkiFile('ca.crt'),
    '-CAkey',
    pkiFile('ca.key'),
    '-CAcreateserial',
    '-days',
    '3650',
    '-sha256',
    '-extfile',
    pkiFile(`${name}.ext`),
    '-out',
    pkiFile(`${name}.crt`),
  ]);
}

/** Makes whatever is missing; a complete set is left as it is. */
export function ensurePki(): void {
  mkdirSync(dirs.pki, { recursive: true });
  if (!existsSync(pkiFile('ca.crt'))) {
    key('ca');
    openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      pkiFile('ca.key'),
      '-subj',
      '/CN=gracegate-test-cluster-ca',
      '-days',
      '3650',
      '-sha256',
      '-out',
      pkiFile('ca.crt'),
    ]);
  }
  if (!existsSync(pkiFile('apiserver.crt'))) {
    const names = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${CLUSTER_DOMAIN}`, 'localhost'];
    const ips = [CONTROL_PLANE.node.ip, KUBERNETES_SERVICE_IP, '127.0.0.1'];
    const san = [...names.map((n) => `DNS:${n}`), ...ips.map((a) => `IP:${a}`)].join(',');
    sign(
      'apiserver',
      '/CN=kube-apiserver',
      `basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`,
    );
  }
  for (const id of IDENTITIES) {
    if (existsSync(pkiFile(`${id.file}.crt`))) continue;
    sign(
      id.file,
      `/CN=${id.cn}${id.org ? `/O=${id.org}` : ''}`,
      'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
    );
  }
  if (!existsSync(pkiFile('sa.key'))) {
    key('sa');
    openssl(['pkey', '-in', pkiFile('sa.key'), '-pubout', '-out', pkiFile('sa.pub')]);
  }
}
