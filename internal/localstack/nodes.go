package localstack

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Labels the local stack puts on simulated nodes.
const (
	// SimulatedNodeLabel marks the nodes `flotilla up` owns, so it can
	// remove the ones a smaller config no longer wants.
	SimulatedNodeLabel = "flotilla.io/simulated-node"
	// ProviderLabel carries the member's provider; region and zone use the
	// well-known topology.kubernetes.io labels.
	ProviderLabel = "flotilla.io/provider"
)

// NodeName is the name of simulated node i (0-based) of a member.
func NodeName(member string, i int) string { return fmt.Sprintf("%s-node-%d", member, i) }

// DesiredNodes returns the Node objects a member should have: m.Nodes nodes
// with the configured capacity, topology labels, and the kwok annotation.
func DesiredNodes(m *MemberConfig) []*corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(m.CPU),
		corev1.ResourceMemory: resource.MustParse(m.Memory),
		corev1.ResourcePods:   resource.MustParse(m.Pods),
	}
	nodes := make([]*corev1.Node, 0, m.Nodes)
	for i := range m.Nodes {
		name := NodeName(m.Name, i)
		nodes = append(nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					"kubernetes.io/hostname":   name,
					"kubernetes.io/os":         "linux",
					"kubernetes.io/arch":       "amd64",
					"type":                     "kwok",
					corev1.LabelTopologyRegion: m.Region,
					corev1.LabelTopologyZone:   m.Zone,
					ProviderLabel:              m.Provider,
					SimulatedNodeLabel:         "true",
				},
				Annotations: map[string]string{
					KwokNodeAnnotation:             "fake",
					ResourceMetricsPathAnnotation:  KwokResourceMetricsPath(name),
					"node.alpha.kubernetes.io/ttl": "0",
				},
			},
			Status: corev1.NodeStatus{
				Capacity:    capacity.DeepCopy(),
				Allocatable: capacity.DeepCopy(),
				Phase:       corev1.NodeRunning,
			},
		})
	}
	return nodes
}

// EnsureNodes makes the member's simulated nodes match m: it creates the
// missing ones, refreshes labels, annotations and capacity of existing ones,
// and deletes simulated nodes beyond the configured count. kwokPort is where
// the member's kwok serves the nodes' kubelet endpoints: an existing node
// whose address (InternalIP 127.0.0.1) or kubelet port differ, as after a
// restart that had to pick a new port, gets them rewritten, since kwok only
// fills them in on nodes that have none. It is idempotent.
func EnsureNodes(ctx context.Context, cs kubernetes.Interface, m *MemberConfig, kwokPort int) error {
	want := map[string]bool{}
	for _, n := range DesiredNodes(m) {
		want[n.Name] = true
		existing, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create node %s in %s: %w", n.Name, m.Name, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("get node %s in %s: %w", n.Name, m.Name, err)
		}
		changed := false
		for k, v := range n.Annotations {
			if existing.Annotations[k] != v {
				if existing.Annotations == nil {
					existing.Annotations = map[string]string{}
				}
				existing.Annotations[k] = v
				changed = true
			}
		}
		for k, v := range n.Labels {
			if existing.Labels[k] != v {
				if existing.Labels == nil {
					existing.Labels = map[string]string{}
				}
				existing.Labels[k] = v
				changed = true
			}
		}
		if changed {
			if existing, err = cs.CoreV1().Nodes().Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update node %s in %s: %w", n.Name, m.Name, err)
			}
		}
		reachable := existing.Status.DaemonEndpoints.KubeletEndpoint.Port == int32(kwokPort) && nodeInternalIP(existing) == "127.0.0.1"
		if !reachable || !resourceListEqual(existing.Status.Capacity, n.Status.Capacity) || !resourceListEqual(existing.Status.Allocatable, n.Status.Allocatable) {
			existing.Status.Capacity = n.Status.Capacity
			existing.Status.Allocatable = n.Status.Allocatable
			if !reachable {
				existing.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kwokPort)
				existing.Status.Addresses = []corev1.NodeAddress{
					{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
					{Type: corev1.NodeHostName, Address: n.Name},
				}
			}
			if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, existing, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update capacity of node %s in %s: %w", n.Name, m.Name, err)
			}
		}
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: SimulatedNodeLabel + "=true"})
	if err != nil {
		return fmt.Errorf("list nodes in %s: %w", m.Name, err)
	}
	for _, n := range list.Items {
		if !want[n.Name] {
			if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete surplus node %s in %s: %w", n.Name, m.Name, err)
			}
		}
	}
	return nil
}

func nodeInternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func resourceListEqual(a, b corev1.ResourceList) bool {
	if len(a) < len(b) {
		return false
	}
	for k, v := range b {
		if av, ok := a[k]; !ok || av.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// ReadyNodes counts the member's simulated nodes whose Ready condition is True.
func ReadyNodes(ctx context.Context, cs kubernetes.Interface) (ready, total int, err error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: SimulatedNodeLabel + "=true"})
	if err != nil {
		return 0, 0, err
	}
	for _, n := range list.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, len(list.Items), nil
}
