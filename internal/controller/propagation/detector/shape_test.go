package detector

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// The shape lists the interpreter operations that answer for the kind,
// for Karmada's GetReplicas* and GetComponents* events: replicas for a
// built-in workload, nothing for a kind without replicas, and a
// customization's failure as a failure.
func TestWorkloadShapeListsTheOperationsAsked(t *testing.T) {
	widget := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": map[string]any{"replicas": int64(2)}}}
	}
	custom := func(rules configv1alpha1.CustomizationRules) *interpreter.Interpreter {
		in := interpreter.New(nil)
		in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{{ObjectMeta: metav1.ObjectMeta{Name: "widget"},
			Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
				Target:         configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
				Customizations: rules}}})
		return in
	}
	configMap := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default"}}}
	for _, tc := range []struct {
		name    string
		in      *interpreter.Interpreter
		obj     *unstructured.Unstructured
		want    []string // reason of each outcome: Succeed, or Failed when it failed
		wantErr bool
	}{
		{"a Deployment's replicas", interpreter.Or(nil), deploymentTemplate("1", 1, nil), []string{events.GetReplicasSucceed}, false},
		{"a ConfigMap has none", interpreter.Or(nil), configMap, nil, false},
		{"a custom kind without customization", interpreter.Or(nil), widget(), nil, false},
		{"customized replicas and components", custom(configv1alpha1.CustomizationRules{
			ReplicaResource:   &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(o) return o.spec.replicas end"},
			ComponentResource: &configv1alpha1.ComponentResourceRequirement{LuaScript: "function GetComponents(o) return {} end"},
		}), widget(), []string{events.GetReplicasSucceed, events.GetComponentsSucceed}, false},
		{"a failing replica script", custom(configv1alpha1.CustomizationRules{
			ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(o) return o.spec.nothing.here end"},
		}), widget(), []string{events.GetReplicasFailed}, true},
		{"a failing component script", custom(configv1alpha1.CustomizationRules{
			ComponentResource: &configv1alpha1.ComponentResourceRequirement{LuaScript: "function GetComponents(o) error('boom') end"},
		}), widget(), []string{events.GetComponentsFailed}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := workloadShapeOf(context.Background(), tc.in, tc.obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			var got []string
			for _, o := range s.asked {
				if o.err != nil {
					got = append(got, o.op.Failed)
				} else {
					got = append(got, o.op.Succeed)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}
