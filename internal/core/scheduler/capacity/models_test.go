package capacity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestGradeOf(t *testing.T) {
	models := clusterv1alpha1.DefaultResourceModels()
	tests := []struct {
		name string
		free corev1.ResourceList
		want int
	}{
		{"an empty node is grade 0", list(), 0},
		{"1.5 CPU and 8Gi is grade 1", list("cpu", "1500m", "memory", "8Gi"), 1},
		{"the scarcer resource decides", list("cpu", "64", "memory", "5Gi"), 1},
		{"a min is inclusive", list("cpu", "4", "memory", "32Gi"), 3},
		{"the last grade is open", list("cpu", "1000", "memory", "4Ti"), 8},
		{"an overcommitted node fits no grade", list("cpu", "-1", "memory", "8Gi"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GradeOf(models, tt.free); got != tt.want {
				t.Errorf("GradeOf() = %d, want %d", got, tt.want)
			}
		})
	}
	if got := GradeOf(nil, list("cpu", "1")); got != -1 {
		t.Errorf("GradeOf(no models) = %d, want -1", got)
	}
}

func TestCountModelings(t *testing.T) {
	models := clusterv1alpha1.DefaultResourceModels()
	got := CountModelings(models, []corev1.ResourceList{
		list("cpu", "1500m", "memory", "8Gi"), list("cpu", "1500m", "memory", "8Gi"),
		list("cpu", "3", "memory", "20Gi"), list("cpu", "-1"),
	})
	if len(got) != len(models) {
		t.Fatalf("CountModelings() has %d entries, want one per grade (%d)", len(got), len(models))
	}
	want := map[uint]int{1: 2, 2: 1}
	for _, m := range got {
		if m.Count != want[m.Grade] {
			t.Errorf("grade %d counts %d nodes, want %d", m.Grade, m.Count, want[m.Grade])
		}
	}
	if CountModelings(nil, nil) != nil {
		t.Error("CountModelings(no models) is not nil")
	}
}

// fragmented is the member of issue #43: three nodes with 1.5 CPU free each, summed 4.5.
func fragmented() *clusterv1alpha1.Cluster {
	models := clusterv1alpha1.DefaultResourceModels()
	frees := []corev1.ResourceList{}
	for range 3 {
		frees = append(frees, list("cpu", "1500m", "memory", "8Gi"))
	}
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec:       clusterv1alpha1.ClusterSpec{ResourceModels: models},
		Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable:          list("cpu", "6", "memory", "24Gi", "pods", "330"),
			Allocated:            list("cpu", "1500m", "pods", "3"),
			AllocatableModelings: CountModelings(models, frees),
		}},
	}
}

func TestAvailableWithModels(t *testing.T) {
	two := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "2")}
	one := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "1")}
	c := fragmented()
	if got := (*Estimators)(nil).Available(c, two); got != 0 {
		t.Errorf("2-CPU replicas on three 1.5-CPU nodes: %d, want 0 (the summed 4.5 CPU fits 2, no node fits one)", got)
	}
	if got := (&Estimators{IgnoreModels: true}).Available(c, two); got != 2 {
		t.Errorf("without models: %d, want the summary's 2", got)
	}
	// Model nodes have their grade's minimum (1 CPU), so each takes one 1-CPU replica.
	if got := (*Estimators)(nil).Available(c, one); got != 3 {
		t.Errorf("1-CPU replicas: %d, want 3", got)
	}
	storage := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "1", "ephemeral-storage", "1Gi")}
	c.Status.ResourceSummary.Allocatable["ephemeral-storage"] = list("x", "100Gi")["x"]
	if got := (*Estimators)(nil).Available(c, storage); got != 3 {
		t.Errorf("a resource the models do not bound: %d, want 3 (only the summary bounds it)", got)
	}
	assumed := &Estimators{Assumed: func(string) []Demand { return []Demand{{Replicas: 2, Requests: list("cpu", "1")}} }}
	if got := assumed.Available(c, one); got != 1 {
		t.Errorf("with 2 assumed 1-CPU replicas: %d, want 1", got)
	}
}

func TestAvailableWithNodes(t *testing.T) {
	node := func(name, cpu string, labels map[string]string, taints ...corev1.Taint) Node {
		return Node{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}},
			Ready: true, Free: list("cpu", cpu, "memory", "8Gi"), FreePods: 110}
	}
	gpu := map[string]string{"accel": "gpu"}
	nodes := []Node{
		node("a", "1500m", nil), node("b", "1500m", nil), node("c", "1500m", nil),
		node("d", "4", gpu), node("e", "8", nil, corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}),
	}
	notReady := node("f", "64", nil)
	notReady.Ready = false
	cordoned := node("g", "64", nil)
	cordoned.Node.Spec.Unschedulable = true
	nodes = append(nodes, notReady, cordoned)
	e := &Estimators{IgnoreModels: true, Nodes: func(*clusterv1alpha1.Cluster) ([]Node, bool) { return nodes, true }}
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}}
	tests := []struct {
		name string
		req  *workv1alpha2.ReplicaRequirements
		want int32
	}{
		{"only the untainted 4-CPU node fits 2-CPU replicas", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "2")}, 2},
		{"a toleration opens the tainted node", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "2"), NodeClaim: &workv1alpha2.NodeClaim{
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule}}}}, 6},
		{"a node selector narrows to its nodes", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "1"), NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: gpu}}, 4},
		{"hard node affinity narrows too", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "1"), NodeClaim: &workv1alpha2.NodeClaim{
			HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "accel", Operator: corev1.NodeSelectorOpDoesNotExist}}}}}}}, 3},
		{"a resource no node has fits nowhere", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("nvidia.com/gpu", "1")}, 0},
		{"cordoning is tolerated explicitly", &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "32"), NodeClaim: &workv1alpha2.NodeClaim{
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}}}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.Available(c, tt.req); got != tt.want {
				t.Errorf("Available() = %d, want %d", got, tt.want)
			}
		})
	}
	if nodes[3].Free.Cpu().String() != "4" {
		t.Errorf("estimating changed the nodes given: node d has %s CPU free", nodes[3].Free.Cpu())
	}
	unknown := &Estimators{IgnoreModels: true, Nodes: func(*clusterv1alpha1.Cluster) ([]Node, bool) { return nil, false }}
	if got := unknown.Available(c, &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "1")}); got != Unlimited {
		t.Errorf("nodes not known yet: %d, want the general estimate (Unlimited without a summary)", got)
	}
}

// The node-level estimator's exact answer replaces the models' approximation: three nodes
// with 8 CPU and 32Gi free are grade 3 (4 CPU) nodes to the default models.
func TestNodesReplaceTheModelBound(t *testing.T) {
	models := clusterv1alpha1.DefaultResourceModels()
	free := list("cpu", "8", "memory", "32Gi")
	var nodes []Node
	for _, name := range []string{"a", "b", "c"} {
		nodes = append(nodes, Node{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, Ready: true, Free: free, FreePods: 110})
	}
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: clusterv1alpha1.ClusterSpec{ResourceModels: models},
		Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "24", "memory", "96Gi", "pods", "330"),
			AllocatableModelings: CountModelings(models, []corev1.ResourceList{free, free, free})}}}
	four := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "4")}
	if got := (*Estimators)(nil).Available(c, four); got != 3 {
		t.Errorf("models: %d, want 3 (one 4-CPU replica per grade-3 node)", got)
	}
	e := &Estimators{Nodes: func(*clusterv1alpha1.Cluster) ([]Node, bool) { return nodes, true }}
	if got := e.Available(c, four); got != 6 {
		t.Errorf("with the node-level estimator: %d, want 6 (two per 8-CPU node)", got)
	}
}

func TestAvailableSets(t *testing.T) {
	set := []workv1alpha2.Component{
		{Name: "leader", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: list("cpu", "4")}},
		{Name: "worker", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: list("cpu", "2")}},
	}
	node := func(name, cpu string) Node {
		return Node{Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, Ready: true, Free: list("cpu", cpu), FreePods: 110}
	}
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Status: clusterv1alpha1.ClusterStatus{
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "24", "pods", "110")}}}
	if got := (&Estimators{}).AvailableSets(c, set); got != 2 {
		t.Errorf("summary: %d sets of 12 CPU in 24, want 2", got)
	}
	// Three 8-CPU nodes: the first set takes a and half of b, the second the rest of b and c.
	nodes := []Node{node("a", "8"), node("b", "8"), node("c", "8")}
	e := &Estimators{Nodes: func(*clusterv1alpha1.Cluster) ([]Node, bool) { return nodes, true }}
	if got := e.AvailableSets(c, set); got != 2 {
		t.Errorf("three 8-CPU nodes: %d sets, want 2", got)
	}
	// Six 4-CPU nodes hold 24 CPU too, but a set's leader takes a whole node.
	nodes = []Node{node("a", "4"), node("b", "4"), node("c", "4"), node("d", "4"), node("e", "3"), node("f", "3")}
	if got := e.AvailableSets(c, set); got != 1 {
		t.Errorf("4-CPU nodes: %d sets, want 1", got)
	}
}
