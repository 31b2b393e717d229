package reference

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	configscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
)

// The gates a case sets, from Arbiter's configuration (its defaults where the case is silent).
// OpportunisticBatching (on by default upstream) reuses one pod's sorted scores for the next pod
// of the same signature; Arbiter scores every pod, so the reference switches it off and says so
// in docs/upstream-rules.md.
func caseGates(objs *input.Objects) map[string]bool {
	generic := objs.Gate("GenericWorkload", true)
	composite := generic && objs.Gate("CompositePodGroup", true)
	return map[string]bool{
		"GenericWorkload":                 generic,
		"CompositePodGroup":               composite,
		"TopologyAwareWorkloadScheduling": composite,
		"PodLevelResources":               objs.Gate("PodLevelResources", true),
		"OpportunisticBatching":           false,
	}
}

func gatesReport(objs *input.Objects) map[string]bool { return caseGates(objs) }

// setFeatureGates sets the case's gates on the process's gate (upstream reads gates per process)
// and returns what puts the previous values back.
func setFeatureGates(objs *input.Objects) (func(), error) {
	want := caseGates(objs)
	previous := map[string]bool{}
	for name := range want {
		previous[name] = utilfeature.DefaultFeatureGate.Enabled(featureName(name))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(want); err != nil {
		return nil, fmt.Errorf("feature gates %v: %v", want, err)
	}
	return func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(previous) }, nil
}

// The names of the reference's own plugins.
const (
	tiePreemptionName = "DefaultPreemptionWithTies"
	scoreObserverName = "FeasibleNodesObserver"
	tieSortName       = "PrioritySortWithTies"
)

// buildProfiles decodes the case's configuration with upstream's own (strict) decoder, or takes
// upstream's defaults, and swaps DefaultPreemption for the same plugin with its random tie made
// explicit; an observer that scores every node 0 records the feasible nodes of each cycle.
func buildProfiles(objs *input.Objects, r *run) ([]config.KubeSchedulerProfile, []scheduler.Option, error) {
	var cfg *config.KubeSchedulerConfiguration
	if objs.Config != nil {
		obj, _, err := configscheme.Codecs.UniversalDecoder().Decode(objs.Config, nil, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("KubeSchedulerConfiguration: %v", err)
		}
		c, ok := obj.(*config.KubeSchedulerConfiguration)
		if !ok {
			return nil, nil, fmt.Errorf("KubeSchedulerConfiguration: decoded as %T", obj)
		}
		cfg = c
	} else {
		c, err := latest.Default()
		if err != nil {
			return nil, nil, err
		}
		cfg = c
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, nil, fmt.Errorf("KubeSchedulerConfiguration: %v", err)
	}
	profiles := make([]config.KubeSchedulerProfile, 0, len(cfg.Profiles))
	for _, p := range cfg.Profiles {
		p := *p.DeepCopy()
		swap := func(set *config.PluginSet, from, to string) {
			for i := range set.Enabled {
				if set.Enabled[i].Name == from {
					set.Enabled[i].Name = to
				}
			}
			for i := range set.Disabled {
				if set.Disabled[i].Name == from {
					set.Disabled[i].Name = to
				}
			}
		}
		swap(&p.Plugins.MultiPoint, defaultpreemption.Name, tiePreemptionName)
		swap(&p.Plugins.PostFilter, defaultpreemption.Name, tiePreemptionName)
		swap(&p.Plugins.PreEnqueue, defaultpreemption.Name, tiePreemptionName)
		swap(&p.Plugins.MultiPoint, queuesort.Name, tieSortName)
		swap(&p.Plugins.QueueSort, queuesort.Name, tieSortName)
		p.Plugins.MultiPoint.Enabled = append(p.Plugins.MultiPoint.Enabled, config.Plugin{Name: scoreObserverName, Weight: 1})
		for _, pc := range p.PluginConfig {
			if pc.Name == defaultpreemption.Name {
				p.PluginConfig = append(p.PluginConfig, config.PluginConfig{Name: tiePreemptionName, Args: pc.Args})
				break
			}
		}
		profiles = append(profiles, p)
	}
	fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	registry := frameworkruntime.Registry{
		tiePreemptionName: func(ctx context.Context, args runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
			dp, err := defaultpreemption.New(ctx, args, fh, fts)
			if err != nil {
				return nil, err
			}
			pl := &tiePreemption{DefaultPreemption: dp, r: r}
			dp.Evaluator = preemption.NewEvaluator(tiePreemptionName, fh, pl, dp.Executor)
			return pl, nil
		},
		scoreObserverName: func(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
			return &scoreObserver{r: r}, nil
		},
		tieSortName: func(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
			return &tieSort{}, nil
		},
	}
	opts := []scheduler.Option{
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	}
	return profiles, opts, nil
}

// tieSort is PrioritySort with its tie made explicit. Upstream's order of two entries of equal
// priority and queue timestamp is the heap's (and the order a move loop met them in, over a
// map): any is possible. Here the entry whose pod (or group's earliest member) was created first
// goes first, then the one named first: the order `arbiter plan` keeps (queue arrival).
type tieSort struct{ queuesort.PrioritySort }

func (t *tieSort) Name() string { return tieSortName }

func (t *tieSort) Less(a, b fwk.QueuedEntityInfo) bool {
	if t.PrioritySort.Less(a, b) {
		return true
	}
	if t.PrioritySort.Less(b, a) {
		return false
	}
	ca, na := arrival(a)
	cb, nb := arrival(b)
	if !ca.Equal(cb) {
		return ca.Before(cb)
	}
	return na < nb
}

// arrival is when an entry's pod was created (a group's earliest member) and its name.
func arrival(e fwk.QueuedEntityInfo) (time.Time, string) {
	switch v := e.(type) {
	case *framework.QueuedPodInfo:
		return v.Pod.CreationTimestamp.Time, podKey(v.Pod)
	case *framework.QueuedPodGroupInfo:
		var first time.Time
		for _, list := range v.QueuedPodInfos {
			for _, p := range list {
				if t := p.Pod.CreationTimestamp.Time; first.IsZero() || t.Before(first) {
					first = t
				}
			}
		}
		return first, v.GetNamespace() + "/" + v.GetName()
	}
	return time.Time{}, ""
}

// scoreObserver records the nodes scored in a cycle (the feasible nodes) and adds 0 to each.
type scoreObserver struct{ r *run }

func (s *scoreObserver) Name() string { return scoreObserverName }

func (s *scoreObserver) Score(_ context.Context, _ fwk.CycleState, _ *corev1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s.r.mu.Lock()
	s.r.observed = append(s.r.observed, nodeInfo)
	s.r.mu.Unlock()
	return 0, nil
}

func (s *scoreObserver) ScoreExtensions() fwk.ScoreExtensions { return nil }

// wrapSchedulePod records the queue's pop order, and where the top score is shared settles
// upstream's random pick (the Randomizer of each node's score) toward Arbiter's node.
func (r *run) wrapSchedulePod(orig func(context.Context, framework.Framework, fwk.CycleState, *framework.QueuedPodInfo) (scheduler.ScheduleResult, error)) func(context.Context, framework.Framework, fwk.CycleState, *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
	return func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		key := podKey(podInfo.Pod)
		r.mu.Lock()
		if !r.popped[key] {
			r.popped[key] = true
			r.popOrder = append(r.popOrder, key)
		}
		r.current = key
		r.observed = nil
		r.attempts[key]++
		r.triedAt[key] = r.version
		r.mu.Unlock()

		result, err := orig(ctx, f, state, podInfo)
		r.mu.Lock()
		observed := r.observed
		r.observed = nil
		r.mu.Unlock()
		if err != nil || len(observed) < 2 {
			return result, err
		}
		scores, status := f.RunScorePlugins(ctx, state, podInfo.Pod, observed)
		if !status.IsSuccess() {
			return result, err
		}
		best := int64(math.MinInt64)
		var tied []string
		if debug {
			for _, s := range scores {
				fmt.Fprintf(os.Stderr, "kube-reference: %s on %s: total %d %v\n", key, s.Name, s.TotalScore, s.Scores)
			}
		}
		for _, s := range scores {
			switch {
			case s.TotalScore > best:
				best, tied = s.TotalScore, []string{s.Name}
			case s.TotalScore == best:
				tied = append(tied, s.Name)
			}
		}
		if len(tied) < 2 {
			return result, err
		}
		sort.Strings(tied)
		choice := tied[0]
		r.mu.Lock()
		r.ties++
		// Before the pod has a nomination here, a tie is one of a group preemption's dry runs (or
		// a first cycle): Arbiter's nomination says where it put the pod then; after, its binding.
		hint, ok := r.hintBindings[key]
		if n, nominated := r.hintNominations[key]; nominated && r.nominated[key] == "" {
			hint, ok = n, true
		}
		if ok && contains(tied, hint) {
			choice = hint
			r.taken++
		}
		r.mu.Unlock()
		if debug {
			fmt.Fprintf(os.Stderr, "kube-reference: %s: tie among %v, upstream took %s, reference takes %s\n", key, tied, result.SuggestedHost, choice)
		}
		result.SuggestedHost = choice
		return result, err
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tiePreemption is upstream's DefaultPreemption with its two random choices made explicit: the
// candidate offset is 0 (every node is a candidate in the clusters compared, so the offset only
// reorders them), and pickOneNodeForPreemption's last tie ("the first such node", map order)
// goes to Arbiter's node when it is tied, else to the first by name.
type tiePreemption struct {
	*defaultpreemption.DefaultPreemption
	r *run
}

func (p *tiePreemption) Name() string { return tiePreemptionName }

func (p *tiePreemption) GetOffsetAndNumCandidates(numNodes int32) (int32, int32) {
	_, n := p.DefaultPreemption.GetOffsetAndNumCandidates(numNodes)
	return 0, n
}

// SelectVictimsOnNode is upstream's; the number of PDB violations of each node's candidate is
// kept for the report.
func (p *tiePreemption) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, preemptor *corev1.Pod, nodeInfo fwk.NodeInfo, all []*preemption.DomainVictim, pdbs []*policy.PodDisruptionBudget) ([]*corev1.Pod, int, *fwk.Status) {
	victims, violations, status := p.DefaultPreemption.SelectVictimsOnNode(ctx, state, preemptor, nodeInfo, all, pdbs)
	if status.IsSuccess() {
		p.r.mu.Lock()
		p.r.candidates[nodeInfo.Node().Name] = candidate{victims: victims, pdbViolations: violations}
		p.r.mu.Unlock()
	}
	return victims, violations, status
}

// candidate is what SelectVictimsOnNode found on one node in the current cycle.
type candidate struct {
	victims       []*corev1.Pod
	pdbViolations int
}

// PostFilter is upstream's; a preemption it carries out (a nominated node, Success) is recorded
// with the victims of the chosen node's candidate that it evicts: one already terminating gets no
// second delete and no second Preempted event (prepareCandidateAsync), so it is not this
// preemption's; a decision that evicts nobody new is no preemption.
func (p *tiePreemption) PostFilter(ctx context.Context, state fwk.CycleState, pod *corev1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	p.r.mu.Lock()
	p.r.candidates = map[string]candidate{}
	p.r.mu.Unlock()
	result, status := p.DefaultPreemption.PostFilter(ctx, state, pod, m)
	if !status.IsSuccess() || result == nil || result.NominatingInfo == nil || result.NominatedNodeName == "" {
		return result, status
	}
	node := result.NominatedNodeName
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	chosen := p.r.candidates[node]
	violations := chosen.pdbViolations
	pr := &plan.Preemption{Preemptor: podKey(pod), PreemptorKind: "Pod", Node: plan.Ptr(node), PDBViolations: &violations}
	for _, v := range chosen.victims {
		if v.DeletionTimestamp != nil {
			// Its share of numPDBViolations cannot be told apart from the others': the count
			// is not compared for this preemption.
			pr.PDBViolations = nil
			continue
		}
		var priority int32
		if v.Spec.Priority != nil {
			priority = *v.Spec.Priority
		}
		pr.Victims = append(pr.Victims, plan.Victim{Name: podKey(v), Node: v.Spec.NodeName, Priority: priority})
	}
	if len(pr.Victims) > 0 {
		p.r.preemptions = append(p.r.preemptions, pr)
		p.r.usedPreemptions[podKey(pod)]++ // the hints are Arbiter's preemptions: those that evict
	}
	return result, status
}

// OrderedScoreFuncs are pickOneNodeForPreemption's five criteria, in its order, then the tie.
func (p *tiePreemption) OrderedScoreFuncs(_ context.Context, nodesToVictims map[string]*extenderv1.Victims) []func(node string) int64 {
	r := p.r
	r.mu.Lock()
	key := r.current
	hint := ""
	if hints := r.hintPreemptions[key]; r.usedPreemptions[key] < len(hints) {
		hint = hints[r.usedPreemptions[key]]
	} else {
		// A decision that evicts nobody new is no preemption in Arbiter's plan: its node is the
		// pod's nomination there.
		hint = r.hintNominations[key]
	}
	r.mu.Unlock()
	var names []string
	for n := range nodesToVictims {
		names = append(names, n)
	}
	sort.Strings(names)
	rank := map[string]int64{}
	for i, n := range names {
		rank[n] = int64(len(names) - i)
	}
	return []func(string) int64{
		func(node string) int64 { return -nodesToVictims[node].NumPDBViolations },
		func(node string) int64 {
			return -int64(corev1helpers.PodPriority(nodesToVictims[node].Pods[0]))
		},
		func(node string) int64 {
			var sum int64
			for _, pod := range nodesToVictims[node].Pods {
				sum += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(nodesToVictims[node].Pods)) },
		func(node string) int64 {
			earliest := util.GetEarliestPodStartTime(nodesToVictims[node])
			if earliest == nil {
				return math.MinInt64
			}
			return earliest.UnixNano()
		},
		// Upstream: "the first such node" of a map's order. Here: counted as a tie, settled
		// toward Arbiter's node.
		func(node string) int64 {
			if node == hint {
				return math.MaxInt64
			}
			return rank[node]
		},
	}
}

func featureName(name string) featuregate.Feature { return featuregate.Feature(name) }

// debug prints each cycle's scores on standard error (KUBE_REFERENCE_DEBUG=1).
var debug = os.Getenv("KUBE_REFERENCE_DEBUG") != ""
