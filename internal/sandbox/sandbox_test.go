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
	// The x32 ABI's socket: amd64's audit arch, the number with the x32 bit.
	_, _, errno := syscall.RawSyscall(syscall.SYS_SOCKET|0x40000000, syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	fmt.Println("x32 socket:", describe(errnoOf(errno)))
	// A socket the parent made, inherited as descriptor 3.
	fmt.Println("inherited connect:", describe(syscall.Connect(3, listener())))
	_, err = http.Get("http://" + os.Getenv("LISTENER") + "/x")
	fmt.Println("http:", err != nil && strings.Contains(err.Error(), "flapp-services fetches nothing"))
	return 0
}

func errnoOf(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// listener is LISTENER's address, for connect(2).
func listener() syscall.Sockaddr {
	addr, err := net.ResolveTCPAddr("tcp", os.Getenv("LISTENER"))
	if err != nil {
		panic(err)
	}
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	return sa
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
	// An unconnected TCP socket, made before the filter: connect(2) on it
	// is refused too.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	inherited := os.NewFile(uintptr(fd), "socket")
	defer func() { _ = inherited.Close() }()
	cmd.ExtraFiles = []*os.File{inherited}
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
		assert.Contains(t, got, "inherited connect: EPERM\n", "connect on a socket made before the filter")
		if runtime.GOARCH == "amd64" {
			assert.Contains(t, got, "x32 socket: EPERM\n", "the x32 ABI's socket call")
		}
	}
	assert.Empty(t, accepted, "the listener was reached")
}
