// Package gen makes random clusters for the side-by-side comparison, in families that each
// exercise one part of the scheduler. A case is a function of (seed, family, index) alone.
package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Families, in the order their cases are dealt out.
var Families = []string{"filters", "preemption", "gangs", "nogeneric"}

// Describe says what each family exercises.
var Describe = map[string]string{
	"filters":    "filters and scores: node affinity, selectors, taints, inter-pod (anti-)affinity, topology spread, host ports, images, bound volumes, pod-level resources",
	"preemption": "default preemption: priorities, PDBs, preemptionPolicy Never, nominated pods, grace periods",
	"gangs":      "gangs (PodGroups) and workload-aware preemption with disruption modes single and all",
	"nogeneric":  "default preemption with the GenericWorkload gate off (pod groups ignored)",
}

// Case is one generated cluster.
type Case struct {
	Family  string
	Index   int
	Objects []runtime.Object
}

// Name is the case's stable name.
func (c Case) Name() string { return fmt.Sprintf("%s-%05d", c.Family, c.Index) }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type builder struct {
	rng     *rand.Rand
	objs    []runtime.Object
	clock   time.Time
	nodes   []*corev1.Node
	podSeq  int
	classes []string
}

// Make builds case `index` of `family` for `seed`.
func Make(seed uint64, family string, index int) Case {
	h := uint64(0)
	for _, c := range family {
		h = h*131 + uint64(c)
	}
	b := &builder{rng: rand.New(rand.NewPCG(seed, h<<20^uint64(index))), clock: epoch}
	switch family {
	case "filters":
		b.filters()
	case "preemption":
		b.preemption(false)
	case "gangs":
		b.gangs()
	case "nogeneric":
		b.preemption(true)
	default:
		panic("unknown family " + family)
	}
	return Case{Family: family, Index: index, Objects: b.objs}
}

func (b *builder) pick(options ...string) string { return options[b.rng.IntN(len(options))] }
func (b *builder) chance(p float64) bool         { return b.rng.Float64() < p }
func (b *builder) between(lo, hi int) int        { return lo + b.rng.IntN(hi-lo+1) }
func (b *builder) tick() time.Time               { b.clock = b.clock.Add(time.Second); return b.clock }

func (b *builder) add(o runtime.Object) { b.objs = append(b.objs, o) }

var zones = []string{"zone-a", "zone-b", "zone-c"}
var images = []string{"registry.example/web:1", "registry.example/db:2", "registry.example/cache:3", "registry.example/batch:4"}
var apps = []string{"web", "db", "cache", "batch"}

func (b *builder) priorityClasses() {
	for _, pc := range []struct {
		name   string
		value  int32
		never  bool
		global bool
	}{{"low", 0, false, true}, {"mid", 100, false, false}, {"high", 1000, false, false}, {"top", 10000, false, false}, {"high-never", 5000, true, false}} {
		policy := corev1.PreemptLowerPriority
		if pc.never {
			policy = corev1.PreemptNever
		}
		b.add(&schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: pc.name},
			Value:            pc.value,
			GlobalDefault:    pc.global,
			PreemptionPolicy: &policy,
		})
		b.classes = append(b.classes, pc.name)
	}
}

func (b *builder) node(i int, cpuMilli, memMi int64, pods int64) *corev1.Node {
	name := fmt.Sprintf("node-%d", i)
	zone := zones[i%len(zones)]
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memMi*1024*1024, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname":      name,
			"topology.kubernetes.io/zone": zone,
			"disk":                        b.pick("ssd", "hdd"),
		}},
		Status: corev1.NodeStatus{Allocatable: alloc, Capacity: alloc.DeepCopy()},
	}
	b.nodes = append(b.nodes, n)
	b.add(n)
	return n
}

type podSpec struct {
	cpu, mem int64
	class    string
	node     string
	app      string
	group    string
	grace    *int64
}

func (b *builder) pod(s podSpec) *corev1.Pod {
	b.podSeq++
	name := fmt.Sprintf("%s-%d", s.app, b.podSeq)
	created := b.tick()
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", Labels: map[string]string{"app": s.app},
			UID:               k8stypes.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", b.podSeq)),
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: corev1.PodSpec{
			NodeName:          s.node,
			PriorityClassName: s.class,
			Containers: []corev1.Container{{
				Name: "main", Image: images[b.rng.IntN(len(images))],
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    *resource.NewMilliQuantity(s.cpu, resource.DecimalSI),
					corev1.ResourceMemory: *resource.NewQuantity(s.mem*1024*1024, resource.BinarySI),
				}},
			}},
			TerminationGracePeriodSeconds: s.grace,
		},
	}
	if s.node != "" {
		start := metav1.NewTime(created)
		p.Status.StartTime = &start
		p.Status.Phase = corev1.PodRunning
	}
	if s.group != "" {
		g := s.group
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &g}
	}
	b.add(p)
	return p
}

// filters: one priority for all, so nothing preempts; every filter and score plugin of the
// default profile has something to decide.
func (b *builder) filters() {
	nodes := b.between(3, 10)
	for i := 0; i < nodes; i++ {
		n := b.node(i, int64(b.between(2, 8))*1000, int64(b.between(4, 16))*1024, 110)
		if b.chance(0.2) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
		}
		if b.chance(0.15) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "spot", Value: "true", Effect: corev1.TaintEffectPreferNoSchedule})
		}
		if b.chance(0.08) {
			n.Spec.Unschedulable = true
		}
		for _, img := range images {
			if b.chance(0.4) {
				n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{img}, SizeBytes: int64(b.between(100, 900)) * 1024 * 1024})
			}
		}
	}
	// Volumes: a bound claim whose volume lives in one zone.
	volumes := 0
	if b.chance(0.4) {
		volumes = b.between(1, 2)
		for v := 0; v < volumes; v++ {
			zone := b.pick(zones...)
			pvName, claim := fmt.Sprintf("pv-%d", v), fmt.Sprintf("data-%d", v)
			b.add(&corev1.PersistentVolume{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
				ObjectMeta: metav1.ObjectMeta{Name: pvName},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
					AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
					PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + pvName}},
					ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: claim},
					NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
					}}}},
				},
				Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
			})
			b.add(&corev1.PersistentVolumeClaim{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				// As the PV controller leaves a claim it has bound (kube-scheduler counts a claim
				// without the annotation as not yet bound).
				ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: "default",
					Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
					VolumeName:  pvName,
				},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
			})
		}
	}
	// Running pods.
	for _, n := range b.nodes {
		for k := b.between(0, 3); k > 0; k-- {
			p := b.pod(podSpec{cpu: int64(b.between(1, 10)) * 100, mem: int64(b.between(1, 8)) * 256, node: n.Name, app: b.pick(apps...)})
			if b.chance(0.2) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
			}
		}
	}
	for k := b.between(3, 10); k > 0; k-- {
		p := b.pod(podSpec{cpu: int64(b.between(1, 30)) * 100, mem: int64(b.between(1, 24)) * 256, app: b.pick(apps...)})
		b.decorate(p, volumes)
	}
}

// decorate gives a pending pod a random set of scheduling constraints.
func (b *builder) decorate(p *corev1.Pod, volumes int) {
	app := p.Labels["app"]
	if b.chance(0.2) {
		p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": b.pick(zones...)}
	}
	affinity := &corev1.Affinity{}
	if b.chance(0.2) {
		affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}}
	}
	if b.chance(0.3) {
		if affinity.NodeAffinity == nil {
			affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{
			Weight:     int32(b.between(1, 100)),
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{b.pick(zones...)}}}},
		}}
	}
	if b.chance(0.25) {
		affinity.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			TopologyKey:   "kubernetes.io/hostname",
		}}}
	}
	if b.chance(0.2) {
		affinity.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: int32(b.between(1, 100)),
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": b.pick(apps...)}},
				TopologyKey:   "topology.kubernetes.io/zone",
			},
		}}}
	}
	if b.chance(0.1) {
		if affinity.PodAffinity == nil {
			affinity.PodAffinity = &corev1.PodAffinity{}
		}
		affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": b.pick(apps...)}},
			TopologyKey:   "topology.kubernetes.io/zone",
		}}
	}
	if affinity.NodeAffinity != nil || affinity.PodAffinity != nil || affinity.PodAntiAffinity != nil {
		p.Spec.Affinity = affinity
	}
	if b.chance(0.3) {
		when := corev1.DoNotSchedule
		if b.chance(0.5) {
			when = corev1.ScheduleAnyway
		}
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew:           int32(b.between(1, 2)),
			TopologyKey:       b.pick("topology.kubernetes.io/zone", "kubernetes.io/hostname"),
			WhenUnsatisfiable: when,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
	}
	if b.chance(0.25) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	}
	if b.chance(0.15) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	}
	if b.chance(0.15) {
		// Pod-level resources: the pod's request is its own, not the sum of its containers'
		// (kube-apiserver requires it to be at least that sum).
		containers := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: *resource.NewMilliQuantity(containers+int64(b.between(0, 10))*100, resource.DecimalSI),
		}}
	}
	if volumes > 0 && b.chance(0.3) {
		claim := fmt.Sprintf("data-%d", b.rng.IntN(volumes))
		p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	}
}

// preemption: nodes nearly full of pods of mixed priorities; pending pods of higher ones.
func (b *builder) preemption(genericOff bool) {
	b.priorityClasses()
	if genericOff {
		b.add(&unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
			"featureGates": map[string]interface{}{"GenericWorkload": false}}})
	}
	nodes := b.between(2, 8)
	for i := 0; i < nodes; i++ {
		b.node(i, int64(b.between(2, 6))*1000, int64(b.between(4, 12))*1024, int64(b.between(4, 20)))
	}
	lowClasses := []string{"low", "low", "mid", "high"}
	for _, n := range b.nodes {
		free := n.Status.Allocatable.Cpu().MilliValue()
		for k := b.between(1, 5); k > 0 && free > 0; k-- {
			cpu := int64(b.between(2, 15)) * 100
			if cpu > free {
				cpu = free
			}
			free -= cpu
			spec := podSpec{cpu: cpu, mem: int64(b.between(1, 6)) * 256, class: b.pick(lowClasses...), node: n.Name, app: b.pick(apps...)}
			if b.chance(0.3) {
				g := int64(b.pick3(0, 10, 60))
				spec.grace = &g
			}
			b.pod(spec)
		}
	}
	if genericOff {
		// Pods that name a group the gate makes Arbiter and upstream ignore.
		b.add(&schedulingv1beta1.PodGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
			ObjectMeta: metav1.ObjectMeta{Name: "ignored", Namespace: "default"},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}}},
		})
	}
	for k := b.between(0, 2); k > 0; k-- {
		app := b.pick(apps...)
		pdb := &policyv1.PodDisruptionBudget{
			TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + app, Namespace: "default"},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		}
		if b.chance(0.5) {
			v := intstr.FromInt32(int32(b.between(0, 3)))
			pdb.Spec.MinAvailable = &v
		} else {
			v := intstr.FromInt32(int32(b.between(0, 2)))
			pdb.Spec.MaxUnavailable = &v
		}
		if b.chance(0.5) {
			pdb.Status.DisruptionsAllowed = int32(b.between(0, 2))
			pdb.Status.ObservedGeneration = 1
		}
		dup := false
		for _, o := range b.objs {
			if q, ok := o.(*policyv1.PodDisruptionBudget); ok && q.Name == pdb.Name {
				dup = true
			}
		}
		if !dup {
			b.add(pdb)
		}
	}
	highClasses := []string{"mid", "high", "top", "high-never", "high"}
	for k := b.between(1, 6); k > 0; k-- {
		spec := podSpec{cpu: int64(b.between(2, 25)) * 100, mem: int64(b.between(1, 8)) * 256, class: b.pick(highClasses...), app: b.pick(apps...)}
		if genericOff && b.chance(0.5) {
			spec.group = "ignored"
		}
		p := b.pod(spec)
		if b.chance(0.15) {
			p.Status.NominatedNodeName = b.nodes[b.rng.IntN(len(b.nodes))].Name
		}
		if b.chance(0.2) {
			b.decorate(p, 0)
		}
	}
}

func (b *builder) pick3(x, y, z int) int { return []int{x, y, z}[b.rng.IntN(3)] }

// gangs: running gangs (disruption mode single or all) and standalone pods; pending gangs of
// higher priority that need room.
func (b *builder) gangs() {
	b.priorityClasses()
	nodes := b.between(2, 6)
	for i := 0; i < nodes; i++ {
		b.node(i, int64(b.between(2, 6))*1000, int64(b.between(4, 12))*1024, 32)
	}
	group := 0
	newGroup := func(class string, minCount int32, mode string) string {
		group++
		name := fmt.Sprintf("pg-%d", group)
		g := &schedulingv1beta1.PodGroup{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: schedulingv1beta1.PodGroupSpec{
				SchedulingPolicy:  schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}},
				PriorityClassName: class,
			},
		}
		switch mode {
		case "single":
			g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		case "all":
			g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		}
		b.add(g)
		return name
	}
	// Running: standalone pods and gangs spread over the nodes.
	free := map[string]int64{}
	for _, n := range b.nodes {
		free[n.Name] = n.Status.Allocatable.Cpu().MilliValue()
	}
	place := func(cpu int64) string {
		for tries := 0; tries < 8; tries++ {
			n := b.nodes[b.rng.IntN(len(b.nodes))].Name
			if free[n] >= cpu {
				free[n] -= cpu
				return n
			}
		}
		return ""
	}
	for k := b.between(0, 2); k > 0; k-- {
		class := b.pick("low", "mid")
		size := b.between(2, 4)
		name := newGroup(class, int32(size), b.pick("single", "all", ""))
		cpu := int64(b.between(3, 10)) * 100
		for m := 0; m < size; m++ {
			if n := place(cpu); n != "" {
				b.pod(podSpec{cpu: cpu, mem: 256, class: class, node: n, app: "gang", group: name})
			}
		}
	}
	for k := b.between(1, 6); k > 0; k-- {
		cpu := int64(b.between(3, 15)) * 100
		if n := place(cpu); n != "" {
			b.pod(podSpec{cpu: cpu, mem: 256, class: b.pick("low", "mid", "high"), node: n, app: b.pick(apps...)})
		}
	}
	// Pending: gangs of higher priority, sometimes a standalone pod too.
	for k := b.between(1, 2); k > 0; k-- {
		class := b.pick("mid", "high", "top")
		size := b.between(1, 4)
		minCount := int32(b.between(1, size))
		name := newGroup(class, minCount, b.pick("single", "all", ""))
		cpu := int64(b.between(3, 20)) * 100
		for m := 0; m < size; m++ {
			b.pod(podSpec{cpu: cpu, mem: 256, class: class, app: "train", group: name})
		}
	}
	if b.chance(0.4) {
		b.pod(podSpec{cpu: int64(b.between(3, 20)) * 100, mem: 256, class: b.pick("mid", "high", "top"), app: b.pick(apps...)})
	}
}

// Shape builds a cluster in the shape of one of kube-scheduler's scheduler_perf workloads:
//   - "SchedulingBasic": `nodes` nodes of 4 CPU / 32Gi / 110 pods, `pods` pending pods of
//     100m / 500Mi.
//   - "PreemptionBasic": every node full of low-priority pods (4 × 900m), then `pods` pending
//     pods of 3 CPU at high priority, each of which must preempt.
func Shape(name string, nodes, pods int) []runtime.Object {
	b := &builder{rng: rand.New(rand.NewPCG(1, 2)), clock: epoch}
	if name == "PreemptionBasic" {
		b.priorityClasses()
	}
	for i := 0; i < nodes; i++ {
		b.node(i, 4000, 32*1024, 110)
	}
	switch name {
	case "SchedulingBasic":
		for i := 0; i < pods; i++ {
			b.pod(podSpec{cpu: 100, mem: 500, app: "web"})
		}
	case "PreemptionBasic":
		zero := int64(0)
		for _, n := range b.nodes {
			for k := 0; k < 4; k++ {
				b.pod(podSpec{cpu: 900, mem: 500, class: "low", node: n.Name, app: "batch", grace: &zero})
			}
		}
		for i := 0; i < pods; i++ {
			b.pod(podSpec{cpu: 3000, mem: 500, class: "top", app: "web"})
		}
	default:
		panic("unknown shape " + name)
	}
	return b.objs
}
