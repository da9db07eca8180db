// Command wakeup measures what one goroutine started per request costs
// an HTTP/1.1 round trip over loopback, the cost behind gosr serve's
// REST overhead on small VMs (docs/serving.md, "Overhead per request").
//
//	go run ./serve/testdata/wakeup [-n 20000] [-rounds 3]
//
// It starts itself as three servers in child processes, each answering
// GET /v2/health/live with an empty 200, and times a one-goroutine
// client (the request written, the response read, nothing else)
// against each in turn: "raw" reads requests and writes responses from
// its connection's goroutine; "spawn" does the same and starts one empty
// goroutine per request before it writes (as net/http's server starts
// its background read); "net/http" is the standard library's server.
// Each also runs with GOMAXPROCS=1, where a new goroutine wakes no
// other processor.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20000, "requests a measurement")
	rounds := flag.Int("rounds", 3, "rounds over the servers")
	serve := flag.String("serve", "", "run as this server (raw, spawn, net/http) on -addr")
	addr := flag.String("addr", "127.0.0.1:0", "the server's address")
	flag.Parse()
	if *serve != "" {
		if err := server(*serve, *addr); err != nil {
			fmt.Fprintln(os.Stderr, "wakeup:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "wakeup:", err)
		os.Exit(1)
	}
}

type child struct {
	name, addr string
	cmd        *exec.Cmd
}

func run(n, rounds int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var children []child
	defer func() {
		for _, c := range children {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	}()
	for _, kind := range []string{"raw", "spawn", "net/http"} {
		for _, procs := range []string{"", "1"} {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			a := ln.Addr().String()
			ln.Close()
			cmd := exec.Command(self, "-serve", kind, "-addr", a)
			cmd.Env = os.Environ()
			name := kind
			if procs != "" {
				cmd.Env = append(cmd.Env, "GOMAXPROCS="+procs)
				name += ", GOMAXPROCS=1"
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				return err
			}
			children = append(children, child{name, a, cmd})
		}
	}
	fmt.Printf("p50 of %d round trips from a one-goroutine client, µs\n", n)
	for r := 0; r < rounds; r++ {
		for _, c := range children {
			p50, err := measure(c.addr, n)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			fmt.Printf("round %d  %-24s %6.1f\n", r+1, c.name, p50)
		}
	}
	return nil
}

// measure times n requests on one connection to addr and returns the
// median in µs.
func measure(addr string, n int) (float64, error) {
	var c net.Conn
	var err error
	for range 100 { // the child may still be starting
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	br := bufio.NewReader(c)
	req := []byte("GET /v2/health/live HTTP/1.1\r\nHost: wakeup\r\n\r\n")
	lat := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if _, err := c.Write(req); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	return float64(lat[n/2].Nanoseconds()) / 1e3, nil
}

func server(kind, addr string) error {
	if kind == "net/http" {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /v2/health/live", func(w http.ResponseWriter, r *http.Request) {})
		return http.ListenAndServe(addr, mux)
	}
	if kind != "raw" && kind != "spawn" {
		return fmt.Errorf("unknown server %q (want raw, spawn or net/http)", kind)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				for { // the request's head, up to its empty line
					l, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(strings.TrimRight(string(l), "\r\n")) == 0 {
						break
					}
				}
				if kind == "spawn" {
					go func() {}()
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}
