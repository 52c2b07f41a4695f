package registry

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
)

// Nodes follows a member's nodes and unfinished pods through informers, for what needs the
// member's capacity: the cluster status controller's node and resource summaries and
// resource model counts, and the scheduler's node-level estimator. Pods are cached slimmed
// to what capacity needs (their node, phase, labels, owners and summed requests), and each
// node's free resources are kept up to date as pods come and go, so reading them costs
// nothing per pod. Safe for concurrent use.
type Nodes struct {
	synced []cache.InformerSynced
	podIdx cache.Indexer // the slimmed pods, by namespace

	mu       sync.Mutex
	nodes    map[string]*corev1.Node // slimmed nodes by name
	used     map[string]*nodeUse     // requests of the pods bound to each node
	pods     map[string]podUse       // namespace/name of every unfinished pod
	pending  corev1.ResourceList     // requests of the pods bound to no node
	npending int64                   // how many pods are bound to no node
	snapshot []capacity.Node         // Capacity's answer, nil when stale
}

// nodeUse is what the pods bound to one node request.
type nodeUse struct {
	requests corev1.ResourceList
	pods     int64
}

// podUse is where one pod runs and what it requests.
type podUse struct {
	node     string
	requests corev1.ResourceList
}

// Nodes returns the member's node and pod view, starting its informers on first use. Until
// they have synced (Synced, WaitSynced) it reads as a member without nodes.
func (m *Member) Nodes() *Nodes {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nodes != nil {
		return m.nodes
	}
	n := &Nodes{nodes: map[string]*corev1.Node{}, used: map[string]*nodeUse{}, pods: map[string]podUse{}, pending: corev1.ResourceList{}}
	factory := informers.NewSharedInformerFactoryWithOptions(m.Kube, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(m.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "status.phase!=Succeeded,status.phase!=Failed"
	}))
	nodeInf := factory.Core().V1().Nodes().Informer()
	podInf := podFactory.Core().V1().Pods().Informer()
	_ = nodeInf.SetTransform(slimNode)
	_ = podInf.SetTransform(slimPod)
	_, _ = nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { n.setNode(o, false) },
		UpdateFunc: func(_, o any) { n.setNode(o, false) },
		DeleteFunc: func(o any) { n.setNode(o, true) },
	})
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { n.setPod(o, false) },
		UpdateFunc: func(_, o any) { n.setPod(o, false) },
		DeleteFunc: func(o any) { n.setPod(o, true) },
	})
	n.synced = []cache.InformerSynced{nodeInf.HasSynced, podInf.HasSynced}
	n.podIdx = podInf.GetIndexer()
	factory.Start(m.stop)
	podFactory.Start(m.stop)
	m.nodes = n
	return n
}

// Synced reports whether the first lists of nodes and pods have arrived.
func (n *Nodes) Synced() bool {
	for _, s := range n.synced {
		if !s() {
			return false
		}
	}
	return true
}

// WaitSynced waits at most timeout for Synced, and reports it.
func (n *Nodes) WaitSynced(ctx context.Context, timeout time.Duration) bool {
	if n.Synced() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return cache.WaitForCacheSync(ctx.Done(), n.synced...)
}

// slimNode keeps of a node what capacity reads: its name, labels, taints, cordon, allocatable
// resources and Ready condition.
func slimNode(o any) (any, error) {
	node, ok := o.(*corev1.Node)
	if !ok {
		return o, nil
	}
	out := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: node.Labels, ResourceVersion: node.ResourceVersion},
		Spec:       corev1.NodeSpec{Taints: node.Spec.Taints, Unschedulable: node.Spec.Unschedulable},
		Status:     corev1.NodeStatus{Allocatable: node.Status.Allocatable},
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out, nil
}

// slimPod keeps of a pod its identity, labels, owners, node, phase, PodScheduled condition
// and, as one container's requests, what the kube-scheduler counts it as requesting (its
// containers, init containers and overhead: resourcehelper.PodRequests).
func slimPod(o any) (any, error) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return o, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			Labels: pod.Labels, OwnerReferences: pod.OwnerReferences, CreationTimestamp: pod.CreationTimestamp},
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName, Containers: []corev1.Container{{Name: "requests",
			Resources: corev1.ResourceRequirements{Requests: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})}}}},
		Status: corev1.PodStatus{Phase: pod.Status.Phase},
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return out, nil
}

func (n *Nodes) setNode(o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	node, ok := o.(*corev1.Node)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if deleted {
		delete(n.nodes, node.Name)
	} else {
		n.nodes[node.Name] = node
	}
	n.snapshot = nil
}

func (n *Nodes) setPod(o any, deleted bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	key := pod.Namespace + "/" + pod.Name
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.pods[key]; ok {
		n.account(old, -1)
		delete(n.pods, key)
	}
	finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if !deleted && !finished {
		use := podUse{node: pod.Spec.NodeName}
		if len(pod.Spec.Containers) > 0 {
			use.requests = pod.Spec.Containers[0].Resources.Requests
		}
		n.pods[key] = use
		n.account(use, 1)
	}
	n.snapshot = nil
}

// account adds (sign 1) or takes away (sign -1) one pod's use.
func (n *Nodes) account(u podUse, sign int64) {
	if u.node == "" {
		n.npending += sign
		addScaled(n.pending, u.requests, sign)
		return
	}
	use := n.used[u.node]
	if use == nil {
		use = &nodeUse{requests: corev1.ResourceList{}}
		n.used[u.node] = use
	}
	use.pods += sign
	addScaled(use.requests, u.requests, sign)
	if use.pods <= 0 {
		delete(n.used, u.node)
	}
}

// addScaled adds sign × add to sum.
func addScaled(sum, add corev1.ResourceList, sign int64) {
	for k, v := range add {
		cur := sum[k]
		if sign < 0 {
			cur.Sub(v)
		} else {
			cur.Add(v)
		}
		if cur.IsZero() {
			delete(sum, k)
			continue
		}
		sum[k] = cur
	}
}

// ready reports a node's Ready condition.
func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Capacity returns the member's nodes, sorted by name, with what each has free, for the
// node-level estimator (capacity.FitReplicas). The slice is shared: callers must not modify
// it. Before Synced it is empty.
func (n *Nodes) Capacity() []capacity.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.snapshot != nil {
		return n.snapshot
	}
	out := make([]capacity.Node, 0, len(n.nodes))
	for name, node := range n.nodes {
		c := capacity.Node{Node: node, Ready: ready(node), Free: node.Status.Allocatable.DeepCopy()}
		pods := node.Status.Allocatable[corev1.ResourcePods]
		c.FreePods = pods.Value()
		if use := n.used[name]; use != nil {
			c.FreePods -= use.pods
			for k, v := range use.requests {
				if have, ok := c.Free[k]; ok {
					have.Sub(v)
					c.Free[k] = have
				}
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node.Name < out[j].Node.Name })
	n.snapshot = out
	return out
}

// Summary is what the cluster status controller reports of a member's nodes and pods.
type Summary struct {
	// Nodes counts the nodes and the Ready ones (status.nodeSummary).
	Nodes clusterv1alpha1.NodeSummary
	// Resources are the allocatable resources of the Ready nodes, the requests of the pods
	// bound to a node (allocated) and of those waiting for one (allocating), each with one
	// "pods" per pod (status.resourceSummary without allocatableModelings).
	Resources clusterv1alpha1.ResourceSummary
	// Free are the free resources of each Ready node with room for one more pod, for the
	// resource model counts.
	Free []corev1.ResourceList
}

// Summary sums the member's nodes and pods as Karmada's cluster status controller does.
func (n *Nodes) Summary() Summary {
	nodes := n.Capacity()
	n.mu.Lock()
	defer n.mu.Unlock()
	s := Summary{Resources: clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: n.pending.DeepCopy()}}
	s.Nodes.TotalNum = int32(len(nodes))
	var bound int64
	for _, use := range n.used {
		bound += use.pods
		addScaled(s.Resources.Allocated, use.requests, 1)
	}
	for _, c := range nodes {
		if !c.Ready {
			continue
		}
		s.Nodes.ReadyNum++
		addScaled(s.Resources.Allocatable, c.Node.Status.Allocatable, 1)
		if c.FreePods > 0 {
			s.Free = append(s.Free, c.Free)
		}
	}
	s.Resources.Allocated[corev1.ResourcePods] = *resource.NewQuantity(bound, resource.DecimalSI)
	s.Resources.Allocating[corev1.ResourcePods] = *resource.NewQuantity(n.npending, resource.DecimalSI)
	return s
}

// Unschedulable counts the pods in namespace whose labels selector matches that the member's
// scheduler has found no node for (PodScheduled False with reason Unschedulable) since at
// least threshold before now: Karmada's scheduler estimator's GetUnschedulableReplicas, which
// the descheduler asks. Before Synced it is 0.
func (n *Nodes) Unschedulable(namespace string, selector labels.Selector, threshold time.Duration, now time.Time) int {
	if n.podIdx == nil {
		return 0
	}
	objs, err := n.podIdx.ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return 0
	}
	count := 0
	for _, o := range objs {
		pod, ok := o.(*corev1.Pod)
		if !ok || pod.Spec.NodeName != "" || !selector.Matches(labels.Set(pod.Labels)) {
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				!c.LastTransitionTime.IsZero() && now.Sub(c.LastTransitionTime.Time) >= threshold {
				count++
			}
		}
	}
	return count
}
