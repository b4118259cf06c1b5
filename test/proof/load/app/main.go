// Command load-app is the upstream of the load scenario (test/e2e/load): compiled, so that it is
// never the bottleneck, and it logs every request it saw by its x-request-id, so that a lost
// request is counted by id and not estimated from counters.
//
//	GET /?ms=N   200 after N ms (0 or absent: at once); any path is served the same way
//
// One line per request to the -log file, written when the request ends:
//
//	<x-request-id> <start unix ms> <end unix ms> <done|aborted>
//
// `aborted` means the client side (Envoy) went away before the answer was written. The log is
// buffered and flushed every 100 ms, and on SIGTERM/SIGINT before the process exits.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type requestLog struct {
	mu sync.Mutex
	w  *bufio.Writer
	f  *os.File
}

func (l *requestLog) line(id string, start, end time.Time, outcome string) {
	l.mu.Lock()
	fmt.Fprintf(l.w, "%s %d %d %s\n", id, start.UnixMilli(), end.UnixMilli(), outcome)
	l.mu.Unlock()
}

func (l *requestLog) flush() {
	l.mu.Lock()
	_ = l.w.Flush()
	l.mu.Unlock()
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	logFile := flag.String("log", "", "request log file")
	flag.Parse()
	f, err := os.Create(*logFile)
	if err != nil {
		log.Fatal(err)
	}
	rl := &requestLog{w: bufio.NewWriterSize(f, 1<<20), f: f}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			rl.flush()
		}
	}()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("x-request-id")
		if id == "" {
			id = "-"
		}
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		if ms > 0 {
			select {
			case <-time.After(time.Duration(min(ms, 120_000)) * time.Millisecond):
			case <-r.Context().Done():
				rl.line(id, start, time.Now(), "aborted")
				return
			}
		}
		w.Header().Set("x-request-id", id)
		w.Header().Set("content-type", "text/plain")
		_, werr := w.Write([]byte("ok\n"))
		outcome := "done"
		if werr != nil {
			outcome = "aborted"
		}
		rl.line(id, start, time.Now(), outcome)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	// The harness reads the bound port from this line.
	fmt.Printf("listening %s\n", ln.Addr().String())
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		rl.flush()
		_ = rl.f.Sync()
		os.Exit(0)
	}()
	log.Fatal(server.Serve(ln))
}
