// Command fluxoci is the flux CLI's `push artifact`, `tag artifact` and
// `pull artifact`, for the release suite (test/e2e/clients/release), which
// runs it as `flux` on the example workflow's steps.
//
// The real flux CLI (github.com/fluxcd/flux2/v2 v2.9.5) pulls in every cloud
// SDK, Helm and go-git; these three commands are a thin layer over
// github.com/fluxcd/pkg/oci, and the artifact is whatever that library makes.
// So this tool is that layer, copied from flux2 v2.9.5's cmd/flux
// (push_artifact.go, tag_artifact.go, pull_artifact.go) with the flags the
// workflow uses, on the library versions flux v2.9.5 pins (go.mod): the same
// manifest, config and layer media types, annotations and tarball. Left out:
// --provider (cloud logins), --annotations, --resolve-symlinks, stdin paths,
// --debug and yaml output.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fluxcd/pkg/oci"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/spf13/pflag"
)

// excludeOCI is flux's default --ignore-paths (cmd/flux/build_artifact.go).
var excludeOCI = append(strings.Split(sourceignore.ExcludeVCS, ","), strings.Split(sourceignore.ExcludeExt, ",")...)

// timeout is flux's default --timeout.
const timeout = 5 * time.Minute

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "✗", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 || args[1] != "artifact" {
		return errors.New("usage: flux {push|tag|pull} artifact oci://REPO:TAG [flags]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	switch args[0] {
	case "push":
		return push(ctx, args[2:])
	case "tag":
		return tag(ctx, args[2:])
	case "pull":
		return pull(ctx, args[2:])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// artifactURL parses the one positional argument, oci://...
func artifactURL(fs *pflag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", errors.New("artifact URL is required")
	}
	return oci.ParseArtifactURL(fs.Arg(0))
}

func push(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("push artifact", pflag.ContinueOnError)
	path := fs.StringP("path", "f", "", "path to the directory where the Kubernetes manifests are located")
	source := fs.String("source", "", "the source address, e.g. the Git URL")
	revision := fs.String("revision", "", "the source revision in the format '<branch|tag>@sha1:<commit-sha>'")
	creds := fs.String("creds", "", "credentials for OCI registry in the format <username>[:<password>]")
	ignorePaths := fs.StringSlice("ignore-paths", excludeOCI, "set paths to ignore in .gitignore format")
	output := fs.StringP("output", "o", "", "the format in which the artifact digest should be printed: json")
	reproducible := fs.Bool("reproducible", false, "set the created timestamp to '1970-01-01T00:00:00Z'")
	insecure := fs.Bool("insecure-registry", false, "allows artifacts to be pushed without TLS")
	url, err := artifactURL(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *source == "":
		return errors.New("--source is required")
	case *revision == "":
		return errors.New("--revision is required")
	case *path == "":
		return fmt.Errorf("invalid path %q", *path)
	case *output != "" && *output != "json":
		return fmt.Errorf("--output %q: only json is supported", *output)
	}
	ref, err := name.ParseReference(url)
	if err != nil {
		return err
	}
	if _, err := os.Stat(*path); err != nil {
		return fmt.Errorf("invalid path '%s', must point to an existing directory or file: %w", *path, err)
	}
	meta := oci.Metadata{Source: *source, Revision: *revision, Annotations: map[string]string{}}
	if *reproducible {
		meta.Created = time.Unix(0, 0).Format(time.RFC3339)
	}

	var authenticator authn.Authenticator
	opts := oci.DefaultOptions()
	if *creds != "" {
		if authenticator, err = oci.GetAuthFromCredentials(*creds); err != nil {
			return fmt.Errorf("could not login with credentials: %w", err)
		}
		opts = append(opts, crane.WithAuth(authenticator))
	}
	backoff := remote.Backoff{Duration: 1.0 * time.Second, Factor: 3, Jitter: 0.1, Steps: 10, Cap: timeout}
	if authenticator == nil {
		if authenticator, err = authn.DefaultKeychain.Resolve(ref.Context()); err != nil {
			return err
		}
	}
	transportOpts, err := oci.WithRetryTransport(ctx, ref, authenticator, backoff,
		[]string{ref.Context().Scope(transport.PushScope)}, *insecure)
	if err != nil {
		return fmt.Errorf("error setting up transport: %w", err)
	}
	opts = append(opts, transportOpts, oci.WithRetryBackOff(backoff))
	if *insecure {
		opts = append(opts, crane.Insecure)
	}
	if *output == "" {
		fmt.Fprintf(os.Stderr, "► pushing artifact to %s\n", url)
	}
	digestURL, err := oci.NewClient(opts).Push(ctx, url, *path,
		oci.WithPushMetadata(meta), oci.WithPushIgnorePaths(*ignorePaths...))
	if err != nil {
		return fmt.Errorf("pushing artifact failed: %w", err)
	}
	digest, err := name.NewDigest(digestURL)
	if err != nil {
		return fmt.Errorf("artifact digest parsing failed: %w", err)
	}
	tagRef, err := name.NewTag(url)
	if err != nil {
		return fmt.Errorf("artifact tag parsing failed: %w", err)
	}
	if *output == "" {
		fmt.Fprintf(os.Stderr, "✔ artifact successfully pushed to %s\n", digestURL)
		return nil
	}
	info := struct {
		URL        string `json:"url"`
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
		Digest     string `json:"digest"`
	}{
		URL:        "oci://" + digestURL,
		Repository: digest.Repository.Name(),
		Tag:        tagRef.TagStr(),
		Digest:     digest.DigestStr(),
	}
	b, err := json.MarshalIndent(&info, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}

func tag(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("tag artifact", pflag.ContinueOnError)
	tags := fs.StringSlice("tag", nil, "tag name")
	creds := fs.String("creds", "", "credentials for OCI registry in the format <username>[:<password>]")
	url, err := artifactURL(fs, args)
	if err != nil {
		return err
	}
	if len(*tags) < 1 {
		return errors.New("--tag is required")
	}
	client := oci.NewClient(oci.DefaultOptions())
	if *creds != "" {
		if err := client.LoginWithCredentials(*creds); err != nil {
			return fmt.Errorf("could not login with credentials: %w", err)
		}
	}
	for _, t := range *tags {
		img, err := client.Tag(ctx, url, t)
		if err != nil {
			return fmt.Errorf("tagging artifact failed: %w", err)
		}
		fmt.Fprintf(os.Stderr, "✔ artifact tagged as %s\n", img)
	}
	return nil
}

func pull(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("pull artifact", pflag.ContinueOnError)
	output := fs.StringP("output", "o", "", "path where the artifact content should be extracted")
	creds := fs.String("creds", "", "credentials for OCI registry in the format <username>[:<password>]")
	url, err := artifactURL(fs, args)
	if err != nil {
		return err
	}
	if *output == "" {
		return errors.New("invalid output path")
	}
	client := oci.NewClient(oci.DefaultOptions())
	if *creds != "" {
		if err := client.LoginWithCredentials(*creds); err != nil {
			return fmt.Errorf("could not login with credentials: %w", err)
		}
	}
	meta, err := client.Pull(ctx, url, *output)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "✔ source %s\n✔ revision %s\n✔ digest %s\n", meta.Source, meta.Revision, meta.Digest)
	return nil
}
