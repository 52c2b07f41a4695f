package defaulting

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/admission/webhook"
)

var (
	fhpaGR  = schema.GroupResource{Group: "autoscaling.karmada.io", Resource: "federatedhpas"}
	fhpaGVK = schema.GroupVersionKind{Group: "autoscaling.karmada.io", Version: "v1alpha1", Kind: "FederatedHPA"}
)

// fhpaObject returns a FederatedHPA's JSON map whose spec is specYAML.
func fhpaObject(t *testing.T, specYAML string) map[string]any {
	t.Helper()
	var obj map[string]any
	doc := "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {name: web, namespace: default}\nspec:\n" + specYAML
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// specYAML renders obj's spec as YAML, for comparisons.
func specYAML(t *testing.T, obj map[string]any) string {
	t.Helper()
	out, err := yaml.Marshal(obj["spec"])
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

const (
	// behaviorWithoutSelectPolicy is Karmada issue 4085's FederatedHPA; the metric's target is
	// written "0.5", which the typed API would write "500m".
	behaviorWithoutSelectPolicy = `  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Pods
    pods:
      metric: {name: http_requests_per_second}
      target: {type: AverageValue, averageValue: "0.5"}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 60
`
	behaviorDefaulted = `behavior:
  scaleDown:
    policies:
    - periodSeconds: 15
      type: Percent
      value: 100
    selectPolicy: Max
    stabilizationWindowSeconds: 60
  scaleUp:
    policies:
    - periodSeconds: 15
      type: Pods
      value: 4
    - periodSeconds: 15
      type: Percent
      value: 100
    selectPolicy: Max
    stabilizationWindowSeconds: 0
maxReplicas: 10
metrics:
- pods:
    metric:
      name: http_requests_per_second
    target:
      averageValue: "0.5"
      type: AverageValue
  type: Pods
minReplicas: 1
scaleTargetRef:
  apiVersion: apps/v1
  kind: Deployment
  name: web
`
)

func TestDefault(t *testing.T) {
	t.Run("a behavior without selectPolicy is completed, and only the behavior is written", func(t *testing.T) {
		obj := fhpaObject(t, behaviorWithoutSelectPolicy)
		ops := Default(fhpaGR, obj)
		if len(ops) != 1 || ops[0].Path != "/spec/behavior" || ops[0].Op != "add" {
			t.Errorf("operations %+v, want one add of /spec/behavior", ops)
		}
		if diff := cmp.Diff(behaviorDefaulted, specYAML(t, obj)); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
	})

	t.Run("an empty metrics list becomes 80% CPU", func(t *testing.T) {
		obj := fhpaObject(t, "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 10\n  metrics: []\n")
		ops := Default(fhpaGR, obj)
		if len(ops) != 1 || ops[0].Path != "/spec/metrics" {
			t.Errorf("operations %+v, want one of /spec/metrics", ops)
		}
		want := `maxReplicas: 10
metrics:
- resource:
    name: cpu
    target:
      averageUtilization: 80
      type: Utilization
  type: Resource
minReplicas: 2
scaleTargetRef:
  apiVersion: apps/v1
  kind: Deployment
  name: web
`
		if diff := cmp.Diff(want, specYAML(t, obj)); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
	})

	t.Run("a defaulted object is left alone", func(t *testing.T) {
		obj := fhpaObject(t, behaviorWithoutSelectPolicy)
		Default(fhpaGR, obj)
		if ops := Default(fhpaGR, obj); len(ops) != 0 {
			t.Errorf("second pass: %+v, want nothing", ops)
		}
	})

	t.Run("other resources and objects the typed API cannot hold are left alone", func(t *testing.T) {
		if ops := Default(schema.GroupResource{Group: "apps", Resource: "deployments"}, map[string]any{"spec": map[string]any{}}); ops != nil {
			t.Errorf("a Deployment: %+v", ops)
		}
		obj := map[string]any{"spec": map[string]any{"maxReplicas": "many"}}
		if ops := Default(fhpaGR, obj); ops != nil || obj["spec"].(map[string]any)["maxReplicas"] != "many" {
			t.Errorf("a spec that does not convert: %+v, %v", ops, obj)
		}
	})
}

func TestPluginAdmit(t *testing.T) {
	u := &unstructured.Unstructured{Object: fhpaObject(t, behaviorWithoutSelectPolicy)}
	attrs := admission.NewAttributesRecord(u, nil, fhpaGVK, "default", "web",
		fhpaGR.WithVersion("v1alpha1"), "", admission.Create, nil, false, nil)
	var p admission.MutationInterface = &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
	if err := p.Admit(context.Background(), attrs, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(behaviorDefaulted, specYAML(t, u.Object)); diff != "" {
		t.Errorf("spec after admission (-want +got):\n%s", diff)
	}

	status := &unstructured.Unstructured{Object: fhpaObject(t, behaviorWithoutSelectPolicy)}
	attrs = admission.NewAttributesRecord(status, nil, fhpaGVK, "default", "web",
		fhpaGR.WithVersion("v1alpha1"), "status", admission.Update, nil, false, nil)
	if err := p.Admit(context.Background(), attrs, nil); err != nil {
		t.Fatal(err)
	}
	if got := specYAML(t, status.Object); got == behaviorDefaulted {
		t.Errorf("a status write was defaulted")
	}
}

func TestWebhookPatchesTheSameDefaults(t *testing.T) {
	srv := httptest.NewServer(webhook.Handler(New()))
	defer srv.Close()
	obj := fhpaObject(t, behaviorWithoutSelectPolicy)
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	in := admissionv1.AdmissionReview{
		Request: &admissionv1.AdmissionRequest{
			UID:       "1",
			Kind:      metaGVK(fhpaGVK),
			Resource:  metaGVR(fhpaGR.WithVersion("v1alpha1")),
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
	body, _ := json.Marshal(in)
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	r := out.Response
	if r == nil || !r.Allowed || r.UID != "1" || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("response %+v, want an allowed one with a JSONPatch", r)
	}
	patch, err := jsonpatch.DecodePatch(r.Patch)
	if err != nil {
		t.Fatalf("patch %s: %v", r.Patch, err)
	}
	patched, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("applying %s: %v", r.Patch, err)
	}
	var got map[string]any
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(behaviorDefaulted, specYAML(t, got)); diff != "" {
		t.Errorf("patched spec (-want +got):\n%s", diff)
	}

	bad, err := http.Post(srv.URL, "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("a review without a request: HTTP %d, want 400", bad.StatusCode)
	}
}

func metaGVK(gvk schema.GroupVersionKind) metav1.GroupVersionKind {
	return metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

func metaGVR(gvr schema.GroupVersionResource) metav1.GroupVersionResource {
	return metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
}

func TestPolicySelectingServiceImportPropagatesDependencies(t *testing.T) {
	for _, resource := range []string{"propagationpolicies", "clusterpropagationpolicies"} {
		gr := schema.GroupResource{Group: "policy.karmada.io", Resource: resource}
		var obj map[string]any
		doc := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web-import, namespace: default}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: web}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		ops := Default(gr, obj)
		if len(ops) != 1 || ops[0].Path != "/spec/propagateDeps" || ops[0].Value != true {
			t.Errorf("%s: operations %+v, want propagateDeps set to true", resource, ops)
		}
		if obj["spec"].(map[string]any)["propagateDeps"] != true {
			t.Errorf("%s: the object was not changed: %v", resource, obj["spec"])
		}
		// A policy without a ServiceImport is left alone.
		plain := map[string]any{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
			"metadata": map[string]any{"name": "p"},
			"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}}}
		if ops := Default(gr, plain); len(ops) != 0 {
			t.Errorf("%s: a Deployment policy was changed: %+v", resource, ops)
		}
	}
}
