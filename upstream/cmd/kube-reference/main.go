// kube-reference plans a case with the real kube-scheduler v1.37: the input `arbiter plan` reads,
// the output of `arbiter plan -o json` (its fixed fields), on a virtual clock.
//
//	kube-reference -f FILE [-f FILE ...] [--hints ARBITER-PLAN.json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/klog/v2"

	"arbiter.dev/upstream/internal/bubble"
	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
	"arbiter.dev/upstream/internal/reference"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var inputs files
	fs := flag.NewFlagSet("kube-reference", flag.ExitOnError)
	fs.Var(&inputs, "f", "input file (YAML stream or JSON; - for standard input); repeatable")
	hintsPath := fs.String("hints", "", "Arbiter's plan of the same input (-o json): upstream's random ties are settled toward it")
	verbose := fs.Int("v", 0, "kube-scheduler's log verbosity (logs go to standard error)")
	fs.Parse(os.Args[1:])
	if len(inputs) == 0 {
		fmt.Fprintln(os.Stderr, "kube-reference: at least one -f FILE is required")
		os.Exit(2)
	}
	quietKlog(*verbose)
	objs, err := input.ReadFiles(inputs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var hints *plan.Plan
	if *hintsPath != "" {
		data, err := os.ReadFile(*hintsPath)
		if err == nil {
			hints = &plan.Plan{}
			err = json.Unmarshal(data, hints)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-reference: --hints %s: %v\n", *hintsPath, err)
			os.Exit(2)
		}
	}
	bubble.Main(func(inBubble func(func())) int {
		var result *reference.Result
		var runErr error
		inBubble(func() { result, runErr = reference.Run(objs, reference.Options{Hints: hints}) })
		if runErr != nil {
			fmt.Fprintln(os.Stderr, "kube-reference:", runErr)
			return 2
		}
		out, _ := json.MarshalIndent(result.Plan, "", "  ")
		fmt.Println(string(out))
		for _, e := range result.Errors {
			fmt.Fprintln(os.Stderr, "kube-reference: kube-scheduler reported:", e)
		}
		return 0
	})
}

// quietKlog sends kube-scheduler's logs to standard error at the given verbosity, or nowhere.
func quietKlog(v int) {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	kfs.Set("v", fmt.Sprint(v))
	if v == 0 {
		kfs.Set("logtostderr", "false")
		kfs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
}
