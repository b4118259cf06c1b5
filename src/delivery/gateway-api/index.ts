/**
 * A Gateway API gateway, deployed by istiod: the pod changes as strategic-merge patches in the
 * parameters ConfigMap its Gateway names (gateway-parameters.yaml), merged into the user's own
 * ConfigMap when there is one; post-rendered, the Gateway gets the reference.
 */
import type { DeliveryPath, SynthPart, SynthRequest } from '../path';

/**
 * The parameters ConfigMap (merged into the user's when given), the hc ConfigMap and health
 * Service, and with --kustomize the component that also points the Gateway at the ConfigMap; the
 * Gateway's line to print. The parameters' code is loaded only here.
 */
function synth(request: SynthRequest): SynthPart | null {
  if (request.kind !== 'GracefulGateway' || !request.changes.gatewayApi) return null;
  const { gatewayApiKustomizeComponent, gatewayApiManifestsYaml, gatewayParametersObject, gatewayParametersYaml, parametersRefText } =
    require('./parameters') as typeof import('./parameters');
  const { mergeUserParameters, readUserParameters } = require('./parameters-merge') as typeof import('./parameters-merge');
  const { changes, parameters } = request;
  const configMap =
    parameters !== undefined
      ? mergeUserParameters(readUserParameters(parameters.read(), parameters.path), changes, parameters.path)
      : gatewayParametersObject(changes);
  const files: Record<string, string> = {
    'gateway-parameters.yaml': gatewayParametersYaml(changes, configMap),
    'manifests.yaml': gatewayApiManifestsYaml(changes),
  };
  if (request.kustomize) {
    for (const [path, text] of Object.entries(gatewayApiKustomizeComponent(changes, configMap))) files[`kustomize/${path}`] = text;
  }
  return { files, note: parametersRefText(changes, configMap.metadata.name) };
}

export const gatewayApiPath: DeliveryPath<'gateway-api'> = {
  name: 'gateway-api',
  how: 'strategic-merge patches in the parameters ConfigMap istiod applies to the Deployment it deploys',
  docs: 'docs/gateway-api.md#what-synth-writes',
  plugin: null,
  synth,
};
