/**
 * The values overlay: the pod changes as the chart's own values (`gracegate synth` writes
 * values-overlay.yaml, passed last with -f), and the objects beside the Deployment in
 * manifests.yaml.
 */
import { manifestsYaml } from '../manifests';
import type { DeliveryPath, SynthPart, SynthRequest } from '../path';

/**
 * The overlay, or none when the chart cannot carry it and the Kustomize component (which does the
 * same injection on the rendered chart) was asked for instead. The overlay's code is loaded only
 * here, so a command that reads the registry without synth does not load it.
 */
function synth(request: SynthRequest): SynthPart | null {
  if (request.kind !== 'GracefulGateway' || request.changes.gatewayApi) return null;
  const { OverlayUnsupportedError, valuesOverlayYaml } = require('./overlay') as typeof import('./overlay');
  const { changes, chart } = request;
  const manifests = { 'manifests.yaml': manifestsYaml(changes) };
  try {
    return { files: { 'values-overlay.yaml': valuesOverlayYaml(changes, chart), ...manifests } };
  } catch (err) {
    if (!(err instanceof OverlayUnsupportedError) || !request.kustomize) throw err;
    request.warn(`no values-overlay.yaml (${chart.kind} ${chart.version} cannot carry it); the Kustomize component in kustomize/ does the injection`);
    return { files: manifests };
  }
}

export const helmValuesPath: DeliveryPath<'helm-values'> = {
  name: 'helm-values',
  how: 'chart keys (`additionalContainers`, `lifecycle`, …) in values-overlay.yaml',
  docs: 'docs/synth.md#gracegate-synth-what-you-apply',
  plugin: null,
  synth,
};
