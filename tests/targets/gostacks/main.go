// gostacks: a Go test target (standard library only) whose OS threads sit in known functions: a goroutine
// spinning in a frameless leaf (spinLeaf <- spinMiddle <- a closure), and goroutines locked to their threads and
// blocked in read(2) on a pipe (blockedRead <- reader). Go binaries carry their unwind tables only in
// .debug_frame and their DWARF compressed, without .debug_aranges. Prints "ready" when every thread is in place,
// after writing its goroutines' stacks as runtime.Stack gives them to $GOSTACKS_TRACE when that is set.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

var sink int

//go:noinline
func spinLeaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i ^ (s >> 3)
	}
	return s
}

//go:noinline
func spinMiddle() {
	for {
		sink += spinLeaf(1000000)
	}
}

//go:noinline
func blockedRead(fd int) {
	var b [1]byte
	syscall.Read(fd, b[:])
}

//go:noinline
func reader(fd int, ready chan<- bool) {
	runtime.LockOSThread()
	ready <- true
	blockedRead(fd)
}

func main() {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	go func() { spinMiddle() }()
	ready := make(chan bool)
	for i := 0; i < 2; i++ {
		go reader(p[0], ready)
		<-ready
	}
	time.Sleep(200 * time.Millisecond)
	// The program's own view of its goroutines (runtime.Stack, from the same tables a traceback reads), for tests.
	if path := os.Getenv("GOSTACKS_TRACE"); path != "" {
		buf := make([]byte, 1<<20)
		if err := os.WriteFile(path, buf[:runtime.Stack(buf, true)], 0o644); err != nil {
			panic(err)
		}
	}
	fmt.Println("ready")
	os.Stdout.Sync()
	time.Sleep(time.Hour)
}
