package reference

import (
	"testing"
	"testing/synctest"

	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
)

// One slot, taken by a priority-0 pod; a priority-1000 pod preempts it, waits out its 30 s grace
// period and is bound.
const onePodSlot = `
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {nodeName: n1, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: default, creationTimestamp: "2026-01-01T00:00:01Z"}
spec: {priorityClassName: high, containers: [{name: c, image: x}]}
`

func TestAPreemptorWaitsOutItsVictimsGracePeriodAndIsBound(t *testing.T) {
	objs, err := input.ReadBytes("case.yaml", []byte(onePodSlot))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		r, err := Run(objs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Plan.Pods) != 1 || r.Plan.Pods[0].Status != "Scheduled" || *r.Plan.Pods[0].Node != "n1" || *r.Plan.Pods[0].NominatedNode != "n1" {
			t.Fatalf("pods = %+v", r.Plan.Pods)
		}
		want := []plan.Preemption{{Preemptor: "default/new", PreemptorKind: "Pod", Node: plan.Ptr("n1"), Victims: []plan.Victim{{Name: "default/old", Node: "n1"}}}}
		if diffs := plan.Compare(&plan.Plan{Preemptions: want}, &plan.Plan{Preemptions: r.Plan.Preemptions}, plan.Options{}); len(diffs) > 0 {
			t.Fatalf("preemptions = %+v: %v", r.Plan.Preemptions, diffs)
		}
	})
}
