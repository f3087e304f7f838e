// goparked: a Go test target (standard library only) whose goroutines are parked in known functions for known
// reasons: 5 in a chan receive (waitRecv), 3 in a select (waitSelect), 2 on a sync.Mutex held by main
// (waitMutex), 1 in time.Sleep (waitSleep), 1 in a net.Listener's Accept (waitAccept: IO wait), besides main in
// time.Sleep; $GOPARKED_EXTRA more in a chan receive (waitMore), for benchmarks. After two GCs (the second records how long each has waited), writes its goroutines as runtime.Stack gives
// them to $GOPARKED_TRACE when that is set, then prints "ready".
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"
)

//go:noinline
func waitRecv(c chan int) { <-c }

//go:noinline
func waitSelect(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

//go:noinline
func waitMutex(m *sync.Mutex) {
	m.Lock()
	m.Unlock()
}

//go:noinline
func waitSleep() { time.Sleep(time.Hour) }

//go:noinline
func waitMore(c chan int) { <-c }

//go:noinline
func waitAccept(l net.Listener) { l.Accept() }

func main() {
	c, a, b := make(chan int), make(chan int), make(chan int)
	var m sync.Mutex
	m.Lock()
	for i := 0; i < 5; i++ {
		go waitRecv(c)
	}
	for i := 0; i < 3; i++ {
		go waitSelect(a, b)
	}
	for i := 0; i < 2; i++ {
		go waitMutex(&m)
	}
	go waitSleep()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go waitAccept(l)
	extra := 0
	fmt.Sscan(os.Getenv("GOPARKED_EXTRA"), &extra)
	more := make(chan int)
	for i := 0; i < extra; i++ {
		go waitMore(more)
	}
	time.Sleep(300 * time.Millisecond)
	runtime.GC() // the second cycle records since when each goroutine waits (the first one does not)
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	if path := os.Getenv("GOPARKED_TRACE"); path != "" {
		buf := make([]byte, 1<<20)
		if err := os.WriteFile(path, buf[:runtime.Stack(buf, true)], 0o644); err != nil {
			panic(err)
		}
	}
	fmt.Println("ready")
	os.Stdout.Sync()
	time.Sleep(time.Hour)
	m.Unlock()
}
