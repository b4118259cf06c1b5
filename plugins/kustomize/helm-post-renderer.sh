#!/bin/sh
# "Kustomize as a Helm post-renderer": Helm's rendered manifests become the resources of a
# throw-away kustomization that uses gracegate's component (from `gracegate synth --kustomize`).
#   Helm 3: helm template|upgrade ... --post-renderer PATH/TO/helm-post-renderer.sh --post-renderer-args out/kustomize
#   Helm 4: a path is not a post-renderer there; plugin.yaml here makes this script the
#           gracegate-kustomize plugin (helm plugin install DIR; --post-renderer gracegate-kustomize).
# The kubectl used is $KUBECTL if set, else `kubectl` on PATH (any kubectl with kustomize v5).
set -eu
if [ $# -ne 1 ] || [ ! -f "$1/kustomization.yaml" ]; then
  echo "usage: helm-post-renderer.sh COMPONENT_DIR (a directory written by gracegate synth --kustomize)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy inside the kustomization root: kustomize refuses an absolute component path.
cp -R "$1" "$work/gracegate"
cat > "$work/all.yaml"
cat > "$work/kustomization.yaml" <<KUSTOMIZATION
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- all.yaml
components:
- gracegate
KUSTOMIZATION
"${KUBECTL:-kubectl}" kustomize "$work"
