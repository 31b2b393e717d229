// Package reference runs the real kube-scheduler (k8s.io/kubernetes/pkg/scheduler, its default
// profile or the case's configuration) on one case, the way `arbiter plan` plans it: over a fake
// clientset and real informers, with its real queue, cycles, DefaultPreemption and workload-aware
// preemption, on a virtual clock.
//
// The virtual clock is a testing/synctest bubble: Run must be called inside one (see package
// bubble). Within it every goroutine of the scheduler, its informers and the fake API runs on
// the bubble's clock, and synctest.Wait tells when all of them are idle, so each scheduling
// cycle's binding, events and requeues have settled before the next cycle starts. Victims of
// preemption terminate after their grace period in virtual time, as a kubelet would stop them.
//
// Where upstream chooses at random among equals (the top score's ties; the last tie of
// pickOneNodeForPreemption), Run computes every choice upstream could make and takes the one
// Arbiter took (Options.Hints) when it is among them; otherwise the first by name. Both planners
// then continue from the same state.
package reference

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	"arbiter.dev/upstream/internal/input"
	"arbiter.dev/upstream/internal/plan"
)

// Options for one run.
type Options struct {
	// Hints is Arbiter's plan of the same case: where upstream picks at random among equals,
	// Arbiter's pick is taken when it is one of upstream's.
	Hints *plan.Plan
	// MaxVirtualTime bounds the run (default one virtual hour after the last pod joined).
	MaxVirtualTime time.Duration
}

// Result is the reference's plan with what the run saw.
type Result struct {
	Plan *plan.Plan
	// Ties counts decisions where upstream had several equal choices; HintsTaken those where
	// Arbiter's choice was one of them.
	Ties, HintsTaken int
	// Errors upstream reported on the way (it would have logged them).
	Errors []string
}

// The runtime's signal-forwarding goroutine starts at the first signal.Notify (the scheduler's
// dependencies call it); start it when this package loads, outside any bubble, so that a Notify
// inside a bubble does not tie that goroutine to it.
func init() { signal.Notify(make(chan os.Signal, 1), syscall.SIGURG) }

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// run is one case's state, shared by the reactors, the recorder and the hooks.
type run struct {
	mu        sync.Mutex
	opts      Options
	tracker   clienttesting.ObjectTracker
	popOrder  []string
	popped    map[string]bool
	nominated map[string]string
	lastFail  map[string]string
	groupOf   map[string]string
	// preemptions in the order they were carried out
	preemptions []*plan.Preemption
	lastEvent   map[string]time.Time // preemptor key -> time of its last Preempted event
	candidates  map[string]candidate // node -> the current pod preemptor's candidate there
	attempts    map[string]int
	deleting    int
	// victims in their grace period, by when they go (the main loop deletes those due, all at
	// once, before the next cycle: as plan does; timers of their own would race with it)
	terminations []termination
	// open while a scheduling cycle runs: preemption's API calls wait for the cycle to end
	cycleDone chan struct{}
	ties      int
	taken     int
	// per preemptor, how many preemptions of Arbiter's plan have been matched, and per pod how
	// many bindings (for the hints)
	hintPreemptions map[string][]string
	hintBindings    map[string]string
	hintNominations map[string]string
	usedPreemptions map[string]int
	// version counts changes to the cluster (bindings, deletions); triedAt is the version each
	// pod was last tried against
	version int
	triedAt map[string]int
	// budgets whose input gave a status (they lose one allowed disruption per evicted pod), and
	// the evictions counted against each
	pdbGiven   map[string]bool
	pdbEvicted map[string]int32
	// errors upstream reported through HandleError (they would be logged)
	errors []string
	// the pod of the cycle under way, the nodes its Score phase saw, and every binding made
	current  string
	observed []fwk.NodeInfo
	bound    map[string]string
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// Run plans one case with the real scheduler. It must run inside a synctest bubble.
func Run(objs *input.Objects, opts Options) (*Result, error) {
	if opts.MaxVirtualTime == 0 {
		opts.MaxVirtualTime = time.Hour
	}
	restore, err := setFeatureGates(objs)
	if err != nil {
		return nil, err
	}
	defer restore()

	r := &run{
		opts:            opts,
		popped:          map[string]bool{},
		nominated:       map[string]string{},
		lastFail:        map[string]string{},
		groupOf:         map[string]string{},
		lastEvent:       map[string]time.Time{},
		candidates:      map[string]candidate{},
		attempts:        map[string]int{},
		hintPreemptions: map[string][]string{},
		hintBindings:    map[string]string{},
		hintNominations: map[string]string{},
		usedPreemptions: map[string]int{},
		bound:           map[string]string{},
		triedAt:         map[string]int{},
		pdbGiven:        objs.PDBStatusGiven,
		pdbEvicted:      map[string]int32{},
	}
	if opts.Hints != nil {
		for _, p := range opts.Hints.Pods {
			if p.Node != nil {
				r.hintBindings[p.Name] = *p.Node
			}
			if p.NominatedNode != nil && *p.NominatedNode != "" {
				r.hintNominations[p.Name] = *p.NominatedNode
			}
		}
		for _, pr := range opts.Hints.Preemptions {
			node := ""
			if pr.Node != nil {
				node = *pr.Node
			}
			r.hintPreemptions[pr.Preemptor] = append(r.hintPreemptions[pr.Preemptor], node)
		}
	}

	// The clock: the latest time in the input is when the plan runs.
	// The clock: the plan runs at the latest time in the input. Pending pods join the queue at
	// their creation times before that, so the clock starts at the first of them.
	start := objs.LatestTime()
	if start.Before(time.Now()) {
		start = time.Now()
	}
	first := start
	for _, p := range objs.Pods {
		if t := p.CreationTimestamp.Time; p.Spec.NodeName == "" && !t.IsZero() && t.Before(first) {
			first = t
		}
	}
	if now := time.Now(); first.After(now) {
		time.Sleep(first.Sub(now))
	}

	pods, err := admit(objs)
	if err != nil {
		return nil, err
	}
	// Nodes are created once the informers run, in input order, as a cluster's nodes join it:
	// the scheduler's cache sees them in that order (an image's size, for one, is the first
	// listing node's), where a fake clientset's initial list comes in no set order.
	var initial []runtime.Object
	for _, ns := range objs.Namespaces {
		initial = append(initial, ns.DeepCopy())
	}
	for _, pc := range objs.PriorityClasses {
		initial = append(initial, pc.DeepCopy())
	}
	for _, pdb := range pdbsWithStatus(objs.PDBs, objs.PDBStatusGiven, pods) {
		initial = append(initial, pdb)
	}
	for _, w := range objs.Workloads {
		initial = append(initial, w.DeepCopy())
	}
	for _, g := range objs.PodGroups {
		initial = append(initial, admitGroup(g, objs))
	}
	for _, g := range objs.CompositePodGroups {
		initial = append(initial, g.DeepCopy())
	}
	for _, o := range objs.PVCs {
		initial = append(initial, o.DeepCopy())
	}
	for _, o := range objs.PVs {
		initial = append(initial, o.DeepCopy())
	}
	for _, o := range objs.StorageClasses {
		initial = append(initial, o.DeepCopy())
	}
	for _, o := range objs.CSINodes {
		initial = append(initial, o.DeepCopy())
	}
	// Running pods start in input order before the plan, unless their startTime says when.
	running := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			running++
		}
	}
	i := 0
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		i++
		if p.Status.StartTime == nil {
			t := metav1.NewTime(start.Add(-time.Duration(running-i+1) * time.Second))
			p.Status.StartTime = &t
		}
		if p.Status.Phase == "" {
			p.Status.Phase = corev1.PodRunning
		}
		initial = append(initial, p)
	}

	// Upstream rate-limits its error handler by sleeping since the last error, by a clock that
	// is not this bubble's; here errors are kept for the report instead.
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(_ context.Context, err error, msg string, kv ...interface{}) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			msg += ": " + err.Error()
		}
		r.errors = append(r.errors, fmt.Sprintf("%s %v", msg, kv))
	}}

	client, tracker, err := newClientset(initial...)
	if err != nil {
		return nil, err
	}
	r.tracker = tracker
	gated := gatedClient{Interface: client, r: r}
	client.PrependReactor("create", "pods", r.bindReactor)
	client.PrependReactor("delete", "pods", r.deleteReactor)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = klog.NewContext(ctx, klog.Background())

	profiles, schedOpts, err := buildProfiles(objs, r)
	if err != nil {
		return nil, err
	}
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	recorderFactory := profile.RecorderFactory(func(string) events.EventRecorderLogger { return &recorder{r: r} })
	schedOpts = append(schedOpts, scheduler.WithProfiles(profiles...))
	sched, err := scheduler.New(ctx, gated, informerFactory, nil, recorderFactory, schedOpts...)
	if err != nil {
		return nil, fmt.Errorf("kube-scheduler: %v", err)
	}
	original := sched.SchedulePod
	sched.SchedulePod = r.wrapSchedulePod(original)
	failure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominating *fwk.NominatingInfo, start time.Time) {
		// The nominations preemption makes (a pod's own, or a group's for its members). Upstream
		// also sets nominatedNodeName where a pod is expected to land while it waits to be bound
		// (a gang's members at Permit); those are not preemption's and plan does not report them.
		// A group's members are all tried when the group is (its pop counts an attempt for each),
		// even those its cycle never ran the algorithm for (the gang could no longer be met).
		if podInfo != nil && podInfo.Pod != nil {
			key := podKey(podInfo.Pod)
			r.mu.Lock()
			if podInfo.Attempts > r.attempts[key] {
				r.attempts[key] = podInfo.Attempts
			}
			if !r.popped[key] {
				r.popped[key] = true
				r.popOrder = append(r.popOrder, key)
			}
			r.mu.Unlock()
		}
		// A failure that clears the nomination (preemption found no candidate) clears it here too.
		if nominating != nil && nominating.Mode() == fwk.ModeOverride && podInfo != nil && podInfo.Pod != nil {
			r.mu.Lock()
			if nominating.NominatedNodeName != "" {
				r.nominated[podKey(podInfo.Pod)] = nominating.NominatedNodeName
			} else {
				delete(r.nominated, podKey(podInfo.Pod))
			}
			r.mu.Unlock()
		}
		failure(ctx, f, podInfo, status, nominating, start)
	}

	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	logger := klog.FromContext(ctx)
	sched.SchedulingQueue.Run(logger)
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Run(logger)
	}
	synctest.Wait()
	for _, n := range objs.Nodes {
		if _, err := client.CoreV1().Nodes().Create(ctx, n.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("node %s: %v", n.Name, err)
		}
		synctest.Wait()
	}

	// Pending pods join the queue in the order they were created.
	for _, p := range objs.PendingInQueueOrder(start) {
		admitted := pods[podKey(p)]
		if at := p.CreationTimestamp.Time; at.After(time.Now()) {
			time.Sleep(at.Sub(time.Now()))
		}
		if admitted.Spec.SchedulingGroup != nil && admitted.Spec.SchedulingGroup.PodGroupName != nil {
			r.groupOf[podKey(p)] = p.Namespace + "/" + *admitted.Spec.SchedulingGroup.PodGroupName
		}
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, admitted, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("pod %s: %v", podKey(p), err)
		}
		synctest.Wait()
	}
	if now := time.Now(); start.After(now) {
		time.Sleep(start.Sub(now))
	}
	pendingOrder := objs.PendingInQueueOrder(start)

	deadline := time.Now().Add(opts.MaxVirtualTime)
	var lastCycleAt time.Time
	cyclesAt := 0
	for time.Now().Before(deadline) {
		r.terminateDue()
		synctest.Wait()
		active, backoff := queueLengths(sched)
		// With activeQ empty, upstream's Pop takes backoffQ's head before its backoff expires
		// (SchedulerPopFromBackoffQ); a pod that keeps failing at one instant is bounded here.
		if now := time.Now(); now.Equal(lastCycleAt) {
			cyclesAt++
		} else {
			lastCycleAt, cyclesAt = now, 0
		}
		if (active > 0 || backoff > 0) && cyclesAt < 1000 {
			r.scheduleOne(ctx, sched)
			continue
		}
		if next, ok := r.nextTermination(); ok {
			if wait := next.Sub(time.Now()); wait > time.Second || backoff > 0 {
				time.Sleep(time.Second)
			} else {
				time.Sleep(wait)
			}
			continue
		}
		if backoff > 0 {
			time.Sleep(time.Second)
			continue
		}
		// Idle. Pods left unschedulable were last tried against some cluster state; if the
		// cluster changed since, upstream's leftover flush (every 30 s, for pods unschedulable
		// for podMaxInUnschedulablePodsDuration) tries them again: wait for it, once per change.
		// Otherwise nothing more can change (the rule `arbiter plan` runs by).
		if !r.stale() {
			break
		}
		for waited := time.Duration(0); waited <= 6*time.Minute; waited += 30 * time.Second {
			time.Sleep(30 * time.Second)
			synctest.Wait()
			if a, b := queueLengths(sched); a > 0 || b > 0 {
				break
			}
		}
	}
	synctest.Wait()

	result := r.collect(client, pendingOrder, pods)
	cancel()
	sched.SchedulingQueue.Close()
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Close()
	}
	informerFactory.Shutdown()
	_ = sched.Profiles.Close()
	result.Plan.FeatureGates = gatesReport(objs)
	return result, nil
}

var pdbsGVR = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// recountBudgets keeps the budgets' status as a running disruption controller would after a pod
// is bound or starts terminating (`evicted`): a computed status is recounted from the pods; a
// status the input gave loses one allowed disruption per matching pod evicted. This is the rule
// `arbiter plan` keeps (sched/preemption/disruption.cc).
func (r *run) recountBudgets(evicted *corev1.Pod) {
	objs, err := r.tracker.List(pdbsGVR, schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, "")
	if err != nil {
		return
	}
	podObjs, err := r.tracker.List(podsGVR, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "")
	if err != nil {
		return
	}
	var pods []*corev1.Pod
	for _, p := range podObjs.(*corev1.PodList).Items {
		pods = append(pods, p.DeepCopy())
	}
	for _, item := range objs.(*policyv1.PodDisruptionBudgetList).Items {
		pdb := item.DeepCopy()
		key := pdb.Namespace + "/" + pdb.Name
		if r.pdbGiven[key] {
			if evicted == nil || evicted.Namespace != pdb.Namespace {
				continue
			}
			selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || !selector.Matches(labels.Set(evicted.Labels)) {
				continue
			}
			if pdb.Status.DisruptionsAllowed > 0 {
				pdb.Status.DisruptionsAllowed--
			}
		} else {
			budgetStatus(pdb, pods)
			if equality.Semantic.DeepEqual(pdb.Status, item.Status) {
				continue
			}
		}
		_ = r.tracker.Update(pdbsGVR, pdb, pdb.Namespace)
	}
}

// stale reports whether a pod still waiting was last tried before the cluster's latest change,
// and marks every pod as tried against the current state (one retry per change).
func (r *run) stale() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	stale := false
	for key, at := range r.triedAt {
		if _, bound := r.bound[key]; !bound && at < r.version {
			stale = true
		}
		r.triedAt[key] = r.version
	}
	return stale
}

// queueLengths reads the queue's active and backoff lengths from its summary line.
func queueLengths(sched *scheduler.Scheduler) (active, backoff int) {
	_, summary := sched.SchedulingQueue.PendingPods()
	for _, part := range strings.Split(summary, ";") {
		kv := strings.SplitN(strings.TrimSpace(part), ":", 2)
		if len(kv) != 2 {
			continue
		}
		var n int
		fmt.Sscanf(kv[1], "%d", &n)
		switch kv[0] {
		case "activeQ":
			active = n
		case "backoffQ":
			backoff = n
		}
	}
	return
}

// bindReactor does what kube-apiserver does with a pods/binding: sets spec.nodeName.
func (r *run) bindReactor(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	binding := create.GetObject().(*corev1.Binding)
	obj, err := r.tracker.Get(podsGVR, binding.Namespace, binding.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	if pod.Spec.NodeName != "" {
		return true, nil, fmt.Errorf("pod %s/%s is already assigned to node %q", pod.Namespace, pod.Name, pod.Spec.NodeName)
	}
	pod.Spec.NodeName = binding.Target.Name
	now := metav1.Now()
	pod.Status.StartTime = &now
	pod.Status.Phase = corev1.PodRunning
	if err := r.tracker.Update(podsGVR, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	r.mu.Lock()
	r.bound[podKey(pod)] = pod.Spec.NodeName
	r.version++
	r.mu.Unlock()
	r.recountBudgets(nil)
	return true, binding, nil
}

// deleteReactor does what kube-apiserver and the kubelet do with a pod deleted on a node: the
// pod is marked terminating (deletionTimestamp) and goes away after its grace period.
func (r *run) deleteReactor(action clienttesting.Action) (bool, runtime.Object, error) {
	del, ok := action.(clienttesting.DeleteAction)
	if !ok || action.GetSubresource() != "" {
		return false, nil, nil
	}
	obj, err := r.tracker.Get(podsGVR, del.GetNamespace(), del.GetName())
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	if pod.DeletionTimestamp != nil {
		return true, pod, nil
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if opts := del.GetDeleteOptions(); opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	if pod.Spec.NodeName == "" {
		return false, nil, nil
	}
	if grace <= 0 {
		// Gone at once; it still takes its disruption from a budget whose status was given.
		if err := r.tracker.Delete(podsGVR, pod.Namespace, pod.Name); err != nil {
			return true, nil, err
		}
		r.mu.Lock()
		r.version++
		r.mu.Unlock()
		r.recountBudgets(pod)
		return true, nil, nil
	}
	now := metav1.NewTime(time.Now().Add(time.Duration(grace) * time.Second))
	pod.DeletionTimestamp = &now
	pod.DeletionGracePeriodSeconds = &grace
	if err := r.tracker.Update(podsGVR, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	r.mu.Lock()
	r.deleting++
	r.version++
	r.mu.Unlock()
	r.recountBudgets(pod)
	r.mu.Lock()
	r.terminations = append(r.terminations, termination{at: now.Time, namespace: pod.Namespace, name: pod.Name})
	r.mu.Unlock()
	return true, pod, nil
}

// versionedTracker is the fake clientset's object store with resourceVersions, as an API
// server keeps them: the scheduler drops a pod update whose resourceVersion did not change
// (updatePodInSchedulingQueue), so without them no pod update (a nominatedNodeName written by
// preemption, for one) would ever reach its queue.
type versionedTracker struct {
	clienttesting.ObjectTracker
	version atomic.Int64
}

func (t *versionedTracker) stamp(obj runtime.Object) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(strconv.FormatInt(t.version.Add(1), 10))
	return obj, nil
}

func (t *versionedTracker) Add(obj runtime.Object) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Add(obj)
}

func (t *versionedTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *versionedTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *versionedTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	obj, err := t.stamp(obj)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// newClientset is fake.NewSimpleClientset over a versionedTracker.
func newClientset(objects ...runtime.Object) (*fake.Clientset, *versionedTracker, error) {
	tracker := &versionedTracker{ObjectTracker: clienttesting.NewObjectTracker(clientscheme.Scheme, clientscheme.Codecs.UniversalDecoder())}
	for _, obj := range objects {
		if err := tracker.Add(obj); err != nil {
			return nil, nil, err
		}
	}
	cs := &fake.Clientset{}
	cs.AddReactor("*", "*", clienttesting.ObjectReaction(tracker))
	cs.AddWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := tracker.Watch(action.GetResource(), action.GetNamespace(), opts)
		if err != nil {
			return false, nil, err
		}
		return true, w, nil
	})
	return cs, tracker, nil
}

type termination struct {
	at              time.Time
	namespace, name string
}

// terminateDue deletes the victims whose grace period is over, in the order they were deleted.
func (r *run) terminateDue() {
	r.mu.Lock()
	var due, rest []termination
	now := time.Now()
	for _, t := range r.terminations {
		if !t.at.After(now) {
			due = append(due, t)
		} else {
			rest = append(rest, t)
		}
	}
	r.terminations = rest
	r.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		_ = r.tracker.Delete(podsGVR, t.namespace, t.name)
		r.mu.Lock()
		r.deleting--
		r.version++
		r.mu.Unlock()
	}
	if len(due) > 0 {
		r.recountBudgets(nil) // the disruption controller counts the pods that are gone
	}
}

func (r *run) nextTermination() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	for _, t := range r.terminations {
		if next.IsZero() || t.at.Before(next) {
			next = t.at
		}
	}
	return next, !next.IsZero()
}

// scheduleOne runs one scheduling cycle. Preemption deletes its victims from a goroutine of its
// own (SchedulerAsyncPreemption); against a real API server those calls take longer than the
// cycle's own end, where the preemptor is requeued and held by the PreEnqueue check "waiting for
// the preemption to finish". The fake clientset answers at once, so the deletes wait for the
// cycle to end: the order a real cluster sees, every time.
func (r *run) scheduleOne(ctx context.Context, sched *scheduler.Scheduler) {
	done := make(chan struct{})
	r.mu.Lock()
	r.cycleDone = done
	r.mu.Unlock()
	sched.ScheduleOne(ctx)
	r.mu.Lock()
	r.cycleDone = nil
	r.mu.Unlock()
	close(done)
}

// afterCycle blocks until the cycle under way (if any) ends; if the cycle itself waits (a
// synchronous preemption), a millisecond of virtual time lets the call through.
func (r *run) afterCycle() {
	r.mu.Lock()
	done := r.cycleDone
	r.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(time.Millisecond):
	}
}

// gatedClient is the scheduler's clientset: pod deletions wait for the cycle to end.
type gatedClient struct {
	kubernetes.Interface
	r *run
}

func (c gatedClient) CoreV1() corev1client.CoreV1Interface {
	return gatedCore{CoreV1Interface: c.Interface.CoreV1(), r: c.r}
}

type gatedCore struct {
	corev1client.CoreV1Interface
	r *run
}

func (c gatedCore) Pods(namespace string) corev1client.PodInterface {
	return gatedPods{PodInterface: c.CoreV1Interface.Pods(namespace), r: c.r}
}

type gatedPods struct {
	corev1client.PodInterface
	r *run
}

func (p gatedPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	p.r.afterCycle()
	return p.PodInterface.Delete(ctx, name, opts)
}

// Patch is observed for one thing the failure handler does not see: a preemption clearing the
// nominations of lower-priority pods on its node (clearNominatedNodeName), which leaves a pending
// pod with no nomination.
func (p gatedPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Pod, error) {
	pod, err := p.PodInterface.Patch(ctx, name, pt, data, opts, subresources...)
	if err == nil && pod != nil && pod.Spec.NodeName == "" && pod.Status.NominatedNodeName == "" {
		p.r.mu.Lock()
		delete(p.r.nominated, podKey(pod))
		p.r.mu.Unlock()
	}
	return pod, err
}

// recorder keeps the events the scheduler records: FailedScheduling's message per pod and each
// Preempted victim with its preemptor.
type recorder struct{ r *run }

func (rc *recorder) WithLogger(klog.Logger) events.EventRecorderLogger { return rc }

func (rc *recorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	r := rc.r
	message := fmt.Sprintf(note, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch reason {
	case "FailedScheduling":
		if pod, ok := regarding.(*corev1.Pod); ok {
			r.lastFail[podKey(pod)] = message
		}
	case "Preempted":
		victim, ok := regarding.(*corev1.Pod)
		if !ok {
			return
		}
		kind, name := preemptorOf(related)
		if kind == "Pod" {
			return // recorded by the preemption plugin's PostFilter, victims and all
		}
		now := time.Now()
		var current *plan.Preemption
		if last, ok := r.lastEvent[kind+" "+name]; ok && last.Equal(now) {
			for i := len(r.preemptions) - 1; i >= 0; i-- {
				if r.preemptions[i].Preemptor == name && r.preemptions[i].PreemptorKind == kind {
					current = r.preemptions[i]
					break
				}
			}
		}
		if current == nil {
			current = &plan.Preemption{Preemptor: name, PreemptorKind: kind}
			r.preemptions = append(r.preemptions, current)
			r.usedPreemptions[name]++
		}
		r.lastEvent[kind+" "+name] = now
		var priority int32
		if victim.Spec.Priority != nil {
			priority = *victim.Spec.Priority
		}
		current.Victims = append(current.Victims, plan.Victim{Name: podKey(victim), Node: victim.Spec.NodeName, Priority: priority})
	}
}

// preemptorOf names the preemptor of a Preempted event: the related object, which upstream's
// executor passes as its preemptor wrapper (a pod, a PodGroup or a CompositePodGroup).
func preemptorOf(related runtime.Object) (kind, name string) {
	typeName := strings.ToLower(fmt.Sprintf("%T", related))
	switch {
	case strings.Contains(typeName, "compositepodgroup"):
		kind = "CompositePodGroup"
	case strings.Contains(typeName, "podgroup"):
		kind = "PodGroup"
	default:
		kind = "Pod"
	}
	if o, ok := related.(metav1.Object); ok {
		name = o.GetNamespace() + "/" + o.GetName()
	}
	return kind, name
}

func (r *run) collect(client *fake.Clientset, pendingOrder []*corev1.Pod, admitted map[string]*corev1.Pod) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &plan.Plan{Kind: "Plan", Pods: []plan.Pod{}, Preemptions: []plan.Preemption{}}
	order := append([]string{}, r.popOrder...)
	for _, p := range pendingOrder {
		if !r.popped[podKey(p)] {
			order = append(order, podKey(p))
		}
	}
	for _, key := range order {
		ns, name, _ := strings.Cut(key, "/")
		entry := plan.Pod{Name: key, Status: "Pending"}
		if g, ok := r.groupOf[key]; ok {
			entry.PodGroup = plan.Ptr(g)
		}
		if obj, err := r.tracker.Get(podsGVR, ns, name); err == nil {
			pod := obj.(*corev1.Pod)
			if pod.Spec.NodeName != "" {
				entry.Status = "Scheduled"
				entry.Node = plan.Ptr(pod.Spec.NodeName)
			} else {
				entry.Message = r.lastFail[key]
				if entry.Message == "" {
					for _, c := range pod.Status.Conditions {
						if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
							entry.Message = c.Message
						}
					}
				}
			}
		} else if node, ok := r.bound[key]; ok {
			// Bound, then preempted itself: it was scheduled.
			entry.Status = "Scheduled"
			entry.Node = plan.Ptr(node)
		}
		if n, ok := r.nominated[key]; ok {
			entry.NominatedNode = plan.Ptr(n)
		}
		attempts := r.attempts[key]
		entry.Attempts = &attempts
		out.Pods = append(out.Pods, entry)
	}
	for _, p := range r.preemptions {
		sort.SliceStable(p.Victims, func(i, j int) bool { return p.Victims[i].Name < p.Victims[j].Name })
		out.Preemptions = append(out.Preemptions, *p)
	}
	_ = admitted
	return &Result{Plan: out, Ties: r.ties, HintsTaken: r.taken, Errors: r.errors}
}
