// Package cluster runs a throw-away Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager) on loopback for the e2e tests.
//
// Everything lives in one temporary directory: data, keys, certificates,
// logs and the kubeconfig. Every process is started with a parent-death
// signal, recorded by PID and stopped by PID in Stop; nothing listens on
// anything but 127.0.0.1.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Options says where the binaries are and how to run them.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	BinDir string
	// Dir is the working directory; a new temporary directory when empty.
	Dir string
	// BeforeControllers runs once the API server is ready and before
	// kube-controller-manager starts, e.g. to install CRDs so the garbage
	// collector watches them from its first discovery.
	BeforeControllers func(c *Cluster) error
	// Log receives progress lines; nil means silent.
	Log func(format string, args ...any)
}

// Cluster is a running control plane.
type Cluster struct {
	Dir        string // working directory (removed by Stop unless kept)
	BinDir     string
	Kubeconfig string // path of an admin kubeconfig
	Server     string // https://127.0.0.1:<port>
	Token      string // bearer token of the admin user (group system:masters)
	CAFile     string // CA bundle of the serving certificate

	etcdURL string
	opts    Options
	ownDir  bool
	mu      sync.Mutex
	procs   []*proc
	stopped bool
}

// Start starts etcd, kube-apiserver and kube-controller-manager and waits
// until the API server reports ready. On error everything already started
// is stopped again.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	c = &Cluster{BinDir: o.BinDir, opts: o, Dir: o.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "flapp-e2e-"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return c, fmt.Errorf("binary missing: %w", err)
		}
	}
	if err := c.startEtcd(ctx); err != nil {
		return c, err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return c, err
	}
	if o.BeforeControllers != nil {
		if err := o.BeforeControllers(c); err != nil {
			return c, fmt.Errorf("before controllers: %w", err)
		}
	}
	if err := c.startControllerManager(ctx); err != nil {
		return c, err
	}
	return c, nil
}

func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Log != nil {
		c.opts.Log(format, args...)
	}
}
