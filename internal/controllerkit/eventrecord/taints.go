package eventrecord

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Taints lists taints for an event message (Karmada's TaintCluster*
// events), each as key[=value]:Effect, separated by ", "; "none" when there
// are none.
func Taints(taints []corev1.Taint) string {
	if len(taints) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		parts = append(parts, t.ToString())
	}
	return strings.Join(parts, ", ")
}
