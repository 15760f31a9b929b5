# flapp-services as a container KRM function (kustomize `container:`, kpt `image:`).
# Static binary, no shell, non-root: a function needs nothing else.
FROM golang:1.26 AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY main.go ./
COPY render/ render/
COPY fn/ fn/
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/flapp-services .

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/flapp-services /usr/local/bin/flapp-services
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/flapp-services"]
