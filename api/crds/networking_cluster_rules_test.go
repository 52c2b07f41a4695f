package crds_test

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// --- MultiClusterService ---

// mcs returns a valid MultiClusterService, changed by edits.
func mcs(edits ...func(*networkingv1alpha1.MultiClusterServiceSpec)) *networkingv1alpha1.MultiClusterService {
	m := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{
			Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			Ports: []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}},
		},
	}
	for _, edit := range edits {
		edit(&m.Spec)
	}
	return m
}

func TestMultiClusterServiceRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a CrossCluster service is accepted", obj: mcs()},
		{
			name: "a LoadBalancer service in the Karmada v1.7 form is accepted",
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
				s.Range = networkingv1alpha1.ExposureRange{ClusterNames: []string{"member2"}}
			}),
		},
		{
			name: "an unknown exposure type is refused",
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Types = []networkingv1alpha1.ExposureType{"NodePort"}
			}),
			wantField: "spec.types[0]",
			wantErr:   "spec.types[*] must be CrossCluster or LoadBalancer",
		},
		{
			name: "two unnamed ports are accepted",
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Ports = []networkingv1alpha1.ExposurePort{{Port: 80}, {Port: 443}}
			}),
		},
		{
			name: "two ports with the same name are refused",
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Ports = []networkingv1alpha1.ExposurePort{{Name: "http", Port: 80}, {Name: "http", Port: 8080}}
			}),
			wantField: "spec.ports",
			wantErr:   "spec.ports[*].name must be unique",
		},
		{
			name:      "port 0 is refused",
			obj:       mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) { s.Ports[0].Port = 0 }),
			wantField: "spec.ports[0].port",
			wantErr:   "spec.ports[*].port must be between 1 and 65535",
		},
		{
			name:      "port 65536 is refused",
			obj:       mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) { s.Ports[0].Port = 65536 }),
			wantField: "spec.ports[0].port",
			wantErr:   "spec.ports[*].port must be between 1 and 65535",
		},
		{name: "port 65535 is accepted", obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) { s.Ports[0].Port = 65535 })},
		{
			name: "both types at once are refused",
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster, networkingv1alpha1.ExposureTypeLoadBalancer}
			}),
			wantField: "spec.types",
			wantErr:   "spec.types must hold one type",
		},
		{
			name: "changing types after creation is refused",
			old:  mcs(),
			obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) {
				s.Types = []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}
			}),
			wantField: "spec.types",
			wantErr:   "spec.types cannot be changed after creation",
		},
		{
			name: "an update that keeps types is accepted",
			old:  mcs(),
			obj:  mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) { s.Ports[0].Port = 8080 }),
		},
	})
}

// --- Cluster ---

func cluster(name string, mode clusterv1alpha1.ClusterSyncMode) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    mode,
			APIEndpoint: "https://127.0.0.1:6443",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
			Taints:      []corev1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func TestClusterRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a push-mode cluster is accepted", obj: cluster("member1", clusterv1alpha1.Push)},
		{name: "a pull-mode cluster is accepted", obj: cluster("member-2", clusterv1alpha1.Pull)},
		{name: "a name of 48 characters is accepted", obj: cluster(strings.Repeat("m", 48), clusterv1alpha1.Push)},
		{
			name:    "a name of 49 characters is refused",
			obj:     cluster(strings.Repeat("m", 49), clusterv1alpha1.Push),
			wantErr: "metadata.name of a Cluster must be no more than 48 characters",
		},
		{
			name:    "a name with dots is refused",
			obj:     cluster("member1.example.com", clusterv1alpha1.Push),
			wantErr: "metadata.name of a Cluster must be a DNS-1123 label",
		},
		{
			name:      "an unknown sync mode is refused",
			obj:       cluster("member1", "Sync"),
			wantField: "spec.syncMode",
			wantErr:   "Unsupported value: \"Sync\"",
		},
	})
}

// TestListBoundsStayWithinRuntimeCELBudget admits objects whose CEL-checked lists are filled
// to their maxItems with the longest allowed names: the API server must evaluate every rule
// within its runtime cost budget, so objects at the documented bounds are accepted.
func TestListBoundsStayWithinRuntimeCELBudget(t *testing.T) {
	name := func(prefix string, i, width int) string {
		s := prefix + strings.Repeat("x", width)
		suffix := strconv.Itoa(i)
		return s[:width-len(suffix)] + suffix
	}
	var terms []string
	for i := 0; i < 128; i++ {
		terms = append(terms, name("group", i, 32))
	}
	var rules []autoscalingv1alpha1.CronFederatedHPARule
	for i := 0; i < 256; i++ {
		rules = append(rules, autoscalingv1alpha1.CronFederatedHPARule{Name: name("rule", i, 32), Schedule: "0 9 * * *", TargetReplicas: ptr.To[int32](1)})
	}
	var ports []networkingv1alpha1.ExposurePort
	for i := 0; i < 256; i++ {
		ports = append(ports, networkingv1alpha1.ExposurePort{Name: name("port", i, 63), Port: int32(1000 + i)})
	}
	var constraints []policyv1alpha1.SpreadConstraint
	constraints = append(constraints, policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster})
	for i := 1; i < 64; i++ {
		constraints = append(constraints, policyv1alpha1.SpreadConstraint{SpreadByLabel: name("label", i, 40)})
	}
	runRuleCases(t, []ruleCase{
		{name: "128 cluster affinity groups", obj: pp(affinityTerms(terms...))},
		{name: "64 spread constraints", obj: pp(spread(constraints...))},
		{name: "256 cron rules", obj: cronFHPA(func(s *autoscalingv1alpha1.CronFederatedHPASpec) { s.Rules = rules })},
		{name: "256 named ports", obj: mcs(func(s *networkingv1alpha1.MultiClusterServiceSpec) { s.Ports = ports })},
		{
			name: "257 cron rules are refused by maxItems",
			obj: cronFHPA(func(s *autoscalingv1alpha1.CronFederatedHPASpec) {
				s.Rules = append(append([]autoscalingv1alpha1.CronFederatedHPARule{}, rules...), autoscalingv1alpha1.CronFederatedHPARule{Name: "extra", Schedule: "@daily", TargetReplicas: ptr.To[int32](1)})
			}),
			wantField: "spec.rules",
			wantErr:   "Too many",
		},
	})
}
