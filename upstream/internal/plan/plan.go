// Package plan holds the `-o json` shape of `arbiter plan` (the fields both planners fill) and
// the comparison of two plans.
package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Plan is the fixed part of `arbiter plan -o json`.
type Plan struct {
	Kind        string       `json:"kind"`
	Pods        []Pod        `json:"pods"`
	Preemptions []Preemption `json:"preemptions"`
	PodGroups   []PodGroup   `json:"podGroups,omitempty"`
	// FeatureGates names the gates the reference ran with (reference output only).
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

type Pod struct {
	Name          string  `json:"name"`
	PodGroup      *string `json:"podGroup"`
	Status        string  `json:"status"`
	Node          *string `json:"node"`
	NominatedNode *string `json:"nominatedNode"`
	Message       string  `json:"message"`
	// Attempts is how many times the scheduler tried the pod (0: never popped from the queue).
	Attempts *int `json:"attempts,omitempty"`
}

type Preemption struct {
	Preemptor     string   `json:"preemptor"`
	PreemptorKind string   `json:"preemptorKind"`
	Node          *string  `json:"node"`
	Victims       []Victim `json:"victims"`
	// PDBViolations is kube-scheduler's numPDBViolations of the chosen candidate (reference
	// output only; Arbiter marks each victim instead).
	PDBViolations *int `json:"pdbViolations,omitempty"`
}

type Victim struct {
	Name        string `json:"name"`
	Node        string `json:"node"`
	Priority    int32  `json:"priority"`
	ViolatesPDB bool   `json:"violatesPDB"`
}

type PodGroup struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// Ptr returns a pointer to s (nil for "").
func Ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Difference is one field on which two plans disagree.
type Difference struct {
	Subject string // "pod default/p", "preemptions by default/p", "group default/g"
	Field   string
	Arbiter string
	Kube    string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s: arbiter %s, kube-scheduler %s", d.Subject, d.Field, d.Arbiter, d.Kube)
}

// Options choose what Compare looks at.
type Options struct {
	// Messages compares the FailedScheduling message of pods left pending.
	Messages bool
	// PDBViolations compares each victim's violatesPDB.
	PDBViolations bool
}

// Compare lists every difference between Arbiter's plan and the reference's, per pod (status,
// node, nominated node, message), per preemptor (its preemptions' nodes and victims, in order) and
// per group (its outcome). Order of pods is not compared.
func Compare(arbiter, kube *Plan, opts Options) []Difference {
	var diffs []Difference
	kubePods := map[string]Pod{}
	for _, p := range kube.Pods {
		kubePods[p.Name] = p
	}
	seen := map[string]bool{}
	for _, a := range arbiter.Pods {
		seen[a.Name] = true
		k, ok := kubePods[a.Name]
		subject := "pod " + a.Name
		if !ok {
			diffs = append(diffs, Difference{subject, "presence", "listed", "absent"})
			continue
		}
		if a.Status != k.Status {
			diffs = append(diffs, Difference{subject, "status", a.Status, k.Status})
		}
		if str(a.Node) != str(k.Node) {
			diffs = append(diffs, Difference{subject, "node", str(a.Node), str(k.Node)})
		}
		if str(a.NominatedNode) != str(k.NominatedNode) {
			diffs = append(diffs, Difference{subject, "nominatedNode", str(a.NominatedNode), str(k.NominatedNode)})
		}
		neverTried := func(p Pod) bool { return p.Attempts != nil && *p.Attempts == 0 }
		if a.Attempts != nil && k.Attempts != nil && neverTried(a) != neverTried(k) {
			diffs = append(diffs, Difference{subject, "tried", fmt.Sprint(!neverTried(a)), fmt.Sprint(!neverTried(k))})
		}
		// A pod neither tried has no FailedScheduling message upstream; Arbiter says why it
		// waits (gated, or its gang incomplete), which is its own addition.
		bothUntried := neverTried(a) && neverTried(k)
		// Members of pod groups: Arbiter words their messages its own way (docs/upstream-rules.md
		// E§2), so only pods outside groups are compared word for word.
		inGroup := a.PodGroup != nil || k.PodGroup != nil
		if opts.Messages && !bothUntried && !inGroup && a.Status == "Pending" && k.Status == "Pending" && a.Message != k.Message {
			diffs = append(diffs, Difference{subject, "message", fmt.Sprintf("%q", a.Message), fmt.Sprintf("%q", k.Message)})
		}
	}
	for _, k := range kube.Pods {
		if !seen[k.Name] {
			diffs = append(diffs, Difference{"pod " + k.Name, "presence", "absent", "listed"})
		}
	}
	byPreemptor := func(p *Plan) (map[string][]Preemption, []string) {
		m := map[string][]Preemption{}
		var keys []string
		for _, pr := range p.Preemptions {
			key := pr.PreemptorKind + " " + pr.Preemptor
			if _, ok := m[key]; !ok {
				keys = append(keys, key)
			}
			m[key] = append(m[key], pr)
		}
		return m, keys
	}
	ap, akeys := byPreemptor(arbiter)
	kp, kkeys := byPreemptor(kube)
	keys := append(akeys, kkeys...)
	sort.Strings(keys)
	done := map[string]bool{}
	for _, key := range keys {
		if done[key] {
			continue
		}
		done[key] = true
		as, ks := ap[key], kp[key]
		subject := "preemptions by " + key
		if len(as) != len(ks) {
			diffs = append(diffs, Difference{subject, "count", fmt.Sprint(len(as)), fmt.Sprint(len(ks))})
		}
		for i := 0; i < len(as) && i < len(ks); i++ {
			s := subject
			if len(as) > 1 {
				s = fmt.Sprintf("%s #%d", subject, i+1)
			}
			if str(as[i].Node) != str(ks[i].Node) {
				diffs = append(diffs, Difference{s, "node", str(as[i].Node), str(ks[i].Node)})
			}
			if av, kv := victimList(as[i].Victims), victimList(ks[i].Victims); av != kv {
				diffs = append(diffs, Difference{s, "victims", av, kv})
			}
			if opts.PDBViolations && ks[i].PDBViolations != nil {
				n := 0
				for _, v := range as[i].Victims {
					if v.ViolatesPDB {
						n++
					}
				}
				if n != *ks[i].PDBViolations {
					diffs = append(diffs, Difference{s, "PDB violations", fmt.Sprint(n), fmt.Sprint(*ks[i].PDBViolations)})
				}
			}
		}
	}
	kubeGroups := map[string]string{}
	for _, g := range kube.PodGroups {
		kubeGroups[g.Name] = g.Status
	}
	for _, g := range arbiter.PodGroups {
		if k, ok := kubeGroups[g.Name]; ok && k != g.Status {
			diffs = append(diffs, Difference{"group " + g.Name, "status", g.Status, k})
		}
	}
	return diffs
}

func victimList(vs []Victim) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, v.Name+"@"+v.Node)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}
