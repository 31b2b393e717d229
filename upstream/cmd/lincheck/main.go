// lincheck: the Kubernetes API's consistency under faults, checked on histories of operations.
//
// Eight clients create, read, update (with a resourceVersion precondition) and delete a few
// ConfigMaps through the API while a part of the system under test is SIGKILLed and started
// again: `arbiter serve` on SQLite, `arbiter serve` on a 3-member etcd cluster with two replicas
// (an etcd member or a replica killed), or the real kube-apiserver v1.37.2 on etcd, the baseline
// (scripts/upstream-cluster.sh). Each run's history is checked with Porcupine against a model of a
// versioned register per key (model.go): an operation whose outcome is unknown (a timeout, a
// connection broken after the request went out, a 5xx) stays open-ended in the history, never
// dropped; one refused before it was sent is left out. A watch started with each run is checked
// against the same history (watch.go): revisions in order, no event invented, none missed.
//
//	lincheck --target serve-sqlite|serve-etcd|upstream --arbiter BIN [--histories N] [--clients 8]
//	         [--keys 3] [--ops 25] [--faults 1] [--seed S] [--broken stale-reads] [--out DIR]
//
// --broken stale-reads puts a read cache that is never invalidated (a GET answered from the last
// answer for that object for up to 2 s) between the clients and the server: the deliberately
// broken variant the checker must catch. The exit status is 1 when any history is not
// linearizable or any watch is inconsistent; the last line reads
// `lincheck: TARGET: H histories, O operations (U unknown), F faults: V violations`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

func main() {
	targetName := flag.String("target", "serve-sqlite", "serve-sqlite, serve-etcd or upstream")
	arbiter := flag.String("arbiter", "", "the arbiter binary")
	etcdBin := flag.String("etcd", "bin/etcd", "serve-etcd: the etcd binary")
	script := flag.String("cluster-script", "../scripts/upstream-cluster.sh", "upstream: scripts/upstream-cluster.sh")
	histories := flag.Int("histories", 20, "runs, each a history checked on its own")
	clients := flag.Int("clients", 8, "concurrent clients")
	keys := flag.Int("keys", 3, "ConfigMaps per run")
	ops := flag.Int("ops", 25, "operations per client per run")
	faults := flag.Int("faults", 1, "faults injected during each run")
	seed := flag.Int64("seed", 1, "seed of the operations and faults")
	broken := flag.String("broken", "", "stale-reads: a read cache in front of the server (must be caught)")
	outDir := flag.String("out", "", "where each failing history's Porcupine visualization is written")
	recheckFile := flag.String("recheck", "", "check a history file written by --out again, and show where it fails")
	flag.Parse()
	if *recheckFile != "" {
		recheck(*recheckFile)
		return
	}
	if *arbiter == "" {
		fail("--arbiter is required")
	}
	// Absolute: the cluster script runs from the repository's root.
	if abs, err := filepath.Abs(*arbiter); err == nil {
		*arbiter = abs
	}
	if *broken != "" && *broken != "stale-reads" {
		fail("--broken: stale-reads, not " + *broken)
	}
	dir, err := os.MkdirTemp("", "lincheck-")
	if err != nil {
		fail(err.Error())
	}
	var t target
	switch *targetName {
	case "serve-sqlite":
		t = &serveSQLite{arbiter: *arbiter, dir: dir}
	case "serve-etcd":
		t = &serveEtcd{arbiter: *arbiter, etcd: *etcdBin, dir: dir}
	case "upstream":
		t = &upstreamCluster{script: *script, arbiter: *arbiter, dir: filepath.Join(dir, "cluster")}
	default:
		fail("--target: serve-sqlite, serve-etcd or upstream, not " + *targetName)
	}
	fmt.Printf("lincheck: %s: starting (logs in %s)\n", t.Name(), dir)
	if err := t.Start(); err != nil {
		t.Stop()
		fail(err.Error())
	}
	defer t.Stop()

	rng := rand.New(rand.NewSource(*seed))
	var totalOps, unknown, nfaults, violations int
	start := time.Now()
	for h := 0; h < *histories; h++ {
		eps := t.Endpoints()
		if *broken == "stale-reads" {
			eps = staleReadProxy(eps)
		}
		r := runHistory(t, eps, h, *clients, *keys, *ops, *faults, rng)
		totalOps += len(r.history)
		unknown += r.unknown
		nfaults += len(r.faults)
		if r.err != nil {
			fail(fmt.Sprintf("history %d: %v", h, r.err))
		}
		res, info := porcupine.CheckOperationsVerbose(registerModel.ToModel(), r.history, time.Minute)
		bad := len(r.watchProblems)
		if res != porcupine.Ok {
			bad++
		}
		if bad > 0 {
			violations += bad
			fmt.Printf("lincheck: history %d: %s; %d watch problems; faults: %v\n", h, res, len(r.watchProblems), r.faults)
			for _, p := range r.watchProblems {
				fmt.Println("  watch:", p)
			}
			if *outDir != "" && res != porcupine.Ok {
				_ = os.MkdirAll(*outDir, 0o755)
				path := filepath.Join(*outDir, fmt.Sprintf("history-%d.html", h))
				if err := porcupine.VisualizePath(registerModel.ToModel(), info, path); err == nil {
					fmt.Println("  visualization:", path)
				}
				base := filepath.Join(*outDir, fmt.Sprintf("history-%d", h))
				if err := writeHistory(base, r.history); err == nil {
					fmt.Printf("  operations: %s.txt (lincheck --recheck %s.json finds the first refused)\n", base, base)
				}
			}
		}
		if (h+1)%10 == 0 || h+1 == *histories {
			fmt.Printf("lincheck: %d/%d histories, %d operations, %d violations, %.0f s\n", h+1, *histories, totalOps, violations,
				time.Since(start).Seconds())
		}
	}
	fmt.Printf("lincheck: %s: %d histories, %d operations (%d unknown), %d faults: %d violations\n",
		t.Name(), *histories, totalOps, unknown, nfaults, violations)
	if violations > 0 {
		t.Stop()
		os.Exit(1)
	}
}

// writeHistory writes a history as BASE.json (for --recheck) and as BASE.txt, one operation a
// line in the order of their calls: call and return times (ms from the run's start; "open" when
// the answer never came), client, operation and answer.
func writeHistory(base string, history []porcupine.Operation) error {
	var records []record
	for _, op := range history {
		records = append(records, record{Client: op.ClientId, Call: op.Call, Return: op.Return,
			In: op.Input.(input), Out: op.Output.(output)})
	}
	data, err := json.Marshal(records)
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", data, 0o644); err != nil {
		return err
	}
	ops := append([]porcupine.Operation(nil), history...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	var b strings.Builder
	for _, op := range ops {
		ret := "open"
		if op.Return < 1<<62 {
			ret = fmt.Sprintf("%.3f", float64(op.Return)/1e6)
		}
		fmt.Fprintf(&b, "%.3f\t%s\tc%d\t%s\t%s\n", float64(op.Call)/1e6, ret, op.ClientId,
			registerModel.DescribeOperation(op.Input, op.Output), op.Input.(input).Key)
	}
	return os.WriteFile(base+".txt", []byte(b.String()), 0o644)
}

// One operation of a history file.
type record struct {
	Client       int
	Call, Return int64
	In           input
	Out          output
}

// recheck checks a history written by --out again and, when it is refused, finds the first
// moment at which it is: the shortest prefix (the operations called before a time, those still
// unanswered then made open-ended) that no order explains, and prints its last operations.
func recheck(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		fail(err.Error())
	}
	var records []record
	if err := json.Unmarshal(data, &records); err != nil {
		fail(path + ": " + err.Error())
	}
	sort.SliceStable(records, func(i, j int) bool { return records[i].Call < records[j].Call })
	prefix := func(n int) []porcupine.Operation {
		cut := records[n-1].Call
		var ops []porcupine.Operation
		for _, r := range records[:n] {
			op := porcupine.Operation{ClientId: r.Client, Call: r.Call, Return: r.Return, Input: r.In, Output: r.Out}
			if r.Return > cut {
				op.Return = 1 << 62
				op.Output = output{Outcome: outUnknown}
			}
			ops = append(ops, op)
		}
		return ops
	}
	ok := func(n int) bool { return porcupine.CheckOperations(registerModel.ToModel(), prefix(n)) }
	if ok(len(records)) {
		fmt.Printf("lincheck: %s: %d operations, linearizable\n", path, len(records))
		return
	}
	lo, hi := 1, len(records) // ok(lo-1) holds; ok(hi) does not
	for lo < hi {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	fmt.Printf("lincheck: %s: not linearizable from operation %d of %d (by call time); the 20 before it:\n", path, hi, len(records))
	for i := max(0, hi-20); i < hi; i++ {
		r := records[i]
		fmt.Printf("  %d\t%.3f\t%.3f\tc%d\t%s\n", i+1, float64(r.Call)/1e6, float64(r.Return)/1e6, r.Client,
			registerModel.DescribeOperation(r.In, r.Out))
	}
	os.Exit(1)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "lincheck:", msg)
	os.Exit(2)
}

type runResult struct {
	history       []porcupine.Operation
	unknown       int
	faults        []string
	watchProblems []string
	err           error
}

// runHistory runs one history on fresh keys: the clients' operations, the faults at random
// times while they run, and a watch from the revision before the first operation.
func runHistory(t target, eps []endpoint, h, nclients, nkeys, nops, nfaults int, rng *rand.Rand) runResult {
	var res runResult
	if err := t.WaitHealthy(2 * time.Minute); err != nil {
		res.err = err
		return res
	}
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("h%d-k%d", h, i)
	}
	wc, err := newClient(eps[0], "default", 10*time.Second)
	if err != nil {
		res.err = err
		return res
	}
	w := &watcher{c: wc}
	from, err := w.listRV()
	if err != nil {
		res.err = fmt.Errorf("the first list: %v", err)
		return res
	}
	ctx, cancel := context.WithCancel(context.Background())
	watchDone := make(chan struct{})
	go func() { w.run(ctx, from); close(watchDone) }()

	base := time.Now()
	var stop atomic.Bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	seeds := make([]int64, nclients)
	for i := range seeds {
		seeds[i] = rng.Int63()
	}
	for c := 0; c < nclients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seeds[c]))
			cl, err := newClient(eps[c%len(eps)], "default", 3*time.Second)
			if err != nil {
				mu.Lock()
				res.err = err
				mu.Unlock()
				return
			}
			lastRV := map[string]int64{}
			// At least nops operations each, and on until the faults are over and the system is
			// whole again: operations span every fault, its recovery and the time after it.
			for n := 0; n < nops || !stop.Load(); n++ {
				// Paced, so that a run lasts as long as its faults and keeps a few requests in
				// flight at any moment rather than hundreds.
				time.Sleep(time.Duration(r.Intn(8)) * time.Millisecond)
				key := keys[r.Intn(len(keys))]
				in := input{Key: key}
				switch p := r.Intn(100); {
				case p < 35:
					in.Kind = opGet
				case p < 50:
					in.Kind = opCreate
				case p < 85:
					in.Kind = opUpdate
				default:
					in.Kind = opDelete
				}
				if in.Kind == opCreate || in.Kind == opUpdate {
					in.Value = fmt.Sprintf("c%d-%d", c, n)
				}
				if in.Kind == opUpdate {
					rv, ok := lastRV[key]
					if !ok {
						in = input{Kind: opGet, Key: key}
					} else {
						in.RV = rv
					}
				}
				call := time.Since(base).Nanoseconds()
				out, err := cl.run(in)
				ret := time.Since(base).Nanoseconds()
				if err == errNotSent {
					time.Sleep(20 * time.Millisecond) // the server is down: it was never asked
					continue
				}
				if err != nil {
					mu.Lock()
					res.err = err
					mu.Unlock()
					return
				}
				if out.Outcome == outUnknown {
					ret = 1 << 62 // open-ended: it may take effect at any later time
				}
				if out.Outcome == outOK && in.Kind != opDelete {
					lastRV[key] = out.RV
				}
				mu.Lock()
				res.history = append(res.history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				if out.Outcome == outUnknown {
					res.unknown++
				}
				mu.Unlock()
			}
		}(c)
	}
	// The faults, at random times while the clients run; then, once the system is whole again,
	// half a second more of operations before the clients stop.
	delays := make([]time.Duration, nfaults)
	for f := range delays {
		delays[f] = time.Duration(100+rng.Intn(700)) * time.Millisecond
	}
	for f := 0; f < nfaults; f++ {
		time.Sleep(delays[f])
		what, err := t.Fault(rng)
		res.faults = append(res.faults, what)
		if err != nil && res.err == nil {
			res.err = fmt.Errorf("%s: %v", what, err)
		}
	}
	// The watch must catch up with every acknowledged write once the system is whole again.
	if err := t.WaitHealthy(2 * time.Minute); err != nil && res.err == nil {
		res.err = err
	}
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	var maxAcked int64
	for _, op := range res.history {
		if o := op.Output.(output); o.Outcome == outOK && o.RV > maxAcked {
			maxAcked = o.RV
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		w.mu.Lock()
		var last int64
		if n := len(w.events); n > 0 {
			last = w.events[n-1].RV
		}
		w.mu.Unlock()
		if last >= maxAcked || time.Now().After(deadline) {
			if last < maxAcked {
				res.watchProblems = append(res.watchProblems, fmt.Sprintf("the watch reached rv=%d, not the last acknowledged write's rv=%d, 15 s after the run", last, maxAcked))
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-watchDone
	w.mu.Lock()
	events := append([]watchEvent(nil), w.events...)
	gaps := append([][2]int64(nil), w.gaps...)
	w.mu.Unlock()
	// Only this run's keys.
	mine := map[string]bool{}
	for _, k := range keys {
		mine[k] = true
	}
	var own []watchEvent
	for _, e := range events {
		if mine[e.Key] {
			own = append(own, e)
		}
	}
	sort.SliceStable(res.history, func(i, j int) bool { return res.history[i].Call < res.history[j].Call })
	res.watchProblems = append(res.watchProblems, checkWatch(own, gaps, from, res.history)...)
	return res
}
