package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// scheduleCase is one narrative test of Schedule: either the result it must return, or the
// exact error message and the Scheduled condition reason that error maps to.
type scheduleCase struct {
	name       string
	in         Input
	want       []workv1alpha2.TargetCluster
	wantErr    string
	wantReason string
}

func runScheduleCases(t *testing.T, cases []scheduleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.Resource.Kind == "" {
				uid := tc.in.Resource.UID
				tc.in.Resource = deployment
				tc.in.Resource.UID = uid
			}
			got, err := Schedule(tc.in)
			if tc.wantErr != "" || tc.wantReason != "" {
				if err == nil {
					t.Fatalf("Schedule() = %v, want error %q", got, tc.wantErr)
				}
				if tc.wantErr != "" && err.Error() != tc.wantErr {
					t.Errorf("error message:\n got: %s\nwant: %s", err, tc.wantErr)
				}
				if r := ConditionReason(err); tc.wantReason != "" && r != tc.wantReason {
					t.Errorf("ConditionReason() = %s, want %s (error %v)", r, tc.wantReason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Schedule() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("target clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadinessAndAPIFilters(t *testing.T) {
	configMap := workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "settings"}
	runScheduleCases(t, []scheduleCase{
		{
			name: "each filter names its reason in Karmada's one-line diagnosis",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: names("member1", "member3")},
				Replicas:  2,
				Clusters: clusters(
					cluster("member1").notReady(),
					cluster("member2"),
					cluster("member3").apis(clusterv1alpha1.APIEnablement{GroupVersion: "v1",
						Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}),
				),
			},
			wantErr:    "0/3 clusters are available: member1: cluster is not Ready; member2: not in clusterAffinity.clusterNames; member3: API apps/v1/Deployment not enabled",
			wantReason: ReasonNoClusterFit,
		},
		{
			name:       "no member clusters at all",
			in:         Input{Replicas: 1},
			wantErr:    "0/0 clusters are available",
			wantReason: ReasonNoClusterFit,
		},
		{
			name:    "a cluster that has not reported its APIs yet is rejected",
			in:      Input{Replicas: 1, Clusters: clusters(cluster("member1").apis())},
			wantErr: "0/1 clusters are available: member1: API enablements not reported yet",
		},
		{
			name: "an API missing from an incomplete API list says so",
			in: Input{Replicas: 1, Clusters: func() []*clusterv1alpha1.Cluster {
				c := cluster("member1").apis(clusterv1alpha1.APIEnablement{GroupVersion: "v1"}).build()
				c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{
					Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionFalse})
				return []*clusterv1alpha1.Cluster{c}
			}()},
			wantErr: "0/1 clusters are available: member1: API apps/v1/Deployment not enabled (API list incomplete)",
		},
		{
			name: "the API filter checks the resource's own apiVersion and kind",
			in: Input{Resource: configMap, Clusters: clusters(
				cluster("member1"),
				cluster("member2").apis(clusterv1alpha1.APIEnablement{GroupVersion: "apps/v1",
					Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}),
			)},
			want: targets("member1", 0),
		},
	})
}

func TestClusterAffinityFilter(t *testing.T) {
	runScheduleCases(t, []scheduleCase{
		{
			name: "exclude removes a cluster that clusterNames would admit",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					ClusterNames: []string{"member1", "member2"}, ExcludeClusters: []string{"member2"}}},
				Replicas: 1,
				Clusters: clusters(cluster("member1"), cluster("member2")),
			},
			want: targets("member1", 1),
		},
		{
			name: "exclude alone is reported as the reason",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member1"}}},
				Replicas:  1,
				Clusters:  clusters(cluster("member1")),
			},
			wantErr: "0/1 clusters are available: member1: in clusterAffinity.exclude",
		},
		{
			name: "labelSelector matches cluster labels",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}},
				Replicas: 1,
				Clusters: clusters(cluster("member1").labels("env", "prod"), cluster("member2").labels("env", "dev")),
			},
			want: targets("member1", 1),
		},
		{
			name: "labelSelector rejection is reported",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}},
				Replicas: 1,
				Clusters: clusters(cluster("member1")),
			},
			wantErr: "0/1 clusters are available: member1: labels do not match clusterAffinity.labelSelector",
		},
		{
			name: "fieldSelector In on region rejects other regions",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "region", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east"}}}}}},
				Replicas: 1,
				Clusters: clusters(cluster("member1").region("eu-west")),
			},
			wantErr: `0/1 clusters are available: member1: region "eu-west" does not match clusterAffinity.fieldSelector (region In [us-east])`,
		},
		{
			name: "fieldSelector NotIn on provider and In on any zone of a multi-zone cluster",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "provider", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"onprem"}},
						{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-b"}},
					}}}},
				Replicas: 1,
				Clusters: clusters(
					cluster("member1").provider("aws").zones("zone-a", "zone-b"),
					cluster("member2").provider("onprem").zones("zone-b"),
					cluster("member3").provider("aws").zones("zone-c"),
				),
			},
			want: targets("member1", 1),
		},
		{
			name: "an invalid label selector is a scheduler error, not a fit failure",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "env", Operator: "Near"}}}}},
				Replicas: 1,
				Clusters: clusters(cluster("member1")),
			},
			wantReason: ReasonSchedulerError,
		},
	})
}

func TestTaintPreviousHolderAndSpreadFieldFilters(t *testing.T) {
	runScheduleCases(t, []scheduleCase{
		{
			name: "an untolerated NoSchedule taint rejects the cluster",
			in: Input{
				Replicas: 1,
				Clusters: clusters(cluster("member1").taint("dedicated", "gpu", corev1.TaintEffectNoSchedule)),
			},
			wantErr: "0/1 clusters are available: member1: untolerated taint {dedicated=gpu:NoSchedule}",
		},
		{
			name: "clusterTolerations let the resource onto tainted clusters; PreferNoSchedule never rejects",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterTolerations: []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
					{Key: clusterv1alpha1.TaintClusterUnreachable, Operator: corev1.TolerationOpExists},
				}},
				Replicas: 1,
				Clusters: clusters(
					cluster("member1").taint("dedicated", "gpu", corev1.TaintEffectNoSchedule),
					cluster("member2").taint(clusterv1alpha1.TaintClusterUnreachable, "", corev1.TaintEffectNoExecute),
					cluster("member3").taint("dedicated", "ml", corev1.TaintEffectNoSchedule),
					cluster("member4").taint("spot", "true", corev1.TaintEffectPreferNoSchedule),
				),
			},
			want: targets("member1", 1, "member2", 1, "member4", 1),
		},
		{
			name: "a previous holder keeps the resource through NoSchedule taints, not Ready and missing APIs, but not NoExecute",
			in: Input{
				Replicas: 1,
				Clusters: clusters(
					cluster("member1").taint("maintenance", "", corev1.TaintEffectNoSchedule),
					cluster("member2").notReady().apis(),
					cluster("member3").taint(clusterv1alpha1.TaintClusterNotReady, "", corev1.TaintEffectNoExecute),
					cluster("member4").notReady(),
				),
				Previous: targets("member1", 1, "member2", 1, "member3", 1),
			},
			want: targets("member1", 1, "member2", 1),
		},
		{
			name: "with the taint manager evicting, a previous holder stays through NoExecute (the taint manager moves it gracefully)",
			in: Input{
				Replicas: 1,
				Clusters: clusters(
					cluster("member1"),
					cluster("member3").taint(clusterv1alpha1.TaintClusterNotReady, "", corev1.TaintEffectNoExecute),
				),
				Previous:           targets("member1", 1, "member3", 1),
				TaintManagerEvicts: true,
			},
			want: targets("member1", 1, "member3", 1),
		},
		{
			name: "a cluster being evicted is not chosen again",
			in: Input{
				Replicas: 1,
				Clusters: clusters(cluster("member1"), cluster("member2"), cluster("member3")),
				Previous: targets("member2", 1),
				Evicting: []string{"member1"},
			},
			want: targets("member2", 1, "member3", 1),
		},
		{
			name: "previous holders are still bound by the cluster affinity",
			in: Input{
				Placement: &policyv1alpha1.Placement{ClusterAffinity: names("member2")},
				Replicas:  1,
				Clusters:  clusters(cluster("member1"), cluster("member2")),
				Previous:  targets("member1", 1),
			},
			want: targets("member2", 1),
		},
		{
			name: "spreading by region needs clusters to have a region",
			in: Input{
				Placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					spreadBy(policyv1alpha1.SpreadByFieldRegion, 1, 1), spreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 0)}},
				Replicas: 1,
				Clusters: clusters(cluster("member1")),
			},
			wantErr: "0/1 clusters are available: member1: region is not set, needed by spreadConstraints (spreadByField region)",
		},
	})
}

func TestClusterAffinities(t *testing.T) {
	primaryThenBackup := &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "primary", ClusterAffinity: *names("member1")},
		{AffinityName: "backup", ClusterAffinity: *names("member2", "member3")},
	}}
	tests := []struct {
		name       string
		in         Input
		want       Decision
		wantErr    string
		wantReason string
	}{
		{
			name: "the first group with a feasible cluster is used",
			in:   Input{Placement: primaryThenBackup, Replicas: 2, Clusters: clusters(cluster("member1"), cluster("member2"))},
			want: Decision{Clusters: targets("member1", 2), AffinityName: "primary"},
		},
		{
			name: "a group whose clusters all fail the filters falls back to the next group",
			in: Input{Placement: primaryThenBackup, Replicas: 2,
				Clusters: clusters(cluster("member1").notReady(), cluster("member2"), cluster("member3"))},
			want: Decision{Clusters: targets("member2", 2, "member3", 2), AffinityName: "backup"},
		},
		{
			name: "scheduling resumes from the observed group instead of moving back",
			in: Input{Placement: primaryThenBackup, Replicas: 2, ObservedAffinityName: "backup",
				Clusters: clusters(cluster("member1"), cluster("member2"))},
			want: Decision{Clusters: targets("member2", 2), AffinityName: "backup"},
		},
		{
			name: "a group that fits but lacks resources falls back too",
			in: Input{
				Placement: &policyv1alpha1.Placement{
					ClusterAffinities: primaryThenBackup.ClusterAffinities,
					ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated),
				},
				Replicas: 5,
				Clusters: clusters(cluster("member1").pods(2), cluster("member2").pods(10)),
			},
			want: Decision{Clusters: targets("member2", 5), AffinityName: "backup"},
		},
		{
			name: "when no group fits, the reasons of the last group tried are reported",
			in: Input{Placement: primaryThenBackup, Replicas: 2,
				Clusters: clusters(cluster("member1").notReady(), cluster("member2").notReady(), cluster("member3").notReady())},
			wantErr:    "0/3 clusters are available in clusterAffinities[backup]: member1: not in clusterAffinities[backup].clusterNames; member2: cluster is not Ready; member3: cluster is not Ready",
			wantReason: ReasonNoClusterFit,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Resource = deployment
			got, err := Decide(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Decide() error = %v, want %q", err, tc.wantErr)
				}
				if r := ConditionReason(err); r != tc.wantReason {
					t.Errorf("ConditionReason() = %s, want %s", r, tc.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDuplicated(t *testing.T) {
	members := clusters(cluster("member2"), cluster("member1"), cluster("member3"))
	runScheduleCases(t, []scheduleCase{
		{
			name: "no replicaScheduling duplicates the full count onto every feasible cluster, sorted by name",
			in:   Input{Replicas: 3, Clusters: members},
			want: targets("member1", 3, "member2", 3, "member3", 3),
		},
		{
			name: "explicit Duplicated does the same",
			in:   Input{Placement: &policyv1alpha1.Placement{ReplicaScheduling: duplicatedScheduling()}, Replicas: 3, Clusters: members},
			want: targets("member1", 3, "member2", 3, "member3", 3),
		},
		{
			name: "a resource without replicas goes everywhere with 0",
			in: Input{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c"},
				Placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)},
				Clusters:  members},
			want: targets("member1", 0, "member2", 0, "member3", 0),
		},
		{
			name:       "negative replicas are refused",
			in:         Input{Replicas: -1, Clusters: members},
			wantReason: ReasonSchedulerError,
		},
		{
			name: "unknown replicaSchedulingType is a scheduler error",
			in: Input{Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: "Tripled"}}, Replicas: 1, Clusters: members},
			wantErr:    `replicaScheduling: unknown replicaSchedulingType "Tripled"`,
			wantReason: ReasonSchedulerError,
		},
	})
}

func TestNoClusterFitErrorGroupsReasonsWhenLong(t *testing.T) {
	var members []*clusterv1alpha1.Cluster
	for i := range 500 {
		b := cluster(fmt.Sprintf("member%03d", i))
		if i%100 != 0 {
			b.notReady()
		} else {
			b.apis()
		}
		members = append(members, b.build())
	}
	_, err := Schedule(Input{Resource: deployment, Replicas: 1, Clusters: members})
	var noFit *NoClusterFitError
	if !errors.As(err, &noFit) {
		t.Fatalf("Schedule() error = %v, want *NoClusterFitError", err)
	}
	if len(noFit.Rejections) != 500 {
		t.Errorf("rejections = %d, want one per cluster (500)", len(noFit.Rejections))
	}
	want := "0/500 clusters are available: 495 cluster(s): cluster is not Ready (member001, member002, member003, ...); " +
		"5 cluster(s): API enablements not reported yet (member000, member100, member200, ...)"
	if err.Error() != want {
		t.Errorf("message:\n got: %s\nwant: %s", err, want)
	}
	if len(err.Error()) > messageLimit || strings.Contains(err.Error(), "\n") {
		t.Errorf("message is not a short single line: %d bytes", len(err.Error()))
	}
}

func TestConditionReason(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"success", nil, ReasonSuccess},
		{"no cluster fit, even wrapped", fmt.Errorf("scheduling: %w", &NoClusterFitError{}), ReasonNoClusterFit},
		{"unschedulable", &UnschedulableError{Message: "not enough resources"}, ReasonUnschedulable},
		{"anything else", errors.New("boom"), ReasonSchedulerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ConditionReason(tc.err); got != tc.want {
				t.Errorf("ConditionReason(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

func TestStepTimerIsToldEachStepOfEachTermTried(t *testing.T) {
	members := clusters(cluster("member1"), cluster("member2").notReady())
	for _, tc := range []struct {
		name string
		in   Input
		want []string
	}{
		{
			name: "a term that schedules goes through every step",
			in:   Input{Replicas: 2, Clusters: members},
			want: []string{StepFilter, StepSelect, StepAssignReplicas},
		},
		{
			name: "a term no cluster fits stops after the filters",
			in: Input{Replicas: 2, Clusters: members, Placement: &policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}},
			want: []string{StepFilter},
		},
		{
			name: "each clusterAffinities term tried is timed",
			in: Input{Replicas: 2, Clusters: members, Placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
				{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			}}},
			want: []string{StepFilter, StepFilter, StepSelect, StepAssignReplicas},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			tc.in.Resource = deployment
			tc.in.StepTimer = func(step string, d time.Duration) {
				if d < 0 {
					t.Errorf("step %s took %v", step, d)
				}
				got = append(got, step)
			}
			_, err := Decide(tc.in)
			if scheduled := tc.want[len(tc.want)-1] == StepAssignReplicas; scheduled != (err == nil) {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("steps timed (-want +got):\n%s", diff)
			}
		})
	}
}
