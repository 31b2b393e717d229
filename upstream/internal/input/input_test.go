package input

import (
	"strings"
	"testing"
)

func TestAnUnknownFieldIsAnErrorNamingTheDocument(t *testing.T) {
	_, err := ReadBytes("c.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClasName: high\n  containers: [{name: c, image: x}]\n"))
	if err == nil || !strings.Contains(err.Error(), "c.yaml: document 0") || !strings.Contains(err.Error(), "priorityClasName") {
		t.Fatalf("err = %v", err)
	}
}

func TestTheConfigurationsFeatureGatesAreTakenOutForUpstreamsDecoder(t *testing.T) {
	objs, err := ReadBytes("c.yaml", []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nfeatureGates: {GenericWorkload: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if objs.Gate("GenericWorkload", true) || strings.Contains(string(objs.Config), "featureGates") {
		t.Fatalf("gates %v, config %s", objs.FeatureGates, objs.Config)
	}
}

func TestABudgetsStatusCountsAsGivenOnlyWhenTheInputStatesIt(t *testing.T) {
	objs, err := ReadBytes("c.yaml", []byte("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec: {maxUnavailable: 1}\n---\n"+
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 1}\nstatus: {disruptionsAllowed: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if objs.PDBStatusGiven["default/a"] || !objs.PDBStatusGiven["default/b"] {
		t.Fatalf("given = %v", objs.PDBStatusGiven)
	}
}
