package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// staleReadProxy puts, in front of the first endpoint, the deliberately broken variant: a read
// cache that is never invalidated. A GET of one object is answered from the last answer for
// that path when it is less than 2 s old; everything else passes through. A write followed by a
// read within 2 s then reads the old value: a history that is not linearizable, which the checker
// must report.
func staleReadProxy(eps []endpoint) []endpoint {
	target := eps[0]
	up, err := newClient(target, "", 10*time.Second)
	if err != nil {
		panic(err)
	}
	type cached struct {
		code int
		body []byte
		at   time.Time
	}
	var mu sync.Mutex
	cache := map[string]cached{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		single := r.Method == "GET" && r.URL.RawQuery == "" && strings.Count(r.URL.Path, "/") == 6
		if single {
			mu.Lock()
			c, ok := cache[r.URL.Path]
			mu.Unlock()
			if ok && time.Since(c.at) < 2*time.Second {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.code)
				_, _ = w.Write(c.body)
				return
			}
		}
		body, _ := io.ReadAll(r.Body)
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target.URL+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		req.Header = r.Header.Clone()
		if target.Token != "" {
			req.Header.Set("Authorization", "Bearer "+target.Token)
		}
		resp, err := up.http.Do(req)
		if err != nil {
			// The connection to the server broke: so does the client's.
			panic(http.ErrAbortHandler)
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		if single && resp.StatusCode == 200 {
			data, _ := io.ReadAll(resp.Body)
			mu.Lock()
			cache[r.URL.Path] = cached{code: resp.StatusCode, body: data, at: time.Now()}
			mu.Unlock()
			_, _ = w.Write(data)
			return
		}
		// Streams (watches) are copied as they come.
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})
	go func() { _ = http.Serve(l, handler) }()
	return []endpoint{{URL: "http://" + l.Addr().String()}}
}
