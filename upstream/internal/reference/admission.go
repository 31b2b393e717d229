package reference

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1defaults "k8s.io/kubernetes/pkg/apis/core/v1"

	"arbiter.dev/upstream/internal/input"
)

// The classes kube-apiserver creates at start-up.
var systemClasses = []schedulingv1.PriorityClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000},
	{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000},
}

type classes struct {
	byName map[string]*schedulingv1.PriorityClass
	global *schedulingv1.PriorityClass
}

func classesOf(objs *input.Objects) *classes {
	c := &classes{byName: map[string]*schedulingv1.PriorityClass{}}
	for i := range systemClasses {
		c.byName[systemClasses[i].Name] = &systemClasses[i]
	}
	for _, pc := range objs.PriorityClasses {
		c.byName[pc.Name] = pc
		// The Priority admission plugin takes the global default of lowest value when several
		// claim it.
		if pc.GlobalDefault && (c.global == nil || pc.Value < c.global.Value) {
			c.global = pc
		}
	}
	return c
}

// resolve is the Priority admission plugin's rule: the class named, else the global default,
// else priority 0 with no class; the policy comes from the class (PreemptLowerPriority without).
func (c *classes) resolve(className string) (name string, value int32, policy *corev1.PreemptionPolicy, err error) {
	lower := corev1.PreemptLowerPriority
	if className == "" {
		if c.global == nil {
			return "", 0, &lower, nil
		}
		className = c.global.Name
	}
	pc, ok := c.byName[className]
	if !ok {
		return "", 0, nil, fmt.Errorf("no PriorityClass with name %s was found", className)
	}
	if pc.PreemptionPolicy != nil {
		p := *pc.PreemptionPolicy
		return pc.Name, pc.Value, &p, nil
	}
	return pc.Name, pc.Value, &lower, nil
}

// admit returns every pod as kube-apiserver stores it: defaulted (requests from limits, grace
// period, scheduler name) and with its priority resolved, keyed by namespace/name.
func admit(objs *input.Objects) (map[string]*corev1.Pod, error) {
	c := classesOf(objs)
	out := map[string]*corev1.Pod{}
	for _, p := range objs.Pods {
		pod := p.DeepCopy()
		corev1defaults.SetObjectDefaults_Pod(pod)
		if pod.Namespace == "" {
			pod.Namespace = metav1.NamespaceDefault
		}
		if pod.UID == "" {
			pod.UID = uidOf("pod", pod.Namespace, pod.Name)
		}
		name, value, policy, err := c.resolve(pod.Spec.PriorityClassName)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %v", podKey(pod), err)
		}
		pod.Spec.PriorityClassName = name
		pod.Spec.Priority = &value
		if pod.Spec.PreemptionPolicy == nil {
			pod.Spec.PreemptionPolicy = policy
		}
		if !objs.Gate("GenericWorkload", true) {
			pod.Spec.SchedulingGroup = nil
		}
		if !objs.Gate("PodLevelResources", true) {
			pod.Spec.Resources = nil
		}
		out[podKey(pod)] = pod
	}
	return out, nil
}

// admitGroup resolves a PodGroup's priority from its class, as admission does for pods.
func admitGroup(g *schedulingv1beta1.PodGroup, objs *input.Objects) *schedulingv1beta1.PodGroup {
	group := g.DeepCopy()
	if group.Namespace == "" {
		group.Namespace = metav1.NamespaceDefault
	}
	if group.UID == "" {
		group.UID = uidOf("podgroup", group.Namespace, group.Name)
	}
	if group.Spec.Priority == nil {
		if name, value, _, err := classesOf(objs).resolve(group.Spec.PriorityClassName); err == nil {
			group.Spec.PriorityClassName = name
			group.Spec.Priority = &value
		}
	}
	if !objs.Gate("CompositePodGroup", true) {
		group.Spec.ParentCompositePodGroupName = nil
	}
	return group
}

// pdbsWithStatus gives each budget the status the disruption controller would have written when
// the input gives none (see budgetStatus).
func pdbsWithStatus(pdbs []*policyv1.PodDisruptionBudget, given map[string]bool, pods map[string]*corev1.Pod) []*policyv1.PodDisruptionBudget {
	var list []*corev1.Pod
	for _, p := range pods {
		list = append(list, p)
	}
	var out []*policyv1.PodDisruptionBudget
	for _, in := range pdbs {
		pdb := in.DeepCopy()
		if pdb.Namespace == "" {
			pdb.Namespace = metav1.NamespaceDefault
		}
		if !given[pdb.Namespace+"/"+pdb.Name] {
			budgetStatus(pdb, list)
		}
		out = append(out, pdb)
	}
	return out
}

// budgetStatus is the disruption controller's count, as `arbiter plan` keeps it during a run:
// every matching pod is expected, the bound ones not terminating are healthy, and disruptions
// allowed are the healthy beyond the desired count.
func budgetStatus(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) {
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		selector = labels.Nothing()
	}
	var expected, healthy int32
	for _, p := range pods {
		if p.Namespace != pdb.Namespace || !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		expected++
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			healthy++
		}
	}
	desired := int32(0)
	switch {
	case pdb.Spec.MinAvailable != nil:
		desired = scaled(*pdb.Spec.MinAvailable, expected)
	case pdb.Spec.MaxUnavailable != nil:
		desired = expected - scaled(*pdb.Spec.MaxUnavailable, expected)
		if desired < 0 {
			desired = 0
		}
	}
	pdb.Status.ExpectedPods = expected
	pdb.Status.CurrentHealthy = healthy
	pdb.Status.DesiredHealthy = desired
	pdb.Status.DisruptionsAllowed = int32(math.Max(0, float64(healthy-desired)))
}

// scaled is an int-or-percent of `of`, a percentage rounded up (the disruption controller's rule).
func scaled(v intstr.IntOrString, of int32) int32 {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(of), true)
	if err != nil {
		return 0
	}
	return int32(n)
}

// uidOf gives an object without a uid the one kube-apiserver would have: unique, here derived
// from its kind, namespace and name so that runs repeat.
func uidOf(kind, namespace, name string) types.UID {
	sum := sha256.Sum256([]byte(kind + "/" + namespace + "/" + name))
	h := hex.EncodeToString(sum[:16])
	return types.UID(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}
