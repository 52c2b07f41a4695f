package localstack

import (
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

// kwokStages returns the kwok Stage documents the members simulate nodes and
// pods with, as one multi-document YAML: nodes become Ready and renew their
// leases; pods get an IP, become Running and Ready, complete when they are
// Job pods, and go away when deleted. These are kwok's own "fast" stages,
// shipped in the kwok module.
func kwokStages() string {
	return strings.Join([]string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
	}, "\n---\n")
}
