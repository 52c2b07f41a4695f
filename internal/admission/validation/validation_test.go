package validation

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/admission/webhook"
)

var cronGR = schema.GroupResource{Group: "autoscaling.karmada.io", Resource: "cronfederatedhpas"}
var cronGK = schema.GroupKind{Group: "autoscaling.karmada.io", Kind: "CronFederatedHPA"}

func cronObject(t *testing.T, schedule, zone string) map[string]any {
	t.Helper()
	doc := `
apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: web, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  rules:
  - name: ok
    schedule: "0 9 * * *"
    targetReplicas: 3
  - name: checked
    schedule: "` + schedule + `"
    timeZone: "` + zone + `"
    targetReplicas: 3
`
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestValidateNamesTheRuleAndField(t *testing.T) {
	for _, tc := range []struct {
		schedule, zone, want string
	}{
		{"*/1 * * * *", "Asia/Shanghai", ""},
		{"@hourly", "UTC", ""},
		{"61 * * * *", "UTC", "spec.rules[1].schedule"},
		{"every minute", "UTC", "spec.rules[1].schedule"},
		{"0 9 * * *", "Mars/Olympus", "spec.rules[1].timeZone"},
	} {
		err := Validate(cronGR, cronGK, "web", cronObject(t, tc.schedule, tc.zone))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q %q: refused: %v", tc.schedule, tc.zone, err)
			}
			continue
		}
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `CronFederatedHPA.autoscaling.karmada.io "web"`) {
			t.Errorf("%q %q: want an Invalid error naming %s, got %v", tc.schedule, tc.zone, tc.want, err)
		}
	}
}

func TestValidateIgnoresOtherResources(t *testing.T) {
	if err := Validate(schema.GroupResource{Group: "apps", Resource: "deployments"}, schema.GroupKind{Group: "apps", Kind: "Deployment"}, "x", map[string]any{"spec": "anything"}); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookAnswersWithTheSameVerdict(t *testing.T) {
	srv := httptest.NewServer(webhook.Handler(New()))
	defer srv.Close()
	review := func(obj map[string]any) *admissionv1.AdmissionResponse {
		raw, _ := json.Marshal(obj)
		in := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID:      "1",
				Kind:     metav1.GroupVersionKind{Group: cronGK.Group, Version: "v1alpha1", Kind: cronGK.Kind},
				Resource: metav1.GroupVersionResource{Group: cronGR.Group, Version: "v1alpha1", Resource: cronGR.Resource},
				Name:     "web", Namespace: "default", Operation: admissionv1.Create,
				Object: runtime.RawExtension{Raw: raw},
			},
		}
		return postReview(t, srv.URL, in)
	}
	if r := review(cronObject(t, "0 9 * * *", "UTC")); !r.Allowed {
		t.Errorf("valid object refused: %+v", r.Result)
	}
	r := review(cronObject(t, "0 25 * * *", "UTC"))
	if r.Allowed || r.Result == nil || r.Result.Code != http.StatusUnprocessableEntity || !strings.Contains(r.Result.Message, "spec.rules[1].schedule") {
		t.Errorf("bad schedule: want a 422 naming spec.rules[1].schedule, got allowed=%t %+v", r.Allowed, r.Result)
	}
	res, err := http.Post(srv.URL, "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage body: status %d, want 400", res.StatusCode)
	}
}

func TestValidateInterpreterScripts(t *testing.T) {
	gr := schema.GroupResource{Group: "config.karmada.io", Resource: "resourceinterpretercustomizations"}
	gk := schema.GroupKind{Group: "config.karmada.io", Kind: "ResourceInterpreterCustomization"}
	ric := func(script string) map[string]any {
		return map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
			"metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"target": map[string]any{"apiVersion": "example.io/v1", "kind": "Widget"},
				"customizations": map[string]any{"replicaResource": map[string]any{"luaScript": script}}}}
	}
	if err := Validate(gr, gk, "w", ric("function GetReplicas(o) return o.spec.replicas end")); err != nil {
		t.Errorf("a good script is refused: %v", err)
	}
	for script, want := range map[string]string{
		"function GetReplicas(o)\n  return o.spec.replicas +\nend": `spec.customizations.replicaResource.luaScript: Invalid value: "end": line 3`,
		"function GetReplicas(o)\n  return count(o)\nend":          "line 2: call to undefined function count",
		"function Replicas(o) return 1 end":                        "does not define the global function GetReplicas",
	} {
		err := Validate(gr, gk, "w", ric(script))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", script, err, want)
		}
	}
}

// TestValidateClusterFieldSelectors refuses, as Karmada's webhook does, a
// fieldSelector key other than provider, region or zone and an operator
// other than In or NotIn, wherever a policy selects clusters.
func TestValidateClusterFieldSelectors(t *testing.T) {
	policy := func(kind, placement string) map[string]any {
		t.Helper()
		var obj map[string]any
		doc := "apiVersion: policy.karmada.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: p, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]\n" + placement
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	pp := schema.GroupResource{Group: "policy.karmada.io", Resource: "propagationpolicies"}
	cpp := schema.GroupResource{Group: "policy.karmada.io", Resource: "clusterpropagationpolicies"}
	op := schema.GroupResource{Group: "policy.karmada.io", Resource: "overridepolicies"}
	for _, tc := range []struct {
		name string
		gr   schema.GroupResource
		kind string
		spec string
		want []string
	}{
		{"good keys and operators", pp, "PropagationPolicy", `  placement:
    clusterAffinity:
      fieldSelector:
        matchExpressions: [{key: provider, operator: In, values: [aws]}, {key: region, operator: NotIn, values: [x]}, {key: zone, operator: In, values: [z]}]
`, nil},
		{"an unknown key", pp, "PropagationPolicy", `  placement:
    clusterAffinity:
      fieldSelector:
        matchExpressions: [{key: region, operator: In, values: [x]}, {key: color, operator: In, values: [x]}]
`, []string{"spec.placement.clusterAffinity.fieldSelector.matchExpressions[1].key", `unsupported key "color", must be provider, region, or zone`}},
		{"Exists in a ClusterPropagationPolicy's affinity term", cpp, "ClusterPropagationPolicy", `  placement:
    clusterAffinities:
    - affinityName: a
      fieldSelector:
        matchExpressions: [{key: zone, operator: Exists}]
`, []string{"spec.placement.clusterAffinities[0].fieldSelector.matchExpressions[0].operator", `unsupported operator "Exists", must be In or NotIn`}},
		{"a static weight's target cluster", pp, "PropagationPolicy", `  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {fieldSelector: {matchExpressions: [{key: name, operator: In, values: [member1]}]}}
          weight: 1
`, []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.fieldSelector.matchExpressions[0].key"}},
		{"an override rule's target cluster", op, "OverridePolicy", `  overrideRules:
  - targetCluster:
      fieldSelector:
        matchExpressions: [{key: color, operator: In, values: [x]}]
    overriders:
      plaintext: [{path: /spec/replicas, operator: replace, value: 2}]
`, []string{"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].key", `unsupported key "color"`}},
	} {
		err := Validate(tc.gr, schema.GroupKind{Group: "policy.karmada.io", Kind: tc.kind}, "p", policy(tc.kind, tc.spec))
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: want an Invalid error, got %v", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

func TestDeletionProtection(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	labelled := func(value string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName("web")
		if value != "" {
			u.SetLabels(map[string]string{"resourcetemplate.karmada.io/deletion-protected": value})
		}
		return u
	}
	err := ProtectedFromDeletion(gr, "web", labelled("Always"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected") ||
		!strings.Contains(err.Error(), "kubectl label deployments.apps -n shop web resourcetemplate.karmada.io/deletion-protected-") {
		t.Errorf("a protected Deployment: %v, want Forbidden naming the label and the command", err)
	}
	for _, v := range []string{"", "always", "Never"} {
		if err := ProtectedFromDeletion(gr, "web", labelled(v)); err != nil {
			t.Errorf("label value %q protects nothing, got %v", v, err)
		}
	}
	if err := ProtectedFromDeletion(gr, "web", nil); err != nil {
		t.Errorf("no object: %v", err)
	}

	// The same verdict through the plugin (a typed object) and the webhook.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "shop",
		Labels: map[string]string{"resourcetemplate.karmada.io/deletion-protected": "Always"}}}
	attrs := admission.NewAttributesRecord(nil, cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "shop", "cfg",
		corev1.SchemeGroupVersion.WithResource("configmaps"), "", admission.Delete, nil, false, nil)
	if err := New().Validate(context.Background(), attrs, nil); !apierrors.IsForbidden(err) {
		t.Errorf("the plugin let a protected ConfigMap's delete through: %v", err)
	}
	srv := httptest.NewServer(webhook.Handler(New()))
	defer srv.Close()
	raw, _ := json.Marshal(labelled("Always").Object)
	resp := postReview(t, srv.URL, admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Delete, Name: "web", Namespace: "shop",
			Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			OldObject: runtime.RawExtension{Raw: raw}},
	})
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusForbidden {
		t.Errorf("the webhook's answer to a protected delete: %+v", resp)
	}
}

// postReview sends review (whose request has UID 1) to the webhook at url
// and returns its response.
func postReview(t *testing.T, url string, review admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	body, _ := json.Marshal(review)
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.UID != "1" {
		t.Fatalf("response %+v does not answer request 1", out.Response)
	}
	return out.Response
}

// TestAdmitNamesEveryErrorInOneAnswer: an OverridePolicy with a mistake
// its CRD's CEL rules catch (a plaintext path that is not a JSON pointer)
// and one only the plugin sees (a tag that is not a tag) is refused once,
// naming both, before the API server's own validation would have named
// the first alone.
func TestAdmitNamesEveryErrorInOneAnswer(t *testing.T) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: op, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders:
      plaintext: [{path: spec/replicas, operator: replace, value: 2}]
      imageOverrider: [{component: Tag, operator: replace, value: "bad tag!"}]
`), &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	gvr := schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "overridepolicies"}
	a := admission.NewAttributesRecord(u, nil, u.GroupVersionKind(), "shop", "op", gvr, "", admission.Create, &metav1.CreateOptions{}, false, nil)
	err := New().Admit(context.Background(), a, nil)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("Admit: %v, want an Invalid error", err)
	}
	for _, want := range []string{"plaintext[*].path must be a JSON pointer", "bad tag!"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	// A valid object passes untouched; one with CEL errors only is left to
	// the API server's own validation.
	unstructured.RemoveNestedField(obj, "spec", "overrideRules")
	if err := New().Admit(context.Background(), a, nil); err != nil {
		t.Errorf("a valid object: %v", err)
	}
}
