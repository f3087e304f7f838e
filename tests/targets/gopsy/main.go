// gopsy: a Go test target that serves the gops agent protocol of docs/protocols/gops.md with the standard library
// only (the real gops module cannot be fetched here): it listens on 127.0.0.1 (an ephemeral port; -listen chooses, as
// the agent's Options.Addr does), writes the
// port file <config dir>/<pid> resolved as the agent does, prints "ready port=N" and answers one command per
// connection, serially, printing "accepted" for each. The replies are the agent's own (same formats, same calls:
// pprof goroutine dump at debug=2, WriteHeapProfile, StartCPUProfile, the memstats lines, setgc's varint).
//
// The program around the agent sits in known places, for tests: parkedReceive blocks on a channel receive,
// parkedSleep in time.Sleep, growHeap retains 16 MiB at start and growSlowly 64 KiB every 200 ms up to 48 MiB more,
// so that the heap profile shows their sites (exactly: MemProfileRate is 1, every allocation is profiled), and
// burnCPU spins (in burnLeaf) while a CPU profile is being taken.
//
// Flags and environment:
//
//	-no-agent        run without listening (a plain Go binary)
//	-listen ADDR     the address to listen on, as the agent's Options.Addr ("[::1]:0", ":0" for every address)
//	-old-memstats    memstats with the field names of agents <= v0.3.28 (stack-mspan-inuse, ..., no buck-hash-sys)
//	-fail MODE       every request fails as MODE: "hang" (reads the command, never replies, never closes: what the
//	                 real agent does when a handler errs), "garbage" (a short reply of bytes no agent sends, then
//	                 close), "huge" (endless bytes until the client goes away)
//	-app-profiling   the application runs its own CPU profile, so the agent's 0x06 fails as the real one does:
//	                 an error on stderr, no reply, no close
//	GOPSY_CPU_SECONDS  the CPU profile's duration in seconds (test knob; the real agent always takes 30)
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"
)

// configDir resolves the gops directory as the agent does: $GOPS_CONFIG_DIR, $XDG_CONFIG_HOME/gops, ~/.config/gops.
func configDir() string {
	if d := os.Getenv("GOPS_CONFIG_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "gops")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".config", "gops")
}

// formatBytes is the agent's: "N bytes" below 1 KiB, else "%0.2f<unit> (N bytes)" in powers of 1024.
func formatBytes(val uint64) string {
	units := []string{" bytes", "KB", "MB", "GB", "TB", "PB"}
	var i int
	var target uint64
	for i = range units {
		target = 1 << uint(10*(i+1))
		if val < target {
			break
		}
	}
	if i > 0 {
		return fmt.Sprintf("%0.2f%s (%d bytes)", float64(val)/(float64(target)/1024), units[i], val)
	}
	return fmt.Sprintf("%d bytes", val)
}

func writeMemStats(w io.Writer, old bool) {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	fmt.Fprintf(w, "alloc: %v\n", formatBytes(s.Alloc))
	fmt.Fprintf(w, "total-alloc: %v\n", formatBytes(s.TotalAlloc))
	fmt.Fprintf(w, "sys: %v\n", formatBytes(s.Sys))
	fmt.Fprintf(w, "lookups: %v\n", s.Lookups)
	fmt.Fprintf(w, "mallocs: %v\n", s.Mallocs)
	fmt.Fprintf(w, "frees: %v\n", s.Frees)
	fmt.Fprintf(w, "heap-alloc: %v\n", formatBytes(s.HeapAlloc))
	fmt.Fprintf(w, "heap-sys: %v\n", formatBytes(s.HeapSys))
	fmt.Fprintf(w, "heap-idle: %v\n", formatBytes(s.HeapIdle))
	fmt.Fprintf(w, "heap-in-use: %v\n", formatBytes(s.HeapInuse))
	fmt.Fprintf(w, "heap-released: %v\n", formatBytes(s.HeapReleased))
	fmt.Fprintf(w, "heap-objects: %v\n", s.HeapObjects)
	fmt.Fprintf(w, "stack-in-use: %v\n", formatBytes(s.StackInuse))
	fmt.Fprintf(w, "stack-sys: %v\n", formatBytes(s.StackSys))
	if old {
		fmt.Fprintf(w, "stack-mspan-inuse: %v\n", formatBytes(s.MSpanInuse))
		fmt.Fprintf(w, "stack-mspan-sys: %v\n", formatBytes(s.MSpanSys))
		fmt.Fprintf(w, "stack-mcache-inuse: %v\n", formatBytes(s.MCacheInuse))
		fmt.Fprintf(w, "stack-mcache-sys: %v\n", formatBytes(s.MCacheSys))
	} else {
		fmt.Fprintf(w, "mspan-in-use: %v\n", formatBytes(s.MSpanInuse))
		fmt.Fprintf(w, "mspan-sys: %v\n", formatBytes(s.MSpanSys))
		fmt.Fprintf(w, "mcache-in-use: %v\n", formatBytes(s.MCacheInuse))
		fmt.Fprintf(w, "mcache-sys: %v\n", formatBytes(s.MCacheSys))
		fmt.Fprintf(w, "buck-hash-sys: %v\n", formatBytes(s.BuckHashSys))
	}
	fmt.Fprintf(w, "other-sys: %v\n", formatBytes(s.OtherSys))
	fmt.Fprintf(w, "gc-sys: %v\n", formatBytes(s.GCSys))
	fmt.Fprintf(w, "next-gc: when heap-alloc >= %v\n", formatBytes(s.NextGC))
	lastGC := "-"
	if s.LastGC != 0 {
		lastGC = fmt.Sprint(time.Unix(0, int64(s.LastGC)))
	}
	fmt.Fprintf(w, "last-gc: %v\n", lastGC)
	fmt.Fprintf(w, "gc-pause-total: %v\n", time.Duration(s.PauseTotalNs))
	fmt.Fprintf(w, "gc-pause: %v\n", s.PauseNs[(s.NumGC+255)%256])
	fmt.Fprintf(w, "gc-pause-end: %v\n", s.PauseEnd[(s.NumGC+255)%256])
	fmt.Fprintf(w, "num-gc: %v\n", s.NumGC)
	fmt.Fprintf(w, "num-forced-gc: %v\n", s.NumForcedGC)
	fmt.Fprintf(w, "gc-cpu-fraction: %v\n", s.GCCPUFraction)
	fmt.Fprintf(w, "enable-gc: %v\n", s.EnableGC)
	fmt.Fprintf(w, "debug-gc: %v\n", s.DebugGC)
}

// handle answers one command as the agent does; an error means: log it, leave the connection open (no EOF).
func handle(c net.Conn, cmd byte, old bool, cpuSeconds float64) error {
	switch cmd {
	case 0x01:
		return pprof.Lookup("goroutine").WriteTo(c, 2)
	case 0x02:
		runtime.GC()
		_, err := c.Write([]byte("ok"))
		return err
	case 0x03:
		writeMemStats(c, old)
	case 0x04:
		fmt.Fprintf(c, "%v\n", runtime.Version())
	case 0x05:
		return pprof.WriteHeapProfile(c)
	case 0x06:
		if err := pprof.StartCPUProfile(c); err != nil {
			return err
		}
		var stop int32
		go burnCPU(&stop)
		time.Sleep(time.Duration(cpuSeconds * float64(time.Second)))
		atomic.StoreInt32(&stop, 1)
		pprof.StopCPUProfile()
	case 0x07:
		fmt.Fprintf(c, "goroutines: %v\n", runtime.NumGoroutine())
		fmt.Fprintf(c, "OS threads: %v\n", pprof.Lookup("threadcreate").Count())
		fmt.Fprintf(c, "GOMAXPROCS: %v\n", runtime.GOMAXPROCS(0))
		fmt.Fprintf(c, "num CPU: %v\n", runtime.NumCPU())
	case 0x10:
		perc, err := binary.ReadVarint(bufio.NewReader(c))
		if err != nil {
			return err
		}
		fmt.Fprintf(c, "New GC percent set to %v. Previous value was %v.\n", perc, debug.SetGCPercent(int(perc)))
	}
	// unknown commands: an empty reply and a clean close
	return nil
}

// ---- the application around the agent ----

//go:noinline
func parkedReceive(ch <-chan int) int { return <-ch }

//go:noinline
func parkedSleep() {
	for {
		time.Sleep(time.Hour)
	}
}

var retained [][]byte

//go:noinline
func growHeap() {
	for i := 0; i < 16; i++ {
		retained = append(retained, make([]byte, 1<<20))
	}
	runtime.GC() // heap profiles show the heap as of the last GC
}

//go:noinline
func growSlowly() {
	for len(retained) < 16+768 { // 64 KiB every 200 ms, up to 16 + 48 MiB
		time.Sleep(200 * time.Millisecond)
		retained = append(retained, make([]byte, 64<<10))
	}
	select {}
}

var sink uint64

//go:noinline
func burnLeaf() {
	for i := 0; i < 100000; i++ {
		sink += uint64(i) ^ (sink >> 3)
	}
}

// burnCPU gives a CPU profile something to find (it runs only while the agent profiles): burnLeaf's samples,
// with burnCPU as their caller.
//
//go:noinline
func burnCPU(stop *int32) {
	for atomic.LoadInt32(stop) == 0 {
		burnLeaf()
	}
}

func main() {
	runtime.MemProfileRate = 1 // every allocation in the heap profile, so that tests can count growHeap's bytes
	noAgent := flag.Bool("no-agent", false, "do not listen")
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on")
	old := flag.Bool("old-memstats", false, "memstats field names of agents <= v0.3.28")
	fail := flag.String("fail", "", "every request fails: hang, garbage or huge")
	appProfiling := flag.Bool("app-profiling", false, "the application runs its own CPU profile")
	flag.Parse()
	cpuSeconds := 30.0
	if v, err := strconv.ParseFloat(os.Getenv("GOPSY_CPU_SECONDS"), 64); err == nil && v > 0 {
		cpuSeconds = v
	}

	ch := make(chan int)
	go parkedReceive(ch)
	go parkedSleep()
	growHeap()
	go growSlowly()
	if *appProfiling {
		pprof.StartCPUProfile(io.Discard)
	}

	if *noAgent {
		fmt.Println("ready port=0")
		select {}
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		os.Exit(1)
	}
	port := l.Addr().(*net.TCPAddr).Port
	dir := configDir()
	os.MkdirAll(dir, 0755)
	portfile := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	os.WriteFile(portfile, []byte(strconv.Itoa(port)), 0644)
	defer os.Remove(portfile)
	fmt.Printf("ready port=%d\n", port)
	var leaked []net.Conn // connections the agent never closes stay open (no finalizer closes them)
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		fmt.Println("accepted") // tests check that merely looking at the process never connects
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			fmt.Fprintf(os.Stderr, "gops: %v\n", err)
			continue
		}
		switch *fail {
		case "hang":
			leaked = append(leaked, c)
			continue
		case "garbage":
			c.Write([]byte("\x00\xffnot\x1b[2Jwhat you asked for\x00"))
			c.Close()
			continue
		case "huge":
			junk := make([]byte, 1<<16)
			for i := range junk {
				junk[i] = byte('A' + i%26)
			}
			for {
				if _, err := c.Write(junk); err != nil {
					break
				}
			}
			c.Close()
			continue
		}
		if err := handle(c, b[0], *old, cpuSeconds); err != nil {
			fmt.Fprintf(os.Stderr, "gops: %v\n", err)
			leaked = append(leaked, c)
			continue
		}
		c.Close()
	}
}
