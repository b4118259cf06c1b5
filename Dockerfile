# The hc sidecar image: `gracegate hc` (the container's process) and `gracegate drain` (its preStop).
#   docker build -t gracegate:dev .
#   docker run --rm --network host gracegate:dev hc --envoy-admin http://127.0.0.1:15000
# The runtime stage holds the compiled CLI and zod only (the one package the hc and drain commands
# load); synth, plan and the other commands need cdk8s and are run from npm, not from this image.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
# Only src/ is compiled here (tests, examples and benchmarks are not part of the image).
RUN npx tsc -p tsconfig.json --rootDir . --outDir dist \
 && node bin/gracegate.js hc --help >/dev/null \
 && node bin/gracegate.js drain --help >/dev/null

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist/src ./dist/src
COPY --from=build /src/node_modules/zod ./node_modules/zod
# `gracegate` on PATH: the pod runs `gracegate hc …` and the preStop `gracegate drain …`.
RUN ln -s /app/bin/gracegate.js /usr/local/bin/gracegate \
 && chmod 0755 /app/bin/gracegate.js \
 && install -d -o 65532 -g 65532 /var/run/gracegate
# Non-root, numeric (runAsNonRoot can verify it); the same uid the manifests set.
USER 65532:65532
# Health port (all interfaces). The control port (18181) is 127.0.0.1 only and never published.
EXPOSE 18180
ENTRYPOINT ["gracegate"]
CMD ["hc"]
