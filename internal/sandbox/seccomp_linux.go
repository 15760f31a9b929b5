//go:build linux && (amd64 || arm64)

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// x32SyscallBit is __X32_SYSCALL_BIT.
const x32SyscallBit = 0x40000000

// denied are the system calls the filter refuses: starting a program, and
// making a socket (without one, connect has nothing to connect; it is
// refused too, for a descriptor inherited from the parent).
var denied = []uint32{unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_SOCKET, unix.SYS_SOCKETPAIR, unix.SYS_CONNECT}

// denyExecAndSockets installs a seccomp filter on every thread of the
// process (SECCOMP_FILTER_FLAG_TSYNC; threads made later inherit it) that
// answers the denied calls EPERM and allows every other. A call made
// through another architecture's table (a 32-bit call on amd64) or the x32
// ABI is refused outright, since its numbers differ. no_new_privs is required to install
// a filter without privileges, and changes nothing else here: the process
// starts nothing.
func denyExecAndSockets() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	errno := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	prog := []unix.SockFilter{
		load(4), // seccomp_data.arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, Jf: 0, K: auditArch},
		ret(errno),
		load(0), // seccomp_data.nr
		// The x32 ABI shares amd64's audit arch and marks its numbers
		// with this bit; they differ from the ones below (execve is 520):
		// refused outright. No call of either architecture is numbered
		// this high.
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: x32SyscallBit},
		ret(errno),
	}
	for _, nr := range denied {
		prog = append(prog,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: nr},
			ret(errno))
	}
	prog = append(prog, ret(unix.SECCOMP_RET_ALLOW))
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}

func load(offset uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: offset}
}

func ret(action uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: action}
}
