package plan

import "testing"

func pod(name, status, node string, attempts int, msg string) Pod {
	return Pod{Name: name, Status: status, Node: Ptr(node), Attempts: &attempts, Message: msg}
}

func TestCompareFindsADifferentNodeAndNothingElse(t *testing.T) {
	a := &Plan{Pods: []Pod{pod("default/p", "Scheduled", "n1", 1, "")}}
	k := &Plan{Pods: []Pod{pod("default/p", "Scheduled", "n2", 1, "")}}
	diffs := Compare(a, k, Options{Messages: true})
	if len(diffs) != 1 || diffs[0].Field != "node" || diffs[0].Arbiter != "n1" || diffs[0].Kube != "n2" {
		t.Fatalf("diffs = %v", diffs)
	}
}

func TestCompareSkipsTheMessagesOfPodsNeitherTried(t *testing.T) {
	a := &Plan{Pods: []Pod{pod("default/p", "Pending", "", 0, "waiting for the gang")}}
	k := &Plan{Pods: []Pod{pod("default/p", "Pending", "", 0, "")}}
	if diffs := Compare(a, k, Options{Messages: true}); len(diffs) != 0 {
		t.Fatalf("diffs = %v", diffs)
	}
	k.Pods[0].Attempts = new(int)
	*k.Pods[0].Attempts = 2
	if diffs := Compare(a, k, Options{Messages: true}); len(diffs) == 0 {
		t.Fatal("a pod tried by one planner only must be a difference")
	}
}

func TestCompareMatchesPreemptionsPerPreemptorInOrderAndVictimsAsASet(t *testing.T) {
	v := func(names ...string) []Victim {
		var out []Victim
		for _, n := range names {
			out = append(out, Victim{Name: n, Node: "n1"})
		}
		return out
	}
	a := &Plan{Preemptions: []Preemption{{Preemptor: "default/p", PreemptorKind: "Pod", Node: Ptr("n1"), Victims: v("default/a", "default/b")}}}
	k := &Plan{Preemptions: []Preemption{{Preemptor: "default/p", PreemptorKind: "Pod", Node: Ptr("n1"), Victims: v("default/b", "default/a")}}}
	if diffs := Compare(a, k, Options{}); len(diffs) != 0 {
		t.Fatalf("diffs = %v", diffs)
	}
	k.Preemptions[0].Victims = v("default/a")
	if diffs := Compare(a, k, Options{}); len(diffs) != 1 || diffs[0].Field != "victims" {
		t.Fatalf("diffs = %v", diffs)
	}
}
