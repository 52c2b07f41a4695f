package integration

import (
	"context"
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// executionCases check the execution controller: the objects of a Work
// exist in its member as the Work holds them, drift there is reverted, and
// a deleted Work takes its objects with it.
var executionCases = []integrationCase{
	{
		name: "the member copy has the data, labels and annotations of its Work's manifest",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("settings").selecting("ConfigMap", "settings").to("member1").obj())
			e.create(e.controlPlane, e.configMap("settings", map[string]string{"color": "blue"}))
			w := waitFor(e, e.controlPlane, e.workOf("member1", "ConfigMap", "settings"), "settings' Work in member1", exists)
			m, err := manifest(w)
			if err != nil {
				e.Fatal(err)
			}
			want := &corev1.ConfigMap{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, want); err != nil {
				e.Fatal(err)
			}
			waitFor(e, e.members["member1"], e.configMap("settings", nil), "settings in member1 as its Work holds it",
				func(cm *corev1.ConfigMap) (bool, string) {
					return maps.Equal(cm.Data, want.Data) && contains(cm.Labels, want.Labels) && contains(cm.Annotations, want.Annotations),
						describe(cm.Data, cm.Labels, cm.Annotations, "want", want.Data, want.Labels, want.Annotations)
				})
		},
	},
	{
		name: "a change made in the member is reverted to the Work's content",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("settings").selecting("ConfigMap", "settings").to("member1").obj())
			e.create(e.controlPlane, e.configMap("settings", map[string]string{"color": "blue"}))
			inMember := e.configMap("settings", nil)
			waitFor(e, e.members["member1"], inMember, "settings in member1", exists)
			update(e, e.members["member1"], inMember, func(cm *corev1.ConfigMap) { cm.Data["color"] = "red" })
			waitFor(e, e.members["member1"], inMember, "color blue again in member1", func(cm *corev1.ConfigMap) (bool, string) {
				return cm.Data["color"] == "blue", describe(cm.Data)
			})
		},
	},
	{
		name: "deleting a Work deletes its object from the member",
		run: func(e *env) {
			// Written by hand: a Work the binding controller owns would be
			// written again as soon as it is deleted.
			w := e.handWork("member1", e.configMap("settings", map[string]string{"color": "blue"}))
			inMember := e.configMap("settings", nil)
			waitFor(e, e.members["member1"], inMember, "settings in member1", func(cm *corev1.ConfigMap) (bool, string) {
				return cm.Data["color"] == "blue", describe(cm.Data)
			})
			waitFor(e, e.controlPlane, w, "the Work Applied", func(w *workv1alpha1.Work) (bool, string) {
				return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied), describe(w.Status.Conditions)
			})
			e.delete(e.controlPlane, w)
			e.waitGone(e.members["member1"], inMember, "settings deleted from member1")
			e.waitGone(e.controlPlane, w, "the Work released by the execution controller")
		},
	},
}

// handWork creates, in cluster's execution namespace, a Work holding obj as
// the binding controller renders it (the managed label, the Work's name and
// namespace annotations), and deletes it when the case ends if it is still
// there.
func (e *env) handWork(cluster string, obj client.Object) *workv1alpha1.Work {
	e.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1alpha1.ExecutionNamespace(cluster), Name: "hand-" + e.ns}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		e.Fatal(err)
	}
	gvks, _, err := e.controlPlane.Scheme().ObjectKinds(obj)
	if err != nil {
		e.Fatal(err)
	}
	u["apiVersion"], u["kind"] = gvks[0].GroupVersion().String(), gvks[0].Kind
	md := u["metadata"].(map[string]any)
	delete(md, "creationTimestamp")
	md["labels"] = map[string]any{registry.ManagedLabel: "true"}
	md["annotations"] = map[string]any{binding.WorkNameAnnotation: w.Name, binding.WorkNamespaceAnnotation: w.Namespace}
	raw, err := json.Marshal(u)
	if err != nil {
		e.Fatal(err)
	}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	e.create(e.controlPlane, w)
	e.Cleanup(func() {
		if err := e.controlPlane.Delete(context.Background(), w); client.IgnoreNotFound(err) != nil {
			e.Errorf("delete Work %s/%s: %v", w.Namespace, w.Name, err)
		}
	})
	return w
}

// contains reports whether every entry of want is in got.
func contains(got, want map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}
