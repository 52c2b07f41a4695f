package explain

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestWorkLineSaysWhatIsStale(t *testing.T) {
	work := func(generation, observed int64, status metav1.ConditionStatus) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member3", Name: "nginx-687f7fb96f", Generation: generation}}
		if status != "" {
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: status, ObservedGeneration: observed, Reason: "AppliedFailed", Message: "boom"}}
		}
		return w
	}
	cluster := func(ready metav1.ConditionStatus, reason string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready, Reason: reason}}}}
	}
	const prefix = "Work karmada-es-member3/nginx-687f7fb96f"
	for _, tc := range []struct {
		name   string
		work   *workv1alpha1.Work
		health workv1alpha2.ResourceHealth
		member *clusterv1alpha1.Cluster
		want   string
	}{
		{"applied and healthy", work(3, 3, metav1.ConditionTrue), workv1alpha2.ResourceHealthy, cluster(metav1.ConditionTrue, "ClusterReady"), prefix + ", applied, healthy"},
		{"no report yet", work(1, 0, ""), "", nil, prefix + ", not applied yet"},
		{"failed", work(2, 2, metav1.ConditionFalse), "", nil, prefix + ", not applied (AppliedFailed: boom)"},
		{"a change not yet applied, the agent away", work(3, 2, metav1.ConditionTrue), workv1alpha2.ResourceHealthy, cluster(metav1.ConditionUnknown, "ClusterStatusUnknown"),
			prefix + ", applied at generation 2; its latest change (generation 3) not yet, healthy; cluster Ready=Unknown (ClusterStatusUnknown), so this may be stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := workLine(tc.work, tc.health, tc.member); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestWhyFitButNotChosenNamesThePartOfThePlacement(t *testing.T) {
	for _, tc := range []struct {
		placement *policyv1alpha1.Placement
		replicas  int32
		want      string
	}{
		{&policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1}}}, 3, "spreadConstraints"},
		{&policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}}, 3, "Aggregated"},
		{&policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted}}, 1, "rounded to none"},
		{nil, 0, "has not placed it there"},
	} {
		got := whyFitButNotChosen(&workv1alpha2.ResourceBindingSpec{Placement: tc.placement, Replicas: tc.replicas})
		if !strings.Contains(got, tc.want) {
			t.Errorf("placement %+v: %q lacks %q", tc.placement, got, tc.want)
		}
	}
}

func TestDescribeSuspensionNamesWhatAndWho(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{}
	if got := describeSuspension(spec, "PropagationPolicy shop/web"); got != "" {
		t.Errorf("nothing suspended: %q", got)
	}
	spec.Suspension = &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{
		DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}}
	got := describeSuspension(spec, "PropagationPolicy shop/web")
	if !strings.Contains(got, "dispatching to member2, by spec.suspension of PropagationPolicy shop/web") {
		t.Errorf("describeSuspension = %q", got)
	}
	spec.Suspension = &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}
	if got := describeSuspension(spec, ""); !strings.Contains(got, "dispatching to every cluster, by the policy's spec.suspension") {
		t.Errorf("describeSuspension = %q", got)
	}
}

func TestDescribeDependenciesListsWhatFollows(t *testing.T) {
	ann := `[{"apiVersion":"v1","kind":"Service","namespace":"shop","name":"web"},{"apiVersion":"v1","kind":"ConfigMap","namespace":"shop","name":"cfg"}]`
	if got, want := describeDependencies(ann, true), "Service web, ConfigMap cfg (propagateDeps: they follow it to its clusters)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := describeDependencies(ann, false); got != "" {
		t.Errorf("without propagateDeps: %q", got)
	}
	if got := describeDependencies("", true); got != "" {
		t.Errorf("without the annotation: %q", got)
	}
}
