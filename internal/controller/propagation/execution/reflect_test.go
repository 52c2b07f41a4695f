package execution

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/test/fakeevents"
)

func observedObject(apiVersion, kind, name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "ns", "generation": int64(1)}}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func identifier(u *unstructured.Unstructured) workv1alpha1.ResourceIdentifier {
	gvk := u.GroupVersionKind()
	return workv1alpha1.ResourceIdentifier{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Karmada's ReflectStatus* and InterpretHealth* on the Work: one outcome per
// member object and operation, raised when it changes; the health of a kind
// nothing judges raises nothing.
func TestReflectedStatusEvents(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Reconciler{StatusEvents: &eventrecord.Recorder{Events: fake}}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", UID: types.UID("w-uid")}}
	deploy := observedObject("apps/v1", "Deployment", "web", map[string]any{"observedGeneration": int64(1), "replicas": int64(1)})
	cm := observedObject("v1", "ConfigMap", "settings", nil)
	in := interpreter.New(nil)
	sts := []reflected{
		reflectManifest(context.Background(), in, "member1", identifier(deploy), deploy),
		reflectManifest(context.Background(), in, "member1", identifier(cm), cm),
	}
	if sts[0].Status == nil || sts[0].Health == "" || sts[1].Health != workv1alpha1.ResourceHealthy {
		t.Errorf("statuses = %+v", sts)
	}
	r.reportInterpretations(w, sts)
	r.reportInterpretations(w, sts) // the next reconcile: nothing new
	want := []string{
		"Normal InterpretHealthSucceed Health of Deployment ns/web in cluster member1 is interpreted into the Work's status.",
		"Normal ReflectStatusSucceed Status of Deployment ns/web in cluster member1 is reflected into the Work's status.",
		"Normal ReflectStatusSucceed Status of ConfigMap ns/settings in cluster member1 is reflected into the Work's status.",
	}
	if diff := cmp.Diff(want, fakeevents.Drain(fake)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A health customization that fails reads Unknown and is a Warning naming
// the object; a status that cannot be reflected leaves none.
func TestFailedInterpretationsAreWarnings(t *testing.T) {
	in := interpreter.New(nil)
	in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{{ObjectMeta: metav1.ObjectMeta{Name: "widget"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
			Customizations: configv1alpha1.CustomizationRules{
				HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o) error('boom') end"},
				StatusReflection:     &configv1alpha1.StatusReflection{LuaScript: "function ReflectStatus(o) error('bust') end"},
			}}}})
	widget := observedObject("example.io/v1", "Widget", "w", map[string]any{"phase": "Up"})
	st := reflectManifest(context.Background(), in, "member2", identifier(widget), widget)
	if st.Health != workv1alpha1.ResourceUnknown || st.Status != nil {
		t.Errorf("health %s, status %v; want Unknown and none", st.Health, st.Status)
	}
	fake := record.NewFakeRecorder(10)
	r := &Reconciler{StatusEvents: &eventrecord.Recorder{Events: fake}}
	r.reportInterpretations(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: types.UID("u")}}, []reflected{st})
	got := fakeevents.Drain(fake)
	if len(got) != 2 || !strings.HasPrefix(got[0], "Warning InterpretHealthFailed cannot interpret the health of Widget ns/w in cluster member2") ||
		!strings.HasPrefix(got[1], "Warning ReflectStatusFailed cannot reflect the status of Widget ns/w in cluster member2") {
		t.Errorf("events = %q", got)
	}
}
