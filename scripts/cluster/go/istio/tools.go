//go:build tools

// Package tools pins, for `go mod tidy`, Istio's control plane and node agent, and CoreDNS.
package tools

import (
	_ "github.com/KimMachineGun/automemlimit" // imported by the pilot-discovery and pilot-agent main packages
	_ "github.com/coredns/coredns/coremain"
	_ "istio.io/istio/pilot/cmd/pilot-agent/app"
	_ "istio.io/istio/pilot/cmd/pilot-discovery/app"
)
