# flapp-services as a container KRM function (kustomize `container:`, kpt `image:`).
#
# The image holds the static binary and a minimal /etc/passwd and /etc/group
# (so that `--user nobody`, which kustomize and kpt pass, resolves), nothing
# else: no shell, no libc, no base image. The binary is built beforehand by the
# project's own `go build` (CGO off, -trimpath, version stamped) for each
# platform into bin/<os>_<arch>/flapp-services; this file only packs it.
#
#   make image       # local platform, local engine, tagged $(IMAGE)
#   make image-oci   # linux/amd64 + linux/arm64 index, bin/flapp-services-oci.tar
#
# With docker alone (see DEVELOPMENT.md, "Container image"):
#   make image-bins PLATFORMS=linux/amd64
#   docker build --platform linux/amd64 --build-arg VERSION=... --build-arg REVISION=... -t flapp-services .
FROM scratch

ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/fedlearner/flapp-services
# SPDX expression of the project's license (LICENSE).
ARG LICENSES=Apache-2.0

LABEL org.opencontainers.image.title="flapp-services" \
      org.opencontainers.image.description="KRM function: the Services of fedlearner FLApps" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="${LICENSES}"

COPY image/passwd image/group /etc/
COPY bin/${TARGETOS}_${TARGETARCH}/flapp-services /usr/local/bin/flapp-services

# nonroot (65532) by default; kustomize and kpt override it with `--user nobody`.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/flapp-services"]
