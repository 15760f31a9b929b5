package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The components of the control plane, started in this order.

func (c *Cluster) startEtcd(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		ports, err := freePorts(2)
		if err != nil {
			return err
		}
		client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		dataDir := filepath.Join(c.Dir, "etcd-data")
		_ = os.RemoveAll(dataDir)
		p, err := c.start("etcd",
			"--name=e2e",
			"--data-dir="+dataDir,
			"--listen-client-urls="+client,
			"--advertise-client-urls="+client,
			"--listen-peer-urls="+peer,
			"--initial-advertise-peer-urls="+peer,
			"--initial-cluster=e2e="+peer,
			"--initial-cluster-state=new",
			"--unsafe-no-fsync",
			"--quota-backend-bytes=1073741824",
			"--log-level=warn",
		)
		if err != nil {
			return err
		}
		hc := &http.Client{Timeout: 2 * time.Second}
		lastErr = c.waitFor(ctx, p, "etcd /health", 60*time.Second, func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
			if err != nil {
				return err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			body := readAll(resp)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"health":"true"`) {
				return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, body)
			}
			return nil
		})
		if lastErr == nil {
			c.etcdURL = client
			return nil
		}
		c.stopProc(p)
		if ctx.Err() != nil {
			return lastErr
		}
	}
	return lastErr
}

func readAll(resp *http.Response) string {
	defer func() { _ = resp.Body.Close() }()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.String()
}

func writeServiceAccountKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	saKey := filepath.Join(c.Dir, "sa.key")
	if err := writeServiceAccountKey(saKey); err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	c.Token = hex.EncodeToString(tok)
	tokenFile := filepath.Join(c.Dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(c.Token+`,e2e-admin,e2e-admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	certDir := filepath.Join(c.Dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		c.Server = "https://127.0.0.1:" + strconv.Itoa(port)
		p, err := c.start("kube-apiserver",
			"--etcd-servers="+c.etcdURL,
			"--etcd-prefix=/registry",
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(port),
			"--cert-dir="+certDir,
			"--token-auth-file="+tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-key-file="+saKey,
			"--service-account-signing-key-file="+saKey,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-cluster-ip-range=10.96.0.0/16",
			"--endpoint-reconciler-type=none",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
		)
		if err != nil {
			return err
		}
		lastErr = c.waitFor(ctx, p, "kube-apiserver /readyz", 120*time.Second, func() error {
			return c.checkReady(ctx)
		})
		if lastErr == nil {
			break
		}
		c.stopProc(p)
		if !strings.Contains(lastErr.Error(), "address already in use") {
			return lastErr
		}
	}
	if lastErr != nil {
		return lastErr
	}
	return c.writeKubeconfig()
}

// checkReady asks /readyz with the admin token. The serving certificate is
// self-signed and written by the API server into its cert dir; until the
// server is up the CA is not there, so the first checks skip verification
// and the kubeconfig then pins the CA.
func (c *Cluster) checkReady(ctx context.Context) error {
	hc := &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, Proxy: nil}, //nolint:gosec // loopback, self-signed
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Server+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	body := readAll(resp)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %d %s", resp.StatusCode, strings.TrimSpace(body))
	}
	return nil
}

func (c *Cluster) writeKubeconfig() error {
	c.CAFile = filepath.Join(c.Dir, "certs", "apiserver.crt")
	if _, err := os.Stat(c.CAFile); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e-admin
current-context: e2e
`, c.Server, c.CAFile, c.Token)
	return os.WriteFile(c.Kubeconfig, []byte(kc), 0o600)
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	p, err := c.start("kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig,
		"--controllers=garbagecollector,namespace",
		"--leader-elect=false",
		"--secure-port=0",
		"--concurrent-gc-syncs=5",
	)
	if err != nil {
		return err
	}
	// The controller manager has no serving port here; wait until it logs
	// that the garbage collector has synced its caches.
	return c.waitFor(ctx, p, "garbage collector caches", 120*time.Second, func() error {
		b, err := os.ReadFile(p.log)
		if err != nil {
			return err
		}
		for _, marker := range []string{"all resource monitors have synced", "not all resource monitors could be synced"} {
			if bytes.Contains(b, []byte(marker)) {
				return nil
			}
		}
		return errors.New("garbage collector not synced yet")
	})
}
