//go:build tools

// Package tools pins, in go.mod and go.sum, the upstream packages the checks build as test
// binaries (go test -c): kube-scheduler's scheduler_perf suite.
package tools

import (
	_ "k8s.io/kubernetes/test/integration/scheduler_perf"
)
