import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { RegistryPrefixError, containerdFiles } from '../../src/emit/containerd';
import { REPO_ROOT } from '../support/repo';
import { resolved } from '../support/spec-builder';
import { testDir } from '../support/tmp';

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

  it("hosts.toml parses back as TOML with every field in containerd's names", () => {
    const docker = parseToml(files['certs.d/docker.io/hosts.toml']!) as Record<string, any>;
    assert.equal(docker.server, 'https://registry-1.docker.io', "containerd's own default for docker.io, written out");
    assert.match(files['certs.d/docker.io/hosts.toml']!, /# server: .*containerd's own default for docker\.io, written out\.\nserver = /);
    assert.match(files['certs.d/docker.io/hosts.toml']!, /No credentials here/);
    assert.deepEqual(Object.keys(docker.host), ['https://harbor.corp.example:8443/v2/dockerhub', 'https://backup.corp.example'], 'mirrors keep their order');
    assert.deepEqual(docker.host['https://harbor.corp.example:8443/v2/dockerhub'], {
      capabilities: ['pull', 'resolve'],
      override_path: true,
      ca: 'harbor-ca.crt',
      header: { 'X-Team': 'sre', Accept: ['a', 'b'] },
    });
    assert.deepEqual(docker.host['https://backup.corp.example'], { capabilities: ['pull'], skip_verify: true, client: [['client.crt', 'client.key']] });
    const harbor = parseToml(files['certs.d/harbor.corp.example:8443/hosts.toml']!) as Record<string, any>;
    assert.equal(harbor.server, 'https://harbor.corp.example:8443');
    assert.equal(harbor.host, undefined);
  });

  it('config_path snippets: version 2 under the grpc CRI plugin, versions 3 and 4 under the images plugin', () => {
    const v2 = parseToml(files['config.toml.containerd-1.6-1.7']!) as Record<string, any>;
    assert.equal(v2.version, 2);
    assert.equal(v2.plugins['io.containerd.grpc.v1.cri'].registry.config_path, '/etc/containerd/certs.d');
    assert.equal(v2.plugins['io.containerd.grpc.v1.cri'].registry.mirrors, undefined);
    const v3 = parseToml(files['config.toml.containerd-2.0-2.2']!) as Record<string, any>;
    assert.equal(v3.version, 3);
    assert.equal(v3.plugins['io.containerd.cri.v1.images'].registry.config_path, '/etc/containerd/certs.d');
    // containerd 2.3 made version 4 current (containerd RELEASES.md) and migrates a version 3 file at
    // every start with a warning; version 4 changed only the server listeners, not this section.
    const v4 = parseToml(files['config.toml.containerd-2.3+']!) as Record<string, any>;
    assert.equal(v4.version, 4);
    assert.deepEqual(v4.plugins, v3.plugins);
    assert.match(files['config.toml.containerd-2.3+']!, /^# \/etc\/containerd\/config\.toml fragment for containerd 2\.3 and later \(config version 4\)\./);
    assert.match(files['config.toml.containerd-2.0-2.2']!, /^# \/etc\/containerd\/config\.toml fragment for containerd 2\.0 to 2\.2 \(config version 3\)\./);
  });

  it('a real containerd 2.3.4 reads every fragment: config_path taken from each, a migration warning for versions 2 and 3, none for 4', () => {
    // `containerd config dump` loads and migrates the config as the daemon does, and prints it.
    const containerd = join(REPO_ROOT, '.cache/tools/containerd-v2.3.4/containerd');
    const dir = testDir('gracegate-containerd-');
    const seen: Record<string, { version: string | undefined; configPath: string | undefined; migrated: boolean }> = {};
    for (const file of ['config.toml.containerd-1.6-1.7', 'config.toml.containerd-2.0-2.2', 'config.toml.containerd-2.3+']) {
      writeFileSync(join(dir, file), files[file]!);
      const r = spawnSync(containerd, ['--config', join(dir, file), 'config', 'dump'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, `${file}: ${r.stderr}`);
      const dumped = parseToml(r.stdout) as Record<string, any>;
      seen[file] = {
        version: String(dumped.version),
        configPath: dumped.plugins['io.containerd.cri.v1.images'].registry.config_path,
        migrated: /Configuration migrated from version \d/.test(r.stderr),
      };
    }
    assert.deepEqual(seen, {
      'config.toml.containerd-1.6-1.7': { version: '4', configPath: '/etc/containerd/certs.d', migrated: true },
      'config.toml.containerd-2.0-2.2': { version: '4', configPath: '/etc/containerd/certs.d', migrated: true },
      'config.toml.containerd-2.3+': { version: '4', configPath: '/etc/containerd/certs.d', migrated: false },
    });
  });

  it("spec.containerdVersion: only the fragment in that containerd's config version", () => {
    const only = (containerdVersion: string) => {
      const f = containerdFiles(resolved({ spec: { registry, containerdVersion } }).spec);
      return Object.keys(f)
        .filter((k) => k.startsWith('config.toml.'))
        .map((k) => `${k} v${(parseToml(f[k]!) as { version: number }).version}`);
    };
    assert.deepEqual(only('2.3'), ['config.toml.containerd-2.3+ v4', 'config.toml.registry-auth.containerd-2.3+ v4']);
    assert.deepEqual(only('v2.4.1'), ['config.toml.containerd-2.3+ v4', 'config.toml.registry-auth.containerd-2.3+ v4']);
    assert.deepEqual(only('2.2.7'), ['config.toml.containerd-2.0-2.2 v3', 'config.toml.registry-auth.containerd-2.0-2.2 v3']);
    assert.deepEqual(only('2.0'), ['config.toml.containerd-2.0-2.2 v3', 'config.toml.registry-auth.containerd-2.0-2.2 v3']);
    assert.deepEqual(only('1.7.27'), ['config.toml.containerd-1.6-1.7 v2', 'config.toml.registry-auth.containerd-1.6-1.7 v2']);
    assert.throws(() => resolved({ spec: { registry, containerdVersion: 2.3 as unknown as string } }), /quote it: YAML reads 2\.3 as a number/);
  });

  it("kubespray vars use kubespray's names", () => {
    const vars = parseYaml(files['kubespray-containerd.yml']!);
    assert.deepEqual(vars.containerd_registries_mirrors[0], {
      prefix: 'docker.io',
      server: 'https://registry-1.docker.io',
      mirrors: [
        {
          host: 'https://harbor.corp.example:8443/v2/dockerhub',
          capabilities: ['pull', 'resolve'],
          skip_verify: false,
          override_path: true,
          ca: 'harbor-ca.crt',
          header: { 'X-Team': 'sre', Accept: ['a', 'b'] },
        },
        { host: 'https://backup.corp.example', capabilities: ['pull'], skip_verify: true, override_path: false, client: [['client.crt', 'client.key']] },
      ],
    });
    assert.deepEqual(vars.containerd_registries_mirrors[1], { prefix: 'harbor.corp.example:8443', server: 'https://harbor.corp.example:8443', mirrors: [] });
    // Keyed by the host containerd connects to: docker.io's server is registry-1.docker.io.
    assert.deepEqual(vars.containerd_registry_auth, [{ registry: 'registry-1.docker.io', username: 'robot', password: 's3cret "quoted"' }]);
  });

  it('kubespray: server always written (its template falls back to https://<prefix>, https://docker.io), the release each key needs, client as pairs, _default left out', () => {
    const text = files['kubespray-containerd.yml']!;
    // From kubespray's roles/container-engine/containerd/templates/hosts.toml.j2 at each tag.
    assert.match(text, /^# Needs kubespray v2\.29\.0 or later: /m, 'header is the newest key used');
    for (const line of [
      'containerd_registries_mirrors v2.23.0',
      'override_path v2.24.0',
      'server v2.25.0 (before it, always https://<prefix>: https://docker.io for docker.io)',
      'ca v2.28.0',
      'client v2.28.0',
      'header v2.29.0',
    ]) {
      assert.ok(text.includes(`\n#   ${line}\n`), line);
    }
    const plain = containerdFiles(resolved({ spec: { registry: [{ prefix: 'ghcr.io', mirrors: [{ host: 'https://mirror.corp' }] }] } }).spec)[
      'kubespray-containerd.yml'
    ]!;
    assert.match(plain, /^# Needs kubespray v2\.25\.0 or later: /m);
    assert.doesNotMatch(plain, /#\s+(ca|client|header) v/);
    assert.deepEqual(parseYaml(plain).containerd_registries_mirrors[0].server, 'https://ghcr.io');
    // kubespray renders client as [cert, key] pairs only; containerd reads a path alone as [path, ""].
    const clients = containerdFiles(
      resolved({
        spec: {
          registry: [
            {
              prefix: 'ghcr.io',
              mirrors: [
                { host: 'https://a', client: 'both.pem' },
                { host: 'https://b', client: ['one.pem', 'two.pem'] },
              ],
            },
          ],
        },
      }).spec,
    );
    assert.deepEqual(
      parseYaml(clients['kubespray-containerd.yml']!).containerd_registries_mirrors[0].mirrors.map((m: { client: unknown }) => m.client),
      [
        [['both.pem', '']],
        [
          ['one.pem', ''],
          ['two.pem', ''],
        ],
      ],
    );
    const withDefault = containerdFiles(
      resolved({
        spec: {
          registry: [
            { prefix: '_default', mirrors: [{ host: 'https://mirror.corp' }] },
            { prefix: 'quay.io', mirrors: [] },
          ],
        },
      }).spec,
    )['kubespray-containerd.yml']!;
    assert.deepEqual(
      parseYaml(withDefault).containerd_registries_mirrors.map((r: { prefix: string }) => r.prefix),
      ['quay.io'],
    );
    assert.match(withDefault, /^# _default is not here: kubespray writes a server line into every hosts\.toml/m);
  });

  it('credentials: CRI config snippets keyed by the host containerd connects to, server and mirrors, in every config version', () => {
    const withMirrorAuth = containerdFiles(
      resolved({
        spec: {
          registry: [
            { prefix: 'ghcr.io', mirrors: [{ host: 'https://harbor.corp.example:8443/v2/ghcr', auth: { auth: 'cm9ib3Q6cHc=' } }] },
            { prefix: 'quay.io', server: 'https://quay.corp.example', mirrors: [], auth: { username: 'u', password: 'p"w' } },
          ],
        },
      }).spec,
    );
    const v2 = parseToml(withMirrorAuth['config.toml.registry-auth.containerd-1.6-1.7']!) as Record<string, any>;
    assert.equal(v2.version, 2);
    assert.deepEqual(v2.plugins['io.containerd.grpc.v1.cri'].registry.configs, {
      'harbor.corp.example:8443': { auth: { auth: 'cm9ib3Q6cHc=' } },
      'quay.corp.example': { auth: { username: 'u', password: 'p"w' } },
    });
    assert.equal(v2.plugins['io.containerd.grpc.v1.cri'].registry.mirrors, undefined, 'never mirrors: config_path refuses them');
    const v3 = parseToml(withMirrorAuth['config.toml.registry-auth.containerd-2.0-2.2']!) as Record<string, any>;
    assert.equal(v3.version, 3);
    assert.deepEqual(Object.keys(v3.plugins['io.containerd.cri.v1.images'].registry.configs), ['harbor.corp.example:8443', 'quay.corp.example']);
    assert.match(withMirrorAuth['config.toml.registry-auth.containerd-1.6-1.7']!, /^# .*\n# HOLDS CREDENTIALS: keep this file out of Git/);
    // Without credentials, no such files; hosts.toml never has any.
    assert.equal(files['config.toml.registry-auth.containerd-2.0-2.2'] !== undefined, true, 'the docker.io registry above has auth');
    assert.equal((parseToml(withMirrorAuth['config.toml.registry-auth.containerd-2.3+']!) as { version: number }).version, 4);
    assert.ok(
      !Object.keys(containerdFiles(resolved({ spec: { registry: [{ prefix: 'ghcr.io', mirrors: [] }] } }).spec)).some((f) => f.includes('registry-auth')),
    );
    for (const [path, text] of Object.entries(withMirrorAuth)) if (path.endsWith('hosts.toml')) assert.doesNotMatch(text, /cm9ib3Q6cHc=|p"w/);
    // _default: no server line, and it says why.
    const dflt = containerdFiles(resolved({ spec: { registry: [{ prefix: '_default', mirrors: [{ host: 'https://mirror.corp' }] }] } }).spec)[
      'certs.d/_default/hosts.toml'
    ]!;
    assert.equal((parseToml(dflt) as Record<string, any>).server, undefined);
    assert.match(dflt, /No server line: _default serves every registry/);
  });

  it('no registry, no files; a prefix that is not a host[:port] is refused', () => {
    assert.deepEqual(containerdFiles(resolved().spec), {});
    assert.throws(() => containerdFiles(resolved({ spec: { registry: [{ prefix: '../etc', mirrors: [] }] } }).spec), RegistryPrefixError);
    assert.ok('certs.d/_default/hosts.toml' in containerdFiles(resolved({ spec: { registry: [{ prefix: '_default', mirrors: [] }] } }).spec));
  });
});
