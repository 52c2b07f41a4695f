package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/flotilla-io/flotilla/internal/admission/claim"
	"github.com/flotilla-io/flotilla/internal/admission/webhook"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// A mutating plugin's change comes back as a JSONPatch that reproduces it:
// the claim plugin gives a new PropagationPolicy its permanent id.
func TestMutationBecomesAPatch(t *testing.T) {
	p := claim.New()
	scheme := runtime.NewScheme()
	p.SetDynamicClient(dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}:        "PropagationPolicyList",
		{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusterpropagationpolicies"}: "ClusterPropagationPolicyList",
	}))
	p.SetRESTMapper(meta.NewDefaultRESTMapper(nil))
	stop := make(chan struct{})
	defer close(stop)
	p.SetDrainedNotification(stop)

	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}},
	}}
	raw, err := json.Marshal(policy.Object)
	if err != nil {
		t.Fatal(err)
	}
	resp := webhook.Review(context.Background(), p, &admissionv1.AdmissionRequest{
		UID:       "7",
		Kind:      metav1.GroupVersionKind{Group: "policy.karmada.io", Version: "v1alpha1", Kind: "PropagationPolicy"},
		Resource:  metav1.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"},
		Namespace: "default", Name: "web", Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: raw},
	})
	if !resp.Allowed || resp.UID != "7" || resp.PatchType == nil {
		t.Fatalf("response %+v: want allowed with a patch", resp)
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := patch.Apply(raw)
	if err != nil {
		t.Fatal(err)
	}
	var got unstructured.Unstructured
	if err := json.Unmarshal(patched, &got.Object); err != nil {
		t.Fatal(err)
	}
	if got.GetLabels()[policymatch.PropagationPolicyPermanentIDLabel] == "" {
		t.Errorf("patched policy has no permanent-id label: %s", patched)
	}

	// An update is not the claim plugin's: allowed untouched.
	resp = webhook.Review(context.Background(), p, &admissionv1.AdmissionRequest{
		UID: "8", Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: raw}, OldObject: runtime.RawExtension{Raw: raw},
	})
	if !resp.Allowed || resp.Patch != nil {
		t.Errorf("update: %+v, want allowed without a patch", resp)
	}
}

// Undecodable objects are refused with 400.
func TestBadObjectIsRefused(t *testing.T) {
	resp := webhook.Review(context.Background(), claim.New(), &admissionv1.AdmissionRequest{
		UID: "9", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte("[1,2")},
	})
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 400 {
		t.Errorf("response %+v: want a 400 refusal", resp)
	}
}
