//go:build tools

// Package tools pins, for `go mod tidy`, Istio's control plane and node agent.
package tools

import (
	_ "github.com/coredns/coredns/coremain"
	_ "istio.io/istio/pilot/cmd/pilot-agent/app"
	_ "istio.io/istio/pilot/cmd/pilot-discovery/app"
)
