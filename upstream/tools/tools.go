//go:build tools

// Package tools pins, in go.mod and go.sum, the upstream packages the checks build: kube-scheduler's
// scheduler_perf suite (go test -c), and the commands of the control plane that
// scripts/upstream-cluster.sh runs (their app packages here; the commands are built by path:
// go build k8s.io/kubernetes/cmd/kube-apiserver).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/test/integration/scheduler_perf"
)
