package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fenced half of each test runs in a child: the filter lasts for the
// life of a process, and this one must go on starting programs.
const childEnv = "FLAPP_SERVICES_SANDBOX_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child enters the sandbox, then tries what it must not do, each with a
// path or address that would work outside it, and prints what happened.
func child() int {
	filtered := Enter()
	fmt.Println("filtered:", filtered)
	fmt.Println("PATH:", os.Getenv("PATH"))
	_, err := exec.LookPath("sh")
	fmt.Println("lookpath:", err != nil)
	fmt.Println("exec:", describe(exec.Command("/bin/sh", "-c", "exit 0").Run()))
	_, err = net.Dial("tcp", os.Getenv("LISTENER"))
	fmt.Println("dial:", describe(err))
	_, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	fmt.Println("socket:", describe(err))
	_, err = http.Get("http://" + os.Getenv("LISTENER") + "/x")
	fmt.Println("http:", err != nil && strings.Contains(err.Error(), "flapp-services fetches nothing"))
	return 0
}

func describe(err error) string {
	switch {
	case err == nil:
		return "allowed"
	case errors.Is(err, syscall.EPERM):
		return "EPERM"
	}
	return err.Error()
}

func TestEnter(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "LISTENER="+l.Addr().String())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got := string(out)
	kernel := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")

	assert.Contains(t, got, fmt.Sprintf("filtered: %t\n", kernel))
	assert.Contains(t, got, "PATH: \n")
	assert.Contains(t, got, "lookpath: true\n", "a program found by name")
	assert.Contains(t, got, "http: true\n", "an HTTP request not refused by the transport")
	if kernel {
		assert.Contains(t, got, "exec: EPERM\n", "a program started by absolute path")
		assert.Contains(t, got, "dial: EPERM\n", "a TCP socket to a live listener")
		assert.Contains(t, got, "socket: EPERM\n", "a Unix socket")
	}
	assert.Empty(t, accepted, "the listener was reached")
}
