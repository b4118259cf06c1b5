// Command testapp is the application the test cluster's gateway routes to: compiled, so that it
// is never the bottleneck under load.
//
//	GET /                200 "ok"
//	GET /slow?ms=N       200 after N ms (at most 120 s): a long request
//	GET /stream?chunks=N&intervalMs=M   a chunked response, one line every M ms
//	GET /healthz         200 (readiness)
//
// With IGNORE_SIGTERM=1 it ignores SIGTERM (a test of the kubelet's SIGKILL at the grace period).
//
// Every answer carries x-served-by (the pod's name, from the HOSTNAME the kubelet sets) and echoes
// the request's x-request-id, so a client can match each answer to what it sent.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const maxWait = 120 * time.Second

func main() {
	addr := ":8080"
	if v := os.Getenv("LISTEN"); v != "" {
		addr = v
	}
	if os.Getenv("IGNORE_SIGTERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 {
			http.Error(w, "ms must be a whole number of milliseconds", http.StatusBadRequest)
			return
		}
		wait := min(time.Duration(ms)*time.Millisecond, maxWait)
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		answer(w, r, host, fmt.Sprintf("slept %d ms\n", wait.Milliseconds()))
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		chunks, err1 := strconv.Atoi(r.URL.Query().Get("chunks"))
		interval, err2 := strconv.Atoi(r.URL.Query().Get("intervalMs"))
		if err1 != nil || err2 != nil || chunks < 0 || interval < 0 || time.Duration(chunks*interval)*time.Millisecond > maxWait {
			http.Error(w, "chunks and intervalMs must be whole numbers, chunks x intervalMs at most 120 s", http.StatusBadRequest)
			return
		}
		w.Header().Set("x-served-by", host)
		if id := r.Header.Get("x-request-id"); id != "" {
			w.Header().Set("x-request-id", id)
		}
		w.Header().Set("content-type", "text/plain")
		flusher, _ := w.(http.Flusher)
		for i := 0; i < chunks; i++ {
			if i > 0 {
				select {
				case <-time.After(time.Duration(interval) * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			_, _ = fmt.Fprintf(w, "chunk %d\n", i)
			if flusher != nil {
				flusher.Flush()
			}
		}
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { answer(w, r, host, "ok\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { answer(w, r, host, "ok\n") })
	server := &http.Server{
		Addr:              addr,
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
	}
	log.Printf("testapp listening on %s", addr)
	log.Fatal(server.ListenAndServe())
}

func answer(w http.ResponseWriter, r *http.Request, host, body string) {
	w.Header().Set("x-served-by", host)
	if id := r.Header.Get("x-request-id"); id != "" {
		w.Header().Set("x-request-id", id)
	}
	w.Header().Set("content-type", "text/plain")
	_, _ = w.Write([]byte(body))
}
