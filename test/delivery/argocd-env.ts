/** The environment Argo CD gives a config management plugin's generate command (for the delivery tests). */

export type Param = { name: string; string?: string; array?: string[]; map?: Record<string, string> };

/**
 * The environment Argo CD gives the generate command, built the way its source builds it: the
 * repo-server's entries (reposerver/repository/repository.go: newEnv, getPluginEnvs, and
 * getPluginParamEnvs, which adds ARGOCD_ENV_* and the parameters only when the Application has a
 * `plugin` block), the parameters as ApplicationSourcePluginParameters.Environ writes them
 * (pkg/apis/application/v1alpha1/types.go: Go's json.Marshal of the list, so an empty one is
 * `null`, then PARAM_<NAME>, PARAM_<NAME>_<i>, PARAM_<NAME>_<KEY>), appended by the CMP server to
 * its own environment (cmpserver/plugin/plugin.go, generateManifest).
 */
export function argoCdEnv(plugin: { parameters?: Param[]; env?: Record<string, string> } | undefined): NodeJS.ProcessEnv {
  const escaped = (name: string) => name.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  const env: NodeJS.ProcessEnv = {
    ARGOCD_APP_PROJECT_NAME: 'default',
    ARGOCD_APP_REVISION_SHORT: '0123456',
    ARGOCD_APP_REVISION_SHORT_8: '01234567',
    ARGOCD_APP_SOURCE_REPO_URL: 'https://git.example.com/platform/gateways.git',
    ARGOCD_APP_SOURCE_TARGET_REVISION: 'main',
    KUBE_API_VERSIONS: 'v1,apps/v1,policy/v1',
  };
  if (plugin === undefined) return env;
  for (const [name, value] of Object.entries(plugin.env ?? {})) env[`ARGOCD_ENV_${name}`] = value;
  const params = plugin.parameters ?? null; // a nil Go slice
  env.ARGOCD_APP_PARAMETERS = JSON.stringify(params);
  for (const p of params ?? []) {
    const base = `PARAM_${escaped(p.name)}`;
    if (p.string !== undefined) env[base] = p.string;
    for (const [key, value] of Object.entries(p.map ?? {})) env[`${base}_${escaped(key)}`] = value;
    (p.array ?? []).forEach((value, i) => (env[`${base}_${i}`] = value));
  }
  return env;
}
