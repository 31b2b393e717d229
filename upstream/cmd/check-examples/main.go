// check-examples plans worked examples (folders of cluster files and an expected.json, the format
// of tests/conformance/) with the real kube-scheduler, and checks each outcome against what the
// example expects: pods' status, node, nominated node and message, and the preemptions' count,
// preemptor and victims. Examples in Nomad mode are outside its reach and are listed as such.
//
//	check-examples DIR [DIR ...]     (each DIR a folder of example folders)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/klog/v2"

	"arbiter.dev/upstream/internal/bubble"
	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
	"arbiter.dev/upstream/internal/reference"
)

type expected struct {
	Mode   string   `json:"mode"`
	Inputs []string `json:"inputs"`
	Expect struct {
		Pods map[string]struct {
			Status          *string `json:"status"`
			Node            *string `json:"node"`
			NominatedNode   *string `json:"nominatedNode"`
			MessageContains *string `json:"message_contains"`
		} `json:"pods"`
		Preemptions *struct {
			Count     *int `json:"count"`
			Preemptor *struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"preemptor"`
			Victims []string `json:"victims"`
		} `json:"preemptions"`
	} `json:"expect"`
}

func main() {
	fs := flag.NewFlagSet("check-examples", flag.ExitOnError)
	fs.Parse(os.Args[1:])
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: check-examples DIR [DIR ...]")
		os.Exit(2)
	}
	kfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kfs)
	kfs.Set("logtostderr", "false")
	kfs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	var examples []string
	for _, dir := range fs.Args() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "check-examples: %v\n", err)
			os.Exit(2)
		}
		for _, e := range entries {
			if e.IsDir() {
				examples = append(examples, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(examples)
	bubble.Main(func(inBubble func(func())) int {
		pass, fail, outside := 0, 0, 0
		for _, ex := range examples {
			problems, skip, err := check(ex, inBubble)
			switch {
			case err != nil:
				fail++
				fmt.Printf("FAIL %s: %v\n", ex, err)
			case skip:
				outside++
				fmt.Printf("---- %s: Nomad mode, outside kube-scheduler's reach\n", ex)
			case len(problems) > 0:
				fail++
				fmt.Printf("FAIL %s\n", ex)
				for _, p := range problems {
					fmt.Printf("    %s\n", p)
				}
			default:
				pass++
				fmt.Printf("ok   %s\n", ex)
			}
		}
		fmt.Printf("check-examples: %d agree with kube-scheduler, %d do not, %d outside its reach\n", pass, fail, outside)
		if fail > 0 || pass == 0 {
			return 1
		}
		return 0
	})
}

func check(dir string, inBubble func(func())) ([]string, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		return nil, false, err
	}
	var want expected
	if err := json.Unmarshal(data, &want); err != nil {
		return nil, false, fmt.Errorf("expected.json: %v", err)
	}
	if want.Mode == "nomad" {
		return nil, true, nil
	}
	var files []string
	for _, in := range want.Inputs {
		files = append(files, filepath.Join(dir, in))
	}
	objs, err := input.ReadFiles(files)
	if err != nil {
		return nil, false, err
	}
	var result *reference.Result
	var runErr error
	inBubble(func() { result, runErr = reference.Run(objs, reference.Options{}) })
	if runErr != nil {
		return nil, false, runErr
	}
	got := map[string]plan.Pod{}
	for _, p := range result.Plan.Pods {
		got[p.Name] = p
	}
	show := func(s *string) string {
		if s == nil {
			return "null"
		}
		return *s
	}
	var problems []string
	names := make([]string, 0, len(want.Expect.Pods))
	for n := range want.Expect.Pods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		w := want.Expect.Pods[name]
		g, ok := got[name]
		if !ok {
			problems = append(problems, "pod "+name+": not in kube-scheduler's plan")
			continue
		}
		if w.Status != nil && *w.Status != g.Status {
			problems = append(problems, fmt.Sprintf("pod %s: status %s, expected %s", name, g.Status, *w.Status))
		}
		if w.Node != nil && show(w.Node) != show(g.Node) || w.Node == nil && g.Node != nil && w.Status != nil && *w.Status == "Pending" {
			problems = append(problems, fmt.Sprintf("pod %s: node %s, expected %s", name, show(g.Node), show(w.Node)))
		}
		if w.NominatedNode != nil && show(w.NominatedNode) != show(g.NominatedNode) {
			problems = append(problems, fmt.Sprintf("pod %s: nominated node %s, expected %s", name, show(g.NominatedNode), show(w.NominatedNode)))
		}
		if w.MessageContains != nil && !strings.Contains(g.Message, *w.MessageContains) {
			problems = append(problems, fmt.Sprintf("pod %s: message %q does not contain %q", name, g.Message, *w.MessageContains))
		}
	}
	if pr := want.Expect.Preemptions; pr != nil {
		if pr.Count != nil && *pr.Count != len(result.Plan.Preemptions) {
			problems = append(problems, fmt.Sprintf("%d preemptions, expected %d", len(result.Plan.Preemptions), *pr.Count))
		}
		var victims []string
		for _, p := range result.Plan.Preemptions {
			for _, v := range p.Victims {
				victims = append(victims, v.Name)
			}
			if pr.Preemptor != nil && (p.Preemptor != pr.Preemptor.Name || p.PreemptorKind != pr.Preemptor.Kind) {
				problems = append(problems, fmt.Sprintf("preemptor %s %s, expected %s %s", p.PreemptorKind, p.Preemptor, pr.Preemptor.Kind, pr.Preemptor.Name))
			}
		}
		sort.Strings(victims)
		wantVictims := append([]string{}, pr.Victims...)
		sort.Strings(wantVictims)
		if pr.Victims != nil && strings.Join(victims, ",") != strings.Join(wantVictims, ",") {
			problems = append(problems, fmt.Sprintf("victims [%s], expected [%s]", strings.Join(victims, " "), strings.Join(wantVictims, " ")))
		}
	}
	return problems, false, nil
}
