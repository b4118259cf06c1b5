//go:build tools

// Package tools pins, for `go mod tidy`, what Argo CD's multi-call binary (cmd/main.go of
// github.com/argoproj/argo-cd/v3) imports: every command it can become by argv[0]. The test
// cluster runs four of them (argocd-repo-server, argocd-cmp-server,
// argocd-application-controller, argocd-applicationset-controller).
package tools

import (
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-applicationset-controller/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-commit-server/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-dex/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-k8s-auth/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-notification/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-server/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd/commands"
)
