module github.com/fedlearner/flapp-services/test/e2e/tools/fluxoci

go 1.26.8

require (
	github.com/fluxcd/pkg/oci v0.68.1
	github.com/fluxcd/pkg/sourceignore v0.18.0
	github.com/google/go-containerregistry v0.21.6
	github.com/spf13/pflag v1.0.10
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/cyphar/filepath-securejoin v0.6.1 // indirect
	github.com/docker/cli v29.4.3+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.5 // indirect
	github.com/fluxcd/pkg/tar v1.2.0 // indirect
	github.com/fluxcd/pkg/version v0.16.0 // indirect
	github.com/klauspost/compress v1.18.6 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)
