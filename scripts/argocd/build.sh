#!/usr/bin/env bash
# Builds Argo CD v3.2.12 from the Go module proxy for the test cluster, pinned by the wrapper module
# in scripts/argocd/go/ (its go.mod repeats Argo CD's own replace block, which is why
# `go install …@v3.2.12` refuses it; go.sum is the pin). One binary, Argo CD's cmd/main.go, which
# picks its command from argv[0]: the output holds it as `argocd` and, as links to it, the commands
# the cluster runs (argocd-repo-server, argocd-cmp-server, argocd-application-controller,
# argocd-applicationset-controller). Beside it, manifests/: Argo CD's install manifests and CRDs
# from the same module.
# Output: <machine cache>/argocd/bin-<key>/, key = a hash of this script, every file under
# scripts/argocd/go and the Go compiler's version. A warm machine builds nothing; a cold one prints
# each step with its time. Prints the output folder on stdout. Module and build caches:
# scripts/go-env.sh.
# Usage: build.sh [--background | --wait-running]
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/argocd

# v3.2.12 as the module proxy serves it does not compile on its own: its controller/cache/info.go (a
# fix backported from v3.3) calls settings.ValidateExternalURL, while its util/settings still names
# that function validateExternalURL, unexported (v3.3 exported it). So the build compiles a writable
# copy of the module, verified against go.sum as it is downloaded, with one file added to
# util/settings that exports the release's own function under the name the caller uses
# (export_validate_external_url.go below); nothing else of the release changes. Go refuses an
# -overlay on files under GOMODCACHE, hence the copy.
ARGOCD_VERSION=v3.2.12

command -v go >/dev/null || { echo "argocd build: needs Go (https://go.dev/dl/ or apt-get install golang)" >&2; exit 1; }
. scripts/go-env.sh

key=$( { cat "$0"; find "$here/go" -type f | LC_ALL=C sort | xargs cat; go version; } | sha256sum | cut -c1-16)
out="$(scripts/cache-dir.sh)/argocd/bin-$key"
if [ -f "$out/.complete" ]; then
  echo "$out"
  exit 0
fi
# --background: build detached and niced (15: below the cluster's build at 10, which the cluster
# track needs first), progress into build-<key>.log beside the output (the test preparation starts
# it so the compiling overlaps the other tests).
log="$(dirname "$out")/build-$key.log"
# --wait-running: wait for a build of this key under way (the test preparation's, in the background)
# to end, and build nothing: the test run's cluster track starts no cluster file beside a build.
if [ "${1:-}" = --wait-running ]; then
  mkdir -p "$(dirname "$out")"
  if ! flock -n "$out.lock" true; then
    echo "argocd build: waiting for the build under way to end before the cluster's files (progress: $log)" >&2
    flock "$out.lock" true
  fi
  exit 0
fi
if [ "${1:-}" = --background ]; then
  mkdir -p "$(dirname "$out")"
  # A build of this key under way (its lock held): nothing to start, and its log is left whole.
  if ! flock -n "$out.lock" true; then
    echo "argocd build: already building in the background (progress: $log)" >&2
    exit 0
  fi
  echo "argocd build: building in the background, niced (progress: $log)" >&2
  setsid nohup nice -n 15 bash "$PWD/$here/build.sh" >/dev/null 2>"$log" </dev/null &
  exit 0
fi
# One build of a key at a time on this machine: the test run's cluster track waits here for a
# build under way instead of building the same thing beside it.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
if ! flock -n 9; then
  echo "argocd build: waiting for the build under way (progress: $log)" >&2
  flock 9
  if [ -f "$out/.complete" ]; then
    cat "$log" >&2 2>/dev/null || true
    echo "$out"
    exit 0
  fi
  echo "argocd build: the build under way did not finish; building here" >&2
fi

start=$SECONDS
step() { echo "argocd build: $* (+$((SECONDS - start)) s)" >&2; }
rm -rf "$out.partial" && mkdir -p "$out.partial"

step "Argo CD $ARGOCD_VERSION, cmd/main.go (go build, static; about 2,230 packages)"
# The writable copy: the module as downloaded (its hash checked against the wrapper's go.sum), plus
# the one exporting file, and the wrapper module pointed at it by a replace line of its own.
work="$out.work"
rm -rf "$work" && mkdir -p "$work"
argocd_dir=$(cd "$here/go" && go mod download -json github.com/argoproj/argo-cd/v3 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$argocd_dir" ] || { echo "argocd build: go mod download gave no module folder" >&2; exit 1; }
cp -R "$argocd_dir" "$work/argo-cd" && chmod -R u+w "$work/argo-cd"
cat > "$work/argo-cd/util/settings/export_validate_external_url.go" <<'GO'
package settings

// ValidateExternalURL is validateExternalURL under the exported name that this release's
// controller/cache/info.go calls (added by gracegate's test build; v3.3 renamed the function itself).
func ValidateExternalURL(u string) error { return validateExternalURL(u) }
GO
cp "$here/go/go.mod" "$here/go/go.sum" "$here/go/tools.go" "$work/"
(cd "$work" && go mod edit -replace "github.com/argoproj/argo-cd/v3=./argo-cd")
# Argo CD's Makefile sets these variables of its common package; kubectlVersion is its client-go's.
pkg=github.com/argoproj/argo-cd/v3/common
client_go=$(cd "$here/go" && go list -m -f '{{.Version}}' k8s.io/client-go)
ldflags="-s -w -X $pkg.version=${ARGOCD_VERSION#v} -X $pkg.buildDate=1970-01-01T00:00:00Z"
ldflags+=" -X $pkg.gitTag=$ARGOCD_VERSION -X $pkg.gitTreeState=clean -X $pkg.kubectlVersion=$client_go"
(cd "$work" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out.partial/argocd" \
  github.com/argoproj/argo-cd/v3/cmd)
for command in argocd-repo-server argocd-cmp-server argocd-application-controller argocd-applicationset-controller; do
  ln -s argocd "$out.partial/$command"
done

# The install manifests and CRDs, and the two scripts Argo CD's Dockerfile puts beside the binary
# (the repo server runs gpg-wrapper.sh at its start), from the same module (read-only in the
# module cache).
cp -R "$argocd_dir/manifests" "$out.partial/manifests"
install -m 0755 "$argocd_dir/hack/gpg-wrapper.sh" "$argocd_dir/hack/git-verify-wrapper.sh" "$out.partial/"
chmod -R u+w "$out.partial/manifests"

rm -rf "$work"
touch "$out.partial/.complete"
rm -rf "$out" && mv "$out.partial" "$out"
step "done: $out"
echo "$out"
