import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { RegistryPrefixError, containerdFiles } from '../../src/emit/containerd';
import { resolved } from '../support/spec-builder';

/** smol-toml builds null-prototype tables; plain objects compare with deepEqual. */
const parseToml = (text: string): unknown => JSON.parse(JSON.stringify(parse(text)));

const registry = [
  {
    prefix: 'docker.io',
    mirrors: [
      { host: 'https://harbor.corp.example:8443/v2/dockerhub', overridePath: true, ca: 'harbor-ca.crt', header: { 'X-Team': 'sre', Accept: ['a', 'b'] } },
      { host: 'https://backup.corp.example', capabilities: ['pull'], skipVerify: true, client: [['client.crt', 'client.key']] },
    ],
    auth: { username: 'robot', password: 's3cret "quoted"' },
  },
  { prefix: 'harbor.corp.example:8443', server: 'https://harbor.corp.example:8443', mirrors: [] },
];

describe('containerd: certs.d hosts.toml, config_path snippets, kubespray vars', () => {
  const files = containerdFiles(resolved({ spec: { registry } }).spec);

  it('hosts.toml parses back as TOML with every field in containerd\'s names', () => {
    const docker = parseToml(files['certs.d/docker.io/hosts.toml']!) as Record<string, any>;
    assert.equal(docker.server, undefined, "no server: containerd's own default for docker.io applies");
    assert.deepEqual(Object.keys(docker.host), ['https://harbor.corp.example:8443/v2/dockerhub', 'https://backup.corp.example'], 'mirrors keep their order');
    assert.deepEqual(docker.host['https://harbor.corp.example:8443/v2/dockerhub'], {
      capabilities: ['pull', 'resolve'], override_path: true, ca: 'harbor-ca.crt', header: { 'X-Team': 'sre', Accept: ['a', 'b'] },
    });
    assert.deepEqual(docker.host['https://backup.corp.example'], { capabilities: ['pull'], skip_verify: true, client: [['client.crt', 'client.key']] });
    const harbor = parseToml(files['certs.d/harbor.corp.example:8443/hosts.toml']!) as Record<string, any>;
    assert.equal(harbor.server, 'https://harbor.corp.example:8443');
    assert.equal(harbor.host, undefined);
  });

  it('config_path snippets: version 2 under the grpc CRI plugin, version 3 under the images plugin', () => {
    const v2 = parseToml(files['config.toml.containerd-1.6-1.7']!) as Record<string, any>;
    assert.equal(v2.version, 2);
    assert.equal(v2.plugins['io.containerd.grpc.v1.cri'].registry.config_path, '/etc/containerd/certs.d');
    assert.equal(v2.plugins['io.containerd.grpc.v1.cri'].registry.mirrors, undefined);
    const v3 = parseToml(files['config.toml.containerd-2.x']!) as Record<string, any>;
    assert.equal(v3.version, 3);
    assert.equal(v3.plugins['io.containerd.cri.v1.images'].registry.config_path, '/etc/containerd/certs.d');
  });

  it('kubespray vars use kubespray\'s names', () => {
    const vars = parseYaml(files['kubespray-containerd.yml']!);
    assert.deepEqual(vars.containerd_registries_mirrors[0], {
      prefix: 'docker.io',
      mirrors: [
        { host: 'https://harbor.corp.example:8443/v2/dockerhub', capabilities: ['pull', 'resolve'], skip_verify: false, override_path: true, ca: 'harbor-ca.crt', header: { 'X-Team': 'sre', Accept: ['a', 'b'] } },
        { host: 'https://backup.corp.example', capabilities: ['pull'], skip_verify: true, override_path: false, client: [['client.crt', 'client.key']] },
      ],
    });
    assert.deepEqual(vars.containerd_registries_mirrors[1], { prefix: 'harbor.corp.example:8443', server: 'https://harbor.corp.example:8443', mirrors: [] });
    assert.deepEqual(vars.containerd_registry_auth, [{ registry: 'docker.io', username: 'robot', password: 's3cret "quoted"' }]);
  });

  it('no registry, no files; a prefix that is not a host[:port] is refused', () => {
    assert.deepEqual(containerdFiles(resolved().spec), {});
    assert.throws(() => containerdFiles(resolved({ spec: { registry: [{ prefix: '../etc', mirrors: [] }] } }).spec), RegistryPrefixError);
    assert.ok('certs.d/_default/hosts.toml' in containerdFiles(resolved({ spec: { registry: [{ prefix: '_default', mirrors: [] }] } }).spec));
  });
});
