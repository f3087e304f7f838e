// gopsy: a Go test target that serves the gops agent protocol of ../shared/notes/gops.md with the standard library
// only (the real gops module cannot be fetched here): it listens on 127.0.0.1 (an ephemeral port), writes the
// port file <config dir>/<pid> resolved as the agent does, prints "ready port=N" and answers one command per
// connection, printing "accepted" for each. With -no-agent it runs without listening (a plain Go binary).
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
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

func bytesForm(n uint64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KB", "MB", "GB", "TB", "PB"}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.2f%s (%d bytes)", v, units[u], n)
}

func reply(c net.Conn, cmd byte) {
	switch cmd {
	case 0x01:
		buf := make([]byte, 1<<20)
		c.Write(buf[:runtime.Stack(buf, true)])
	case 0x02:
		runtime.GC()
		c.Write([]byte("ok"))
	case 0x03:
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintf(c, "alloc: %s\ntotal-alloc: %s\nsys: %s\nlookups: %d\nmallocs: %d\nfrees: %d\nheap-alloc: %s\n"+
			"heap-sys: %s\nheap-objects: %d\nnum-gc: %d\n", bytesForm(m.Alloc), bytesForm(m.TotalAlloc),
			bytesForm(m.Sys), m.Lookups, m.Mallocs, m.Frees, bytesForm(m.HeapAlloc), bytesForm(m.HeapSys),
			m.HeapObjects, m.NumGC)
	case 0x04:
		fmt.Fprintf(c, "%s\n", runtime.Version())
	case 0x07:
		fmt.Fprintf(c, "goroutines: %d\nOS threads: %d\nGOMAXPROCS: %d\nnum CPU: %d\n", runtime.NumGoroutine(),
			runtime.NumGoroutine(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	case 0x10:
		var b [10]byte
		n, _ := c.Read(b[:])
		v, _ := binaryVarint(b[:n])
		old := debug.SetGCPercent(int(v))
		fmt.Fprintf(c, "New GC percent set to %d. Previous value was %d.\n", v, old)
	}
	// unknown commands: an empty reply and a clean close
}

func binaryVarint(b []byte) (int64, int) {
	var ux uint64
	var s uint
	for i, c := range b {
		if c < 0x80 {
			ux |= uint64(c) << s
			x := int64(ux >> 1)
			if ux&1 != 0 {
				x = ^x
			}
			return x, i + 1
		}
		ux |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

func main() {
	noAgent := flag.Bool("no-agent", false, "do not listen")
	flag.Parse()
	if *noAgent {
		fmt.Println("ready port=0")
		for {
			time.Sleep(time.Hour)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
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
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		fmt.Println("accepted") // tests check that merely looking at the process never connects
		var b [1]byte
		if n, _ := c.Read(b[:]); n == 1 {
			reply(c, b[0])
		}
		c.Close()
	}
}
