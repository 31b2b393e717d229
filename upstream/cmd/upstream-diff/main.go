// upstream-diff plans random clusters with both `arbiter plan` and the real kube-scheduler
// (kube-reference, in process) and compares them decision for decision: per pod its node,
// nominated node and FailedScheduling message, per preemptor its victims, per group its outcome.
// Every disagreement is minimized (objects are dropped while the disagreement stays) and written
// out as a reproduction that `arbiter plan -f` and `kube-reference -f` both read.
//
//	upstream-diff --cases N --seed S [--family F[,F...]] [--arbiter PATH] [--out DIR]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"arbiter.dev/upstream/internal/bubble"
	"arbiter.dev/upstream/internal/gen"
	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
	"arbiter.dev/upstream/internal/reference"
)

type config struct {
	cases        int
	seed         uint64
	families     []string
	arbiter      string
	out          string
	minimize     int
	minAgreement float64
	compareOpts  plan.Options
}

type tally struct {
	cases, agree, disagree, unusable int
	preempt, pending, ties, taken    int
	fields                           map[string]int
}

func main() {
	fs := flag.NewFlagSet("upstream-diff", flag.ExitOnError)
	cases := fs.Int("cases", 400, "number of random cases, dealt evenly over the families")
	seed := fs.Uint64("seed", 1, "seed of the random cases")
	family := fs.String("family", "", "comma-separated families (default all: "+strings.Join(gen.Families, ", ")+")")
	arbiterPath := fs.String("arbiter", os.Getenv("ARBITER_BINARY"), "the arbiter binary (default $ARBITER_BINARY)")
	out := fs.String("out", "upstream-diff-out", "folder for reproductions of disagreements")
	minimize := fs.Int("minimize", 20, "minimize at most this many disagreements (the rest are written as generated)")
	minAgreement := fs.Float64("min-agreement", 100, "exit 1 when a family's agreement (of its usable cases, in %) is below this, or any case is unusable")
	fs.Parse(os.Args[1:])
	if *arbiterPath == "" {
		fmt.Fprintln(os.Stderr, "upstream-diff: --arbiter PATH (or ARBITER_BINARY) is required")
		os.Exit(2)
	}
	if st, err := os.Stat(*arbiterPath); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		fmt.Fprintf(os.Stderr, "upstream-diff: --arbiter %s is not an executable file\n", *arbiterPath)
		os.Exit(2)
	}
	cfg := config{minAgreement: *minAgreement, cases: *cases, seed: *seed, arbiter: *arbiterPath, out: *out, minimize: *minimize,
		compareOpts: plan.Options{Messages: true, PDBViolations: true}}
	if *family == "" {
		cfg.families = gen.Families
	} else {
		for _, f := range strings.Split(*family, ",") {
			if _, ok := gen.Describe[f]; !ok {
				fmt.Fprintf(os.Stderr, "upstream-diff: unknown family %q (families: %s)\n", f, strings.Join(gen.Families, ", "))
				os.Exit(2)
			}
			cfg.families = append(cfg.families, f)
		}
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "upstream-diff:", err)
		os.Exit(2)
	}
	silenceKlog()
	bubble.Main(func(inBubble func(func())) int { return run(cfg, inBubble) })
}

func silenceKlog() {
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	kfs.Set("logtostderr", "false")
	kfs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// arbiterResult is one `arbiter plan` run, made ahead of the reference (outside any bubble).
type arbiterResult struct {
	c     gen.Case
	data  []byte
	plan  *plan.Plan
	err   string
	spent time.Duration
}

func runArbiter(arbiter string, data []byte) (*plan.Plan, string) {
	cmd := exec.Command(arbiter, "plan", "-o", "json", "-f", "-")
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Sprintf("arbiter plan: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	p := &plan.Plan{}
	if err := json.Unmarshal(stdout.Bytes(), p); err != nil {
		return nil, fmt.Sprintf("arbiter plan: output: %v", err)
	}
	return p, ""
}

func runReference(inBubble func(func()), name string, data []byte, hints *plan.Plan) (*reference.Result, string) {
	objs, err := input.ReadBytes(name, data)
	if err != nil {
		return nil, "kube-reference input: " + err.Error()
	}
	var result *reference.Result
	var runErr error
	// A case that takes a minute of wall time is stuck: say which, with every goroutine's stack.
	watchdog := time.AfterFunc(time.Minute, func() {
		buf := make([]byte, 64<<20)
		n := goruntime.Stack(buf, true)
		fmt.Fprintf(os.Stderr, "upstream-diff: case %s has run for a minute; goroutines:\n%s\n", name, buf[:n])
		os.Exit(3)
	})
	inBubble(func() { result, runErr = reference.Run(objs, reference.Options{Hints: hints}) })
	watchdog.Stop()
	if runErr != nil {
		return nil, "kube-reference: " + runErr.Error()
	}
	return result, ""
}

func run(cfg config, inBubble func(func())) int {
	started := time.Now()
	perFamily := map[string]*tally{}
	for _, f := range cfg.families {
		perFamily[f] = &tally{fields: map[string]int{}}
	}
	ahead := make(chan arbiterResult, 8)
	go func() {
		for i := 0; i < cfg.cases; i++ {
			f := cfg.families[i%len(cfg.families)]
			c := gen.Make(cfg.seed, f, i/len(cfg.families))
			data, err := input.Encode(c.Objects)
			if err != nil {
				ahead <- arbiterResult{c: c, err: "encode: " + err.Error()}
				continue
			}
			t0 := time.Now()
			p, msg := runArbiter(cfg.arbiter, data)
			ahead <- arbiterResult{c: c, data: data, plan: p, err: msg, spent: time.Since(t0)}
		}
		close(ahead)
	}()
	minimized := 0
	var arbiterTime, referenceTime time.Duration
	done := 0
	for a := range ahead {
		done++
		t := perFamily[a.c.Family]
		t.cases++
		arbiterTime += a.spent
		if a.err != "" {
			t.unusable++
			report(cfg, a.c, a.data, nil, a.err)
			continue
		}
		t0 := time.Now()
		ref, msg := runReference(inBubble, a.c.Name(), a.data, a.plan)
		referenceTime += time.Since(t0)
		if msg != "" {
			t.unusable++
			report(cfg, a.c, a.data, nil, msg)
			continue
		}
		t.ties += ref.Ties
		t.taken += ref.HintsTaken
		if len(ref.Plan.Preemptions) > 0 {
			t.preempt++
		}
		for _, p := range ref.Plan.Pods {
			if p.Status == "Pending" {
				t.pending++
				break
			}
		}
		diffs := plan.Compare(a.plan, ref.Plan, cfg.compareOpts)
		if len(diffs) == 0 {
			t.agree++
		} else {
			t.disagree++
			for _, d := range diffs {
				t.fields[d.Field]++
			}
			data := a.data
			if minimized < cfg.minimize {
				minimized++
				data, diffs = minimizeCase(cfg, inBubble, a.c, a.data, diffs)
			}
			var lines []string
			for _, d := range diffs {
				lines = append(lines, d.String())
			}
			for _, e := range ref.Errors {
				lines = append(lines, "kube-scheduler reported: "+e)
			}
			report(cfg, a.c, data, diffs, strings.Join(lines, "\n"))
		}
		if done%100 == 0 {
			fmt.Fprintf(os.Stderr, "upstream-diff: %d/%d cases, %s\n", done, cfg.cases, time.Since(started).Round(time.Second))
		}
	}
	fmt.Printf("\n%-11s %6s %6s %9s %9s %8s %8s %6s\n", "family", "cases", "agree", "disagree", "unusable", "preempt", "pending", "ties")
	var agree, disagree, unusable int
	for _, f := range cfg.families {
		t := perFamily[f]
		agree += t.agree
		disagree += t.disagree
		unusable += t.unusable
		fmt.Printf("%-11s %6d %6d %9d %9d %7.1f%% %7.1f%% %6d   %s\n", f, t.cases, t.agree, t.disagree, t.unusable,
			pct(t.preempt, t.cases), pct(t.pending, t.cases), t.ties, agreement(t))
		if len(t.fields) > 0 {
			var keys []string
			for k := range t.fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s %d", k, t.fields[k]))
			}
			fmt.Printf("%-11s disagreements by field: %s\n", "", strings.Join(parts, ", "))
		}
	}
	fmt.Printf("families: %s\n", describeFamilies(cfg.families))
	fmt.Printf("time: %s (arbiter plan %s, kube-scheduler %s); seed %d; reproductions in %s\n",
		time.Since(started).Round(time.Second), arbiterTime.Round(time.Millisecond), referenceTime.Round(time.Millisecond), cfg.seed, cfg.out)
	fmt.Printf("upstream-diff: %d agree, %d disagree, %d unusable\n", agree, disagree, unusable)
	failed := unusable > 0
	for _, f := range cfg.families {
		t := perFamily[f]
		if usable := t.cases - t.unusable; usable > 0 && pct(t.agree, usable) < cfg.minAgreement {
			fmt.Fprintf(os.Stderr, "upstream-diff: family %s agrees on %.2f%% of its cases, below --min-agreement %.2f%%\n", f, pct(t.agree, usable), cfg.minAgreement)
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func agreement(t *tally) string {
	usable := t.cases - t.unusable
	if usable == 0 {
		return ""
	}
	return fmt.Sprintf("agreement %.2f%%", pct(t.agree, usable))
}

func describeFamilies(fams []string) string {
	var parts []string
	for _, f := range fams {
		parts = append(parts, f+" ("+gen.Describe[f]+")")
	}
	return strings.Join(parts, "; ")
}

// report writes a case that disagreed or could not be used, and says so.
func report(cfg config, c gen.Case, data []byte, diffs []plan.Difference, why string) {
	path := filepath.Join(cfg.out, c.Name()+".json")
	if data != nil {
		_ = os.WriteFile(path, data, 0o644)
	}
	kind := "unusable"
	if diffs != nil {
		kind = "disagree"
	}
	fmt.Printf("%s %s: reproduce with: arbiter plan -f %s; kube-reference -f %s\n", kind, c.Name(), path, path)
	for _, line := range strings.Split(why, "\n") {
		fmt.Printf("    %s\n", line)
	}
}

// minimizeCase drops objects one at a time while the two planners still disagree, until no
// single object can go; the result is the smallest reproduction this search finds.
func minimizeCase(cfg config, inBubble func(func()), c gen.Case, data []byte, diffs []plan.Difference) ([]byte, []plan.Difference) {
	objs := append([]runtime.Object{}, c.Objects...)
	budget := 300
	for changed := true; changed && budget > 0; {
		changed = false
		for i := len(objs) - 1; i >= 0 && budget > 0; i-- {
			// Claims and volumes stay: a pod naming a claim that is gone is a case of its own.
			if k := objs[i].GetObjectKind().GroupVersionKind().Kind; k == "PersistentVolumeClaim" || k == "PersistentVolume" {
				continue
			}
			trial := append(append([]runtime.Object{}, objs[:i]...), objs[i+1:]...)
			trialData, err := input.Encode(trial)
			if err != nil {
				continue
			}
			budget--
			a, msg := runArbiter(cfg.arbiter, trialData)
			if msg != "" {
				continue
			}
			ref, msg := runReference(inBubble, c.Name(), trialData, a)
			if msg != "" {
				continue
			}
			if d := plan.Compare(a, ref.Plan, cfg.compareOpts); len(d) > 0 {
				objs, data, diffs, changed = trial, trialData, d, true
			}
		}
	}
	return data, diffs
}
