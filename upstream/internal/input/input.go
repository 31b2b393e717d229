// Package input reads what `arbiter plan` reads (a YAML stream or JSON, one object or a List) into
// typed Kubernetes objects, strictly: an unknown field or kind is an error naming the file, the
// document and the object, as `arbiter plan` reports it.
package input

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	sigyaml "sigs.k8s.io/yaml"
)

// Objects is one case: every object of the input, in input order within each kind.
type Objects struct {
	Nodes              []*corev1.Node
	Pods               []*corev1.Pod
	Namespaces         []*corev1.Namespace
	PDBs               []*policyv1.PodDisruptionBudget
	PriorityClasses    []*schedulingv1.PriorityClass
	Workloads          []*schedulingv1beta1.Workload
	PodGroups          []*schedulingv1beta1.PodGroup
	CompositePodGroups []*schedulingv1alpha3.CompositePodGroup
	PVCs               []*corev1.PersistentVolumeClaim
	PVs                []*corev1.PersistentVolume
	StorageClasses     []*storagev1.StorageClass
	CSINodes           []*storagev1.CSINode
	// Config is the KubeSchedulerConfiguration document without Arbiter's `featureGates` map
	// (JSON), or nil for the default profile.
	Config []byte
	// PDBStatusGiven names the budgets ("namespace/name") whose input states
	// status.disruptionsAllowed; the others get the status the disruption controller computes.
	PDBStatusGiven map[string]bool
	// FeatureGates is the configuration's featureGates map (Arbiter's; upstream sets gates per
	// process).
	FeatureGates map[string]bool
}

var strictDecoder = serializer.NewCodecFactory(clientscheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// ReadFiles reads every file in order ("-" is standard input) into one case.
func ReadFiles(paths []string) (*Objects, error) {
	objs := &Objects{FeatureGates: map[string]bool{}, PDBStatusGiven: map[string]bool{}}
	var problems []string
	for _, path := range paths {
		var data []byte
		var err error
		if path == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(path)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		problems = append(problems, objs.addStream(path, data)...)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return objs, nil
}

// ReadBytes reads one in-memory stream (named `name` in errors).
func ReadBytes(name string, data []byte) (*Objects, error) {
	objs := &Objects{FeatureGates: map[string]bool{}, PDBStatusGiven: map[string]bool{}}
	if problems := objs.addStream(name, data); len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return objs, nil
}

func (o *Objects) addStream(path string, data []byte) []string {
	var problems []string
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for index := 0; ; index++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(problems, fmt.Sprintf("%s: document %d: %v", path, index, err))
		}
		if len(bytes.TrimSpace(doc)) == 0 || isOnlyComments(doc) {
			continue
		}
		jsonDoc, err := sigyaml.YAMLToJSON(doc)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: document %d: %v", path, index, err))
			continue
		}
		if string(jsonDoc) == "null" {
			continue
		}
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(jsonDoc, &head); err != nil {
			problems = append(problems, fmt.Sprintf("%s: document %d: %v", path, index, err))
			continue
		}
		items := []json.RawMessage{jsonDoc}
		if head.Kind == "List" || strings.HasSuffix(head.Kind, "List") && head.Items != nil {
			items = head.Items
		}
		for i, item := range items {
			where := fmt.Sprintf("%s: document %d", path, index)
			if len(items) > 1 || head.Kind == "List" {
				where = fmt.Sprintf("%s: document %d item %d", path, index, i)
			}
			if err := o.addObject(item); err != nil {
				problems = append(problems, where+": "+err.Error())
			}
		}
	}
	return problems
}

func isOnlyComments(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && line != "---" {
			return false
		}
	}
	return true
}

func (o *Objects) addObject(raw []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	if head.Kind == "KubeSchedulerConfiguration" {
		return o.addConfig(raw)
	}
	obj, gvk, err := strictDecoder.Decode(raw, nil, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %v", head.APIVersion, head.Kind, err)
	}
	switch t := obj.(type) {
	case *corev1.Node:
		o.Nodes = append(o.Nodes, t)
	case *corev1.Pod:
		o.Pods = append(o.Pods, t)
	case *corev1.Namespace:
		o.Namespaces = append(o.Namespaces, t)
	case *policyv1.PodDisruptionBudget:
		o.PDBs = append(o.PDBs, t)
		var status struct {
			Status struct {
				DisruptionsAllowed *int32 `json:"disruptionsAllowed"`
			} `json:"status"`
		}
		if json.Unmarshal(raw, &status) == nil && status.Status.DisruptionsAllowed != nil {
			ns := t.Namespace
			if ns == "" {
				ns = "default"
			}
			o.PDBStatusGiven[ns+"/"+t.Name] = true
		}
	case *schedulingv1.PriorityClass:
		o.PriorityClasses = append(o.PriorityClasses, t)
	case *schedulingv1beta1.Workload:
		o.Workloads = append(o.Workloads, t)
	case *schedulingv1beta1.PodGroup:
		o.PodGroups = append(o.PodGroups, t)
	case *schedulingv1alpha3.CompositePodGroup:
		o.CompositePodGroups = append(o.CompositePodGroups, t)
	case *corev1.PersistentVolumeClaim:
		o.PVCs = append(o.PVCs, t)
	case *corev1.PersistentVolume:
		o.PVs = append(o.PVs, t)
	case *storagev1.StorageClass:
		o.StorageClasses = append(o.StorageClasses, t)
	case *storagev1.CSINode:
		o.CSINodes = append(o.CSINodes, t)
	default:
		return fmt.Errorf("unknown kind %s (%s)", gvk.Kind, gvk.GroupVersion())
	}
	return nil
}

// addConfig keeps the configuration for upstream's own decoder (strict, in the reference) after
// taking out Arbiter's featureGates map, which upstream reads from the command line instead.
func (o *Objects) addConfig(raw []byte) error {
	if o.Config != nil {
		return errors.New("KubeSchedulerConfiguration: a second configuration (only one is allowed)")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	if gates, ok := doc["featureGates"]; ok {
		if err := json.Unmarshal(gates, &o.FeatureGates); err != nil {
			return fmt.Errorf("KubeSchedulerConfiguration: featureGates: %v", err)
		}
		delete(doc, "featureGates")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	o.Config = out
	return nil
}

// Gate reports a feature gate as Arbiter's configuration sets it (`def` when absent).
func (o *Objects) Gate(name string, def bool) bool {
	if v, ok := o.FeatureGates[name]; ok {
		return v
	}
	return def
}

// LatestTime is the latest creationTimestamp or startTime in the input: the moment the plan runs.
func (o *Objects) LatestTime() time.Time {
	var latest time.Time
	for _, p := range o.Pods {
		if t := p.CreationTimestamp.Time; t.After(latest) {
			latest = t
		}
		if p.Status.StartTime != nil && p.Status.StartTime.Time.After(latest) {
			latest = p.Status.StartTime.Time
		}
	}
	return latest
}

// PendingInQueueOrder lists the pending pods in the order they joined the queue: creation time,
// then input order (pods without a creation time join at `now`).
func (o *Objects) PendingInQueueOrder(now time.Time) []*corev1.Pod {
	type entry struct {
		pod   *corev1.Pod
		at    time.Time
		index int
	}
	var pending []entry
	for i, p := range o.Pods {
		if p.Spec.NodeName != "" {
			continue
		}
		at := p.CreationTimestamp.Time
		if at.IsZero() {
			at = now
		}
		pending = append(pending, entry{p, at, i})
	}
	sort.SliceStable(pending, func(a, b int) bool {
		if !pending[a].at.Equal(pending[b].at) {
			return pending[a].at.Before(pending[b].at)
		}
		return pending[a].index < pending[b].index
	})
	out := make([]*corev1.Pod, len(pending))
	for i, e := range pending {
		out[i] = e.pod
	}
	return out
}

// Time is a helper for generated objects.
func Time(t time.Time) metav1.Time { return metav1.NewTime(t) }

// Encode writes objects as one `kind: List` JSON document, the form both planners read.
func Encode(objs []runtime.Object) ([]byte, error) {
	list := map[string]any{"apiVersion": "v1", "kind": "List"}
	var items []json.RawMessage
	for _, obj := range objs {
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		// A budget whose status was never set is written without one (Go writes its zero
		// counts, which would read as "no disruption allowed").
		if pdb, ok := obj.(*policyv1.PodDisruptionBudget); ok && pdb.Status.ObservedGeneration == 0 {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) == nil {
				delete(m, "status")
				b, _ = json.Marshal(m)
			}
		}
		items = append(items, b)
	}
	list["items"] = items
	return json.MarshalIndent(list, "", " ")
}
