package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestStatusBody(t *testing.T) {
	w := &workv1alpha1.Work{
		TypeMeta: metav1.TypeMeta{APIVersion: "work.karmada.io/v1alpha1", Kind: "Work"},
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "karmada-es-member1", UID: types.UID("u"), ResourceVersion: "7",
			Labels: map[string]string{"l": "1"}, Finalizers: []string{"f"}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}}}},
		Status: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: "Applied", Status: metav1.ConditionTrue}}},
	}
	got, err := statusBody(w)
	if err != nil {
		t.Fatal(err)
	}
	body := got.(*workv1alpha1.Work)
	if body.Name != "w" || body.Namespace != w.Namespace || body.UID != "u" || body.ResourceVersion != "7" || body.APIVersion != w.APIVersion {
		t.Errorf("identity not kept: %+v", body.ObjectMeta)
	}
	if len(body.Labels) != 0 || len(body.Finalizers) != 0 || len(body.Spec.Workload.Manifests) != 0 {
		t.Errorf("the body carries more than identity and status: labels %v, finalizers %v, %d manifests", body.Labels, body.Finalizers, len(body.Spec.Workload.Manifests))
	}
	if len(body.Status.Conditions) != 1 || body.Status.Conditions[0].Type != "Applied" {
		t.Errorf("status not carried: %+v", body.Status)
	}
	body.Status.Conditions[0].Type = "Changed" // as a decoder reusing the slice would
	if w.Status.Conditions[0].Type != "Applied" {
		t.Error("the body shares its status with the object: decoding the answer into it would change the object")
	}

	// Any type with ObjectMeta and Status: a binding too.
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default", ResourceVersion: "3"},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 2}, Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 4}}
	got, err = statusBody(rb)
	if err != nil {
		t.Fatal(err)
	}
	if b := got.(*workv1alpha2.ResourceBinding); b.Spec.Replicas != 0 || b.Status.SchedulerObservedGeneration != 4 || b.ResourceVersion != "3" {
		t.Errorf("binding body %+v", b)
	}
}
