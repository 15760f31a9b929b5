package cli

import "runtime/debug"

// develVersion is main.version when no -ldflags -X stamped it.
const develVersion = "dev"

// resolveVersion is the version the binary reports: the one stamped with
// -ldflags -X main.version=... (make build, the image, releases), else the
// module version Go records in the binary (go install ...@v0.1.0; go build
// in a clone records a pseudo-version from the commit, +dirty when the tree
// has changes), else the commit alone, else dev.
func resolveVersion(stamped string, info *debug.BuildInfo, ok bool) string {
	if stamped != "" && stamped != develVersion {
		return stamped
	}
	if !ok || info == nil {
		return develVersion
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return develVersion
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified {
		revision += "+dirty"
	}
	return revision
}

// binaryVersion resolves the version from this binary's build information.
func binaryVersion(stamped string) string {
	info, ok := debug.ReadBuildInfo()
	return resolveVersion(stamped, info, ok)
}
