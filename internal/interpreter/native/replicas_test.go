package native

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

const nginx = `{"containers":[{"name":"nginx","image":"nginx"}]}`

func TestGetReplicas(t *testing.T) {
	tests := []struct {
		name         string
		obj          *unstructured.Unstructured
		wantReplicas int32
		wantReq      *workv1alpha2.ReplicaRequirements
		wantOK       bool
	}{
		{
			name:         "Deployment: spec.replicas, no requirements without requests or node constraints",
			obj:          deploy("web").spec(`{"replicas":3,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 3, wantOK: true,
		},
		{
			name:         "Deployment: unset replicas default to 1",
			obj:          deploy("web").spec(`{"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 1, wantOK: true,
		},
		{
			name:         "Deployment: zero replicas stay zero",
			obj:          deploy("web").spec(`{"replicas":0,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 0, wantOK: true,
		},
		{
			name:         "StatefulSet: spec.replicas",
			obj:          statefulSet("db").spec(`{"replicas":5,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 5, wantOK: true,
		},
		{
			name:         "ReplicaSet: spec.replicas",
			obj:          replicaSet("rs").spec(`{"replicas":2,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 2, wantOK: true,
		},
		{
			name:         "Job: spec.parallelism",
			obj:          job("batch").spec(`{"parallelism":4,"completions":10,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 4, wantOK: true,
		},
		{
			name:         "Job: unset parallelism defaults to 1",
			obj:          job("batch").spec(`{"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 1, wantOK: true,
		},
		{
			name:         "Job: parallelism equal to completions schedules them all",
			obj:          job("batch").spec(`{"parallelism":10,"completions":10,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 10, wantOK: true,
		},
		{
			name:         "Job: parallelism above completions is capped at completions",
			obj:          job("batch").spec(`{"parallelism":8,"completions":3,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 3, wantOK: true,
		},
		{
			name:         "Job: a work-queue Job without completions runs its parallelism",
			obj:          job("batch").spec(`{"parallelism":8,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 8, wantOK: true,
		},
		{
			name:         "Job: zero completions schedule no replicas",
			obj:          job("batch").spec(`{"parallelism":2,"completions":0,"template":{"spec":` + nginx + `}}`).obj(),
			wantReplicas: 0, wantOK: true,
		},
		{name: "Job: malformed completions are rejected", obj: job("batch").spec(`{"parallelism":2,"completions":"x"}`).obj()},
		{
			name:         "Pod: always one replica, requirements from its own spec",
			obj:          pod("p").spec(`{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"}}}]}`).obj(),
			wantReplicas: 1,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "250m"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "requests: containers are summed",
			obj: deploy("web").spec(`{"replicas":2,"template":{"spec":{"containers":[
				{"name":"a","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}},
				{"name":"b","resources":{"requests":{"cpu":"200m","memory":"64Mi"}}}]}}}`).obj(),
			wantReplicas: 2,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "300m", "memory", "128Mi"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "requests: the largest init container wins over the containers' sum where bigger",
			obj: deploy("web").spec(`{"template":{"spec":{
				"initContainers":[{"name":"i1","resources":{"requests":{"cpu":"1"}}},{"name":"i2","resources":{"requests":{"cpu":"500m","memory":"1Mi"}}}],
				"containers":[{"name":"a","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}},{"name":"b","resources":{"requests":{"cpu":"200m"}}}]}}}`).obj(),
			wantReplicas: 1,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "1", "memory", "64Mi"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "requests: sidecar init containers add to the containers",
			obj: deploy("web").spec(`{"template":{"spec":{
				"initContainers":[{"name":"proxy","restartPolicy":"Always","resources":{"requests":{"cpu":"50m"}}}],
				"containers":[{"name":"a","resources":{"requests":{"cpu":"100m"}}}]}}}`).obj(),
			wantReplicas: 1,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "150m"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "requests: a limit stands in for a missing request, and overhead is added",
			obj: deploy("web").spec(`{"template":{"spec":{
				"overhead":{"cpu":"10m"},
				"containers":[{"name":"a","resources":{"limits":{"cpu":"500m","memory":"1Gi"},"requests":{"memory":"256Mi"}}}]}}}`).obj(),
			wantReplicas: 1,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "510m", "memory", "256Mi"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "requests: zero quantities are dropped",
			obj: deploy("web").spec(`{"template":{"spec":{
				"containers":[{"name":"a","resources":{"requests":{"cpu":"0","memory":"1Mi"}}}]}}}`).obj(),
			wantReplicas: 1,
			wantReq:      &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("memory", "1Mi"), Namespace: "default"},
			wantOK:       true,
		},
		{
			name: "node claim, priority class and namespace are carried",
			obj: deploy("web").namespace("shop").spec(`{"replicas":2,"template":{"spec":{
				"priorityClassName":"high",
				"nodeSelector":{"disk":"ssd"},
				"tolerations":[{"key":"gpu","operator":"Exists","effect":"NoSchedule"}],
				"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
					{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}},
				"containers":[{"name":"a"}]}}}`).obj(),
			wantReplicas: 2,
			wantReq: &workv1alpha2.ReplicaRequirements{
				NodeClaim: &workv1alpha2.NodeClaim{
					NodeSelector: map[string]string{"disk": "ssd"},
					Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
					}}},
				},
				Namespace:         "shop",
				PriorityClassName: "high",
			},
			wantOK: true,
		},
		{
			name: "preferred node affinity alone is no node claim",
			obj: deploy("web").spec(`{"template":{"spec":{
				"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
					{"weight":1,"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}}]}},
				"containers":[{"name":"a"}]}}}`).obj(),
			wantReplicas: 1, wantOK: true,
		},
		{name: "CronJob has no replicas", obj: cronJob("c").spec(`{"schedule":"* * * * *"}`).obj()},
		{name: "DaemonSet has no replicas", obj: daemonSet("d").spec(`{"template":{"spec":` + nginx + `}}`).obj()},
		{name: "Service has no replicas", obj: service("s").spec(`{"type":"ClusterIP"}`).obj()},
		{name: "a custom kind has no replicas", obj: newObj("example.io/v1", "Widget", "w").spec(`{"replicas":3}`).obj()},
		{name: "a Deployment-named kind of another group has no replicas", obj: newObj("example.io/v1", "Deployment", "w").spec(`{"replicas":3}`).obj()},
		{name: "malformed replicas are rejected", obj: deploy("web").spec(`{"replicas":"three"}`).obj()},
		{name: "negative replicas are rejected", obj: deploy("web").spec(`{"replicas":-1}`).obj()},
		{name: "malformed pod template is rejected", obj: deploy("web").spec(`{"replicas":1,"template":{"spec":{"containers":"nope"}}}`).obj()},
		{name: "nil object", obj: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replicas, req, ok := GetReplicas(tt.obj)
			if ok != tt.wantOK || replicas != tt.wantReplicas {
				t.Fatalf("GetReplicas() = (%d, _, %v), want (%d, _, %v)", replicas, ok, tt.wantReplicas, tt.wantOK)
			}
			if diff := cmp.Diff(tt.wantReq, req, quantityEqual); diff != "" {
				t.Errorf("GetReplicas() requirements mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviseReplica(t *testing.T) {
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		replicas int64
		wantPath []string
		wantErr  error
	}{
		{name: "Deployment sets spec.replicas", obj: deploy("web").spec(`{"replicas":6}`).obj(), replicas: 2, wantPath: []string{"spec", "replicas"}},
		{name: "StatefulSet sets spec.replicas", obj: statefulSet("db").spec(`{"replicas":6}`).obj(), replicas: 3, wantPath: []string{"spec", "replicas"}},
		{name: "ReplicaSet sets spec.replicas", obj: replicaSet("rs").spec(`{}`).obj(), replicas: 1, wantPath: []string{"spec", "replicas"}},
		{name: "Job sets spec.parallelism", obj: job("j").spec(`{"parallelism":6,"completions":12}`).obj(), replicas: 2, wantPath: []string{"spec", "parallelism"}},
		{name: "zero is allowed", obj: deploy("web").spec(`{"replicas":6}`).obj(), replicas: 0, wantPath: []string{"spec", "replicas"}},
		{name: "Pod cannot be revised", obj: pod("p").obj(), replicas: 2, wantErr: ErrUnsupportedKind},
		{name: "ConfigMap cannot be revised", obj: newObj("v1", "ConfigMap", "c").obj(), replicas: 2, wantErr: ErrUnsupportedKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.DeepCopy()
			got, err := ReviseReplica(tt.obj, tt.replicas)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReviseReplica() error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(before, tt.obj); diff != "" {
				t.Errorf("ReviseReplica() mutated its input (-before +after):\n%s", diff)
			}
			if tt.wantErr != nil {
				return
			}
			v, _, _ := unstructured.NestedInt64(got.Object, tt.wantPath...)
			if v != tt.replicas {
				t.Errorf("%v = %d, want %d", tt.wantPath, v, tt.replicas)
			}
		})
	}

	t.Run("Job completions are left to DivideJobCompletions", func(t *testing.T) {
		got, err := ReviseReplica(job("j").spec(`{"parallelism":6,"completions":12}`).obj(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if c, _, _ := unstructured.NestedInt64(got.Object, "spec", "completions"); c != 12 {
			t.Errorf("spec.completions = %d, want 12 (unchanged)", c)
		}
	})
	for _, n := range []int64{-1, 1 << 31} {
		if _, err := ReviseReplica(deploy("web").obj(), n); err == nil {
			t.Errorf("ReviseReplica(%d) succeeded, want an out-of-range error", n)
		}
	}
}

func TestReviseDividedReplicas(t *testing.T) {
	tc := func(name string, n int32) workv1alpha2.TargetCluster {
		return workv1alpha2.TargetCluster{Name: name, Replicas: n}
	}
	weighted := []workv1alpha2.TargetCluster{tc("member2", 6), tc("member1", 4)}
	batch := func() *objBuilder {
		return job("batch").namespace("t").spec(`{"parallelism":10,"completions":10,
			"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"busybox:1.36"}]}}}`)
	}
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		clusters []workv1alpha2.TargetCluster
		target   workv1alpha2.TargetCluster
		want     map[string]int64 // spec field -> value; a missing field is wanted absent
		wantErr  error
	}{
		{
			name:     "Job divided 6:4 among member2 and member1: member2 runs 6 of the 10 completions",
			obj:      batch().obj(),
			clusters: weighted, target: weighted[0],
			want: map[string]int64{"parallelism": 6, "completions": 6},
		},
		{
			name:     "Job divided 6:4 among member2 and member1: member1 runs the other 4",
			obj:      batch().obj(),
			clusters: weighted, target: weighted[1],
			want: map[string]int64{"parallelism": 4, "completions": 4},
		},
		{
			name:     "Job with more completions than parallelism: completions follow the replica shares, remainder to the larger share",
			obj:      job("j").spec(`{"parallelism":3,"completions":7}`).obj(),
			clusters: []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 1)}, target: tc("a", 2),
			want: map[string]int64{"parallelism": 2, "completions": 5},
		},
		{
			name:     "work-queue Job: parallelism divided, completions stay unset",
			obj:      job("j").spec(`{"parallelism":4}`).obj(),
			clusters: []workv1alpha2.TargetCluster{tc("a", 3), tc("b", 1)}, target: tc("b", 1),
			want: map[string]int64{"parallelism": 1},
		},
		{
			name:     "Deployment: only spec.replicas scales",
			obj:      deploy("web").spec(`{"replicas":10}`).obj(),
			clusters: weighted, target: weighted[1],
			want: map[string]int64{"replicas": 4},
		},
		{
			name:     "StatefulSet: spec.replicas",
			obj:      statefulSet("db").spec(`{"replicas":10}`).obj(),
			clusters: weighted, target: weighted[0],
			want: map[string]int64{"replicas": 6},
		},
		{
			name:     "ReplicaSet: spec.replicas",
			obj:      replicaSet("rs").spec(`{"replicas":10}`).obj(),
			clusters: weighted, target: weighted[0],
			want: map[string]int64{"replicas": 6},
		},
		{
			name:     "Pod has nothing to divide",
			obj:      pod("p").obj(),
			clusters: weighted, target: weighted[0],
			wantErr: ErrUnsupportedKind,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.DeepCopy()
			got, err := ReviseDividedReplicas(tt.obj, tt.clusters, tt.target)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReviseDividedReplicas() error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(before, tt.obj); diff != "" {
				t.Errorf("ReviseDividedReplicas() mutated its input (-before +after):\n%s", diff)
			}
			if tt.wantErr != nil {
				return
			}
			gotFields := map[string]int64{}
			for _, f := range []string{"replicas", "parallelism", "completions"} {
				if v, found, _ := unstructured.NestedInt64(got.Object, "spec", f); found {
					gotFields[f] = v
				}
			}
			if diff := cmp.Diff(tt.want, gotFields); diff != "" {
				t.Errorf("ReviseDividedReplicas() spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDivideJobCompletions(t *testing.T) {
	tc := func(kv ...any) []workv1alpha2.TargetCluster {
		var out []workv1alpha2.TargetCluster
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, workv1alpha2.TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
		}
		return out
	}
	tests := []struct {
		name     string
		job      *unstructured.Unstructured
		clusters []workv1alpha2.TargetCluster
		want     []workv1alpha2.TargetCluster
		wantErr  bool
	}{
		{
			name:     "even split",
			job:      job("j").spec(`{"completions":10}`).obj(),
			clusters: tc("a", 5, "b", 5),
			want:     tc("a", 5, "b", 5),
		},
		{
			name:     "proportional to replicas, remainder to the cluster with most replicas",
			job:      job("j").spec(`{"completions":10}`).obj(),
			clusters: tc("b", 1, "a", 3),
			want:     tc("b", 2, "a", 8),
		},
		{
			name:     "remainder ties go by cluster name",
			job:      job("j").spec(`{"completions":4}`).obj(),
			clusters: tc("c", 1, "b", 1, "a", 1),
			want:     tc("c", 1, "b", 1, "a", 2),
		},
		{
			name:     "clusters without replicas get no completions",
			job:      job("j").spec(`{"completions":3}`).obj(),
			clusters: tc("a", 2, "idle", 0),
			want:     tc("a", 3, "idle", 0),
		},
		{name: "work-queue job without completions is not divided", job: job("j").spec(`{"parallelism":3}`).obj(), clusters: tc("a", 1, "b", 2)},
		{name: "no replicas anywhere, nothing to divide", job: job("j").spec(`{"completions":3}`).obj(), clusters: tc("a", 0)},
		{name: "not a Job", job: deploy("d").obj(), clusters: tc("a", 1), wantErr: true},
		{name: "malformed completions", job: job("j").spec(`{"completions":"ten"}`).obj(), clusters: tc("a", 1), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DivideJobCompletions(tt.job, tt.clusters)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DivideJobCompletions() error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DivideJobCompletions() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviseJobCompletions(t *testing.T) {
	j := job("j").spec(`{"completions":10,"parallelism":4}`).obj()
	got, err := ReviseJobCompletions(j, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedInt64(got.Object, "spec", "completions"); c != 3 {
		t.Errorf("spec.completions = %d, want 3", c)
	}
	if c, _, _ := unstructured.NestedInt64(j.Object, "spec", "completions"); c != 10 {
		t.Errorf("input mutated: spec.completions = %d, want 10", c)
	}
	if _, err := ReviseJobCompletions(deploy("d").obj(), 3); !errors.Is(err, ErrUnsupportedKind) {
		t.Errorf("ReviseJobCompletions(Deployment) error = %v, want ErrUnsupportedKind", err)
	}
}
