// side-by-side times `arbiter plan` and the real kube-scheduler (kube-reference's in-process run)
// planning the same clusters, in scheduler_perf's shapes, on this machine in one run: the median
// of several runs of each, and their ratio.
//
// Both sides are whole plans of the same input file: decoding, admission, every scheduling cycle,
// preemption and the victims' graceful termination in virtual time. kube-scheduler runs over a
// fake clientset and informers in a synctest bubble, one cycle at a time, with no API server:
// this is not scheduler_perf (which keeps an API server and etcd in the loop).
//
//	side-by-side [--runs 3] [--arbiter PATH] SHAPE:NODES:PODS ...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"arbiter.dev/upstream/internal/bubble"
	"arbiter.dev/upstream/internal/gen"
	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/reference"
)

func main() {
	fs := flag.NewFlagSet("side-by-side", flag.ExitOnError)
	runs := fs.Int("runs", 3, "runs of each planner per shape (the median is reported)")
	arbiter := fs.String("arbiter", os.Getenv("ARBITER_BINARY"), "the arbiter binary")
	fs.Parse(os.Args[1:])
	if *arbiter == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: side-by-side [--runs N] --arbiter PATH SHAPE:NODES:PODS ...")
		os.Exit(2)
	}
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	kfs.Set("logtostderr", "false")
	kfs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	shapes := fs.Args()
	bubble.Main(func(inBubble func(func())) int {
		fmt.Printf("| shape | nodes | pods | arbiter plan (median of %d) | kube-scheduler in process (median of %d) | ratio |\n|---|---|---|---|---|---|\n", *runs, *runs)
		for _, spec := range shapes {
			parts := strings.Split(spec, ":")
			if len(parts) != 3 {
				fmt.Fprintf(os.Stderr, "side-by-side: %q is not SHAPE:NODES:PODS\n", spec)
				return 2
			}
			nodes, err1 := strconv.Atoi(parts[1])
			pods, err2 := strconv.Atoi(parts[2])
			if err1 != nil || err2 != nil {
				fmt.Fprintf(os.Stderr, "side-by-side: %q: NODES and PODS must be numbers\n", spec)
				return 2
			}
			data, err := input.Encode(gen.Shape(parts[0], nodes, pods))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			objs, err := input.ReadBytes(spec, data)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			var arb, kube []time.Duration
			for i := 0; i < *runs; i++ {
				cmd := exec.Command(*arbiter, "plan", "-o", "json", "-f", "-")
				cmd.Stdin = bytes.NewReader(data)
				cmd.Stdout = io.Discard
				t0 := time.Now()
				if err := cmd.Run(); err != nil {
					fmt.Fprintf(os.Stderr, "side-by-side: arbiter plan: %v\n", err)
					return 1
				}
				arb = append(arb, time.Since(t0))
				var runErr error
				t0 = time.Now()
				inBubble(func() { _, runErr = reference.Run(objs, reference.Options{}) })
				kube = append(kube, time.Since(t0))
				if runErr != nil {
					fmt.Fprintf(os.Stderr, "side-by-side: kube-scheduler: %v\n", runErr)
					return 1
				}
				fmt.Fprintf(os.Stderr, "side-by-side: %s run %d: arbiter %s, kube-scheduler %s\n", spec, i+1, arb[i].Round(time.Millisecond), kube[i].Round(time.Millisecond))
			}
			a, k := median(arb), median(kube)
			fmt.Printf("| %s | %d | %d | %s (%.0f pods/s) | %s (%.0f pods/s) | %.1f× |\n", parts[0], nodes, pods,
				a.Round(time.Millisecond), float64(pods)/a.Seconds(), k.Round(time.Millisecond), float64(pods)/k.Seconds(), k.Seconds()/a.Seconds())
		}
		return 0
	})
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
