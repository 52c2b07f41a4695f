package validationadmission

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/admissionwebhook"
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
	srv := httptest.NewServer(admissionwebhook.Handler(New()))
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
		body, _ := json.Marshal(in)
		res, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
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
