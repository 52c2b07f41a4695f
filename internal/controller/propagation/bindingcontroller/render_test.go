package bindingcontroller_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/bindingcontroller"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// bindingBuilder builds the binding Render reads: the template reference,
// the placement, the replicas, the target clusters and the policy's
// conflictResolution.
type bindingBuilder struct {
	b *workv1alpha2.ResourceBinding
}

// newBinding starts the ResourceBinding of the template kind ns/name.
func newBinding(kind, ns, name string) *bindingBuilder {
	b := &workv1alpha2.ResourceBinding{}
	b.Namespace, b.Name = ns, binding.Name(name, kind)
	b.Spec.Resource = workv1alpha2.ObjectReference{Kind: kind, Namespace: ns, Name: name}
	b.Labels = map[string]string{binding.PermanentIDLabel: "rb-1"}
	return &bindingBuilder{b}
}

// divided schedules replicas among clusters (name, replicas, name,
// replicas, ...) with Divided placement.
func (bb *bindingBuilder) divided(replicas int32, clusters ...any) *bindingBuilder {
	bb.b.Spec.Replicas = replicas
	bb.b.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	return bb.to(clusters...)
}

// duplicated schedules replicas to every cluster (name, replicas, ...) with
// Duplicated placement.
func (bb *bindingBuilder) duplicated(replicas int32, clusters ...any) *bindingBuilder {
	bb.b.Spec.Replicas = replicas
	bb.b.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}
	return bb.to(clusters...)
}

func (bb *bindingBuilder) to(clusters ...any) *bindingBuilder {
	for i := 0; i+1 < len(clusters); i += 2 {
		bb.b.Spec.Clusters = append(bb.b.Spec.Clusters, workv1alpha2.TargetCluster{Name: clusters[i].(string), Replicas: int32(clusters[i+1].(int))})
	}
	return bb
}

// conflict sets the claiming policy's conflictResolution.
func (bb *bindingBuilder) conflict(c policyv1alpha1.ConflictResolution) *bindingBuilder {
	bb.b.Spec.ConflictResolution = c
	return bb
}

// target returns the binding and its target cluster named cluster.
func (bb *bindingBuilder) target(cluster string) (*workv1alpha2.ResourceBinding, workv1alpha2.TargetCluster) {
	for _, tc := range bb.b.Spec.Clusters {
		if tc.Name == cluster {
			return bb.b, tc
		}
	}
	return bb.b, workv1alpha2.TargetCluster{Name: cluster}
}

// object decodes JSON into an unstructured object; it panics on bad JSON,
// which only a broken test table has.
func object(s string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		panic(err)
	}
	return u
}

// The deployment every case below starts from, as the control plane stores
// it: server-set metadata, status, and its deployment controller's revision
// annotation (none runs on the control plane, but a template applied from a
// cluster's export carries it).
const storedDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
	"uid":"u-1","resourceVersion":"42","generation":3,"creationTimestamp":"2026-01-01T00:00:00Z",
	"managedFields":[{"manager":"kubectl"}],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"o-1"}],
	"finalizers":["example.io/hold"],
	"labels":{"app":"web"},
	"annotations":{"note":"kept","deployment.kubernetes.io/revision":"7"}},
	"spec":{"replicas":6,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}},
	"status":{"replicas":6,"readyReplicas":6}}`

func TestRender(t *testing.T) {
	// WORK in want stands for the Work name, a hash of the template's kind,
	// namespace and name.
	tests := []struct {
		name     string
		template string
		binding  *bindingBuilder
		cluster  string
		override func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
		want     string
	}{
		{
			name:     "the manifest loses server metadata, status and member-owned fields, and gains Karmada's managed label and annotations",
			template: storedDeployment,
			binding:  newBinding("Deployment", "shop", "web").duplicated(6, "member1", 6, "member2", 6),
			cluster:  "member1",
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"app":"web","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{"note":"kept",
					"resourcetemplate.karmada.io/managed-labels":"app,karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"note,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member1","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"3","resourcetemplate.karmada.io/uid":"u-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"web-deployment","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"replicas":6,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		},
		{
			name:     "Divided placement gives the cluster its share of the replicas",
			template: storedDeployment,
			binding:  newBinding("Deployment", "shop", "web").divided(6, "member1", 2, "member2", 4),
			cluster:  "member2",
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"app":"web","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{"note":"kept",
					"resourcetemplate.karmada.io/managed-labels":"app,karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"note,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member2","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"3","resourcetemplate.karmada.io/uid":"u-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"web-deployment","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"replicas":4,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		},
		{
			name:     "the override applies to the revised manifest, and the managed lists name what it added",
			template: storedDeployment,
			binding:  newBinding("Deployment", "shop", "web").divided(6, "member1", 2, "member2", 4),
			cluster:  "member1",
			override: func(m *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				// What the override receives: pruned, and revised for member1.
				if _, has := m.Object["status"]; has {
					return nil, errors.New("the override got the template's status")
				}
				if r, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); r != 2 {
					return nil, errors.New("the override got the template's replicas, not member1's share")
				}
				m.SetLabels(map[string]string{"app": "web", "env": "prod"})
				m.SetAnnotations(map[string]string{"note": "kept", "owner": "team-a"})
				return m, nil
			},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"app":"web","env":"prod","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{"note":"kept","owner":"team-a",
					"resourcetemplate.karmada.io/managed-labels":"app,env,karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"note,owner,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member1","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"3","resourcetemplate.karmada.io/uid":"u-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"web-deployment","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		},
		{
			name:     "an override that drops every label and annotation cannot drop Flotilla's own: they are added after it",
			template: storedDeployment,
			binding:  newBinding("Deployment", "shop", "web").duplicated(6, "member1", 6),
			cluster:  "member1",
			override: func(m *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				m.SetLabels(nil)
				m.SetAnnotations(nil)
				return m, nil
			},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{
					"resourcetemplate.karmada.io/managed-labels":"karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member1","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"3","resourcetemplate.karmada.io/uid":"u-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"web-deployment","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"replicas":6,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		},
		{
			name:     "Duplicated placement that holds fewer replicas than the template (a quota refused the scale-up) keeps the placed replicas",
			template: storedDeployment,
			binding:  newBinding("Deployment", "shop", "web").duplicated(6, "member1", 4, "member2", 4),
			cluster:  "member1",
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop",
				"labels":{"app":"web","karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{"note":"kept",
					"resourcetemplate.karmada.io/managed-labels":"app,karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"note,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member1","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"3","resourcetemplate.karmada.io/uid":"u-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"web-deployment","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"replicas":4,"template":{"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		},
		{
			name: "a Duplicated Job whose placement holds fewer replicas runs that parallelism and keeps all its completions",
			template: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","namespace":"shop","uid":"j-1","generation":1},
				"spec":{"parallelism":4,"completions":8,
					"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"r","image":"busybox"}]}}}}`,
			binding: newBinding("Job", "shop", "report").duplicated(4, "member1", 2, "member2", 2),
			cluster: "member2",
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","namespace":"shop",
				"labels":{"karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{
					"resourcetemplate.karmada.io/managed-labels":"karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member2","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"1","resourcetemplate.karmada.io/uid":"j-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"report-job","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"parallelism":2,"completions":8,
					"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"r","image":"busybox"}]}}}}`,
		},
		{
			name: "a Divided Job runs its share of parallelism and of completions in each cluster, and loses its TTL and generated selector",
			template: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","namespace":"shop","uid":"j-1","generation":1},
				"spec":{"parallelism":4,"completions":8,"ttlSecondsAfterFinished":60,
					"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"j-1"}},
					"template":{"metadata":{"labels":{"batch.kubernetes.io/controller-uid":"j-1","batch.kubernetes.io/job-name":"report"}},
						"spec":{"restartPolicy":"Never","containers":[{"name":"r","image":"busybox"}]}}}}`,
			binding: newBinding("Job", "shop", "report").divided(4, "member1", 1, "member2", 3),
			cluster: "member2",
			want: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"report","namespace":"shop",
				"labels":{"karmada.io/managed":"true","resourcebinding.karmada.io/permanent-id":"rb-1"},
				"annotations":{
					"resourcetemplate.karmada.io/managed-labels":"karmada.io/managed,resourcebinding.karmada.io/permanent-id",
					"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
					"work.karmada.io/namespace":"karmada-es-member2","work.karmada.io/name":"WORK",
					"resourcetemplate.karmada.io/generation":"1","resourcetemplate.karmada.io/uid":"j-1",
					"work.karmada.io/conflict-resolution":"abort",
					"resourcebinding.karmada.io/name":"report-job","resourcebinding.karmada.io/namespace":"shop"}},
				"spec":{"parallelism":3,"completions":6,
					"template":{"metadata":{"labels":{}},"spec":{"restartPolicy":"Never","containers":[{"name":"r","image":"busybox"}]}}}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := object(tc.template)
			before := tmpl.DeepCopy()
			b, target := tc.binding.target(tc.cluster)
			got, err := bindingcontroller.Render(context.Background(), nil, tmpl, b, target, tc.override)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			want := object(strings.ReplaceAll(tc.want, "WORK", binding.WorkName(b.Spec.Resource.Kind, b.Spec.Resource.Namespace, b.Spec.Resource.Name)))
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, tmpl.Object); diff != "" {
				t.Errorf("Render changed the template (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRenderConflictResolution: the manifest's work.karmada.io/conflict-resolution
// is the template's annotation when Karmada accepts its value, else the
// claiming policy's conflictResolution, Abort by default.
func TestRenderConflictResolution(t *testing.T) {
	tests := []struct {
		name       string
		annotation string // on the template; "" for none
		policy     policyv1alpha1.ConflictResolution
		want       string
	}{
		{name: "neither the template nor the policy says: abort", want: "abort"},
		{name: "the policy says Overwrite", policy: policyv1alpha1.ConflictOverwrite, want: "overwrite"},
		{name: "the template's overwrite wins over the policy's Abort", annotation: "overwrite", policy: policyv1alpha1.ConflictAbort, want: "overwrite"},
		{name: "the template's abort wins over the policy's Overwrite", annotation: "abort", policy: policyv1alpha1.ConflictOverwrite, want: "abort"},
		{name: "a value Karmada does not accept is ignored for the policy's", annotation: "Overwrite", policy: policyv1alpha1.ConflictAbort, want: "abort"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := object(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop"},"data":{"k":"v"}}`)
			if tc.annotation != "" {
				tmpl.SetAnnotations(map[string]string{"work.karmada.io/conflict-resolution": tc.annotation})
			}
			b, target := newBinding("ConfigMap", "shop", "settings").to("member1", 0).conflict(tc.policy).target("member1")
			got, err := bindingcontroller.Render(context.Background(), nil, tmpl, b, target, nil)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if v := got.GetAnnotations()["work.karmada.io/conflict-resolution"]; v != tc.want {
				t.Errorf("conflict-resolution = %q, want %q", v, tc.want)
			}
		})
	}
}

// TestRenderOverrideFailure: a rule that cannot apply to the template fails
// the rendering of that cluster, with the override's error.
func TestRenderOverrideFailure(t *testing.T) {
	refused := errors.New(`replace /spec/nosuch: no such path`)
	b, target := newBinding("Deployment", "shop", "web").duplicated(6, "member1", 6).target("member1")
	got, err := bindingcontroller.Render(context.Background(), nil, object(storedDeployment), b, target, func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return nil, refused
	})
	if !errors.Is(err, refused) || got != nil {
		t.Errorf("Render = %v, %v; want no manifest and the override's error", got, err)
	}
}
