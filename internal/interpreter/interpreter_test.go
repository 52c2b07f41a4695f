package interpreter

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func widget(replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec":     map[string]any{"replicas": replicas},
	}}
}

func customization(name string, rules configv1alpha1.CustomizationRules) configv1alpha1.ResourceInterpreterCustomization {
	return configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"}, Customizations: rules}}
}

func replicasTimes(n string) *configv1alpha1.ReplicaResourceRequirement {
	return &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(o) return o.spec.replicas * " + n + " end"}
}

// Two customizations of one kind and operation: the first by name wins, as in Karmada; an
// operation only the second defines comes from it.
func TestCustomizationsResolveByName(t *testing.T) {
	in := New(nil)
	in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{
		customization("b-second", configv1alpha1.CustomizationRules{ReplicaResource: replicasTimes("3"),
			HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o) return false end"}}),
		customization("a-first", configv1alpha1.CustomizationRules{ReplicaResource: replicasTimes("2")}),
	})
	n, _, ok, err := in.GetReplicas(context.Background(), widget(5))
	if err != nil || !ok || n != 10 {
		t.Errorf("GetReplicas = %d %v %v, want 10 from a-first", n, ok, err)
	}
	if h := in.InterpretHealth(context.Background(), widget(5)); h != "Unhealthy" {
		t.Errorf("health = %s, want Unhealthy from b-second", h)
	}
	// A kind nobody customizes gets the built-in answer.
	if _, _, ok, _ := in.GetReplicas(context.Background(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}); ok {
		t.Error("a ConfigMap has replicas")
	}
}

// Interprets counts customizations and the built-in rules of the kind, as Karmada's
// HookEnabled: a ConfigMap's health is not judged, a Deployment's is; components come from
// scripts only.
func TestInterpretsCountsCustomizationsAndBuiltInRules(t *testing.T) {
	in := New(nil)
	in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{customization("widget", configv1alpha1.CustomizationRules{
		ComponentResource: &configv1alpha1.ComponentResourceRequirement{LuaScript: "function GetComponents(o) return {} end"},
	})})
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		op   Op
		want bool
	}{
		{obj("apps/v1", "Deployment"), configv1alpha1.InterpreterOperationInterpretHealth, true},
		{obj("v1", "ConfigMap"), configv1alpha1.InterpreterOperationInterpretHealth, false},
		{obj("apps/v1", "Deployment"), configv1alpha1.InterpreterOperationInterpretDependency, true},
		{obj("multicluster.x-k8s.io/v1alpha1", "ServiceImport"), configv1alpha1.InterpreterOperationInterpretDependency, true},
		{obj("v1", "Secret"), configv1alpha1.InterpreterOperationInterpretDependency, false},
		{widget(1), configv1alpha1.InterpreterOperationInterpretComponent, true},
		{widget(1), configv1alpha1.InterpreterOperationInterpretHealth, false},
		{obj("apps/v1", "Deployment"), configv1alpha1.InterpreterOperationInterpretComponent, false},
	} {
		if got := in.Interprets(tc.obj, tc.op); got != tc.want {
			t.Errorf("Interprets(%s, %s) = %v, want %v", tc.obj.GetKind(), tc.op, got, tc.want)
		}
	}
}

// A failing script fails the operation with the customization's name, reports it, and health
// reads Unknown.
func TestFailuresNameTheCustomization(t *testing.T) {
	in := New(nil)
	var reported []string
	in.OnError = func(source string, op Op, _ *unstructured.Unstructured, err error) {
		reported = append(reported, source+" "+string(op))
	}
	in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{customization("broken", configv1alpha1.CustomizationRules{
		ReplicaResource:      &configv1alpha1.ReplicaResourceRequirement{LuaScript: "function GetReplicas(o) return o.spec.nothing.here end"},
		HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o) error('boom') end"},
	})})
	if _, _, _, err := in.GetReplicas(context.Background(), widget(1)); err == nil || !strings.Contains(err.Error(), "ResourceInterpreterCustomization broken") {
		t.Errorf("err = %v", err)
	}
	if h := in.InterpretHealth(context.Background(), widget(1)); h != "Unknown" {
		t.Errorf("health = %s", h)
	}
	if strings.Join(reported, ",") != "customization/broken InterpretReplica,customization/broken InterpretHealth" {
		t.Errorf("reported %v", reported)
	}
}

// A webhook is asked before the bundled rules and after customizations, over TLS with the
// configured CA, and its rules select the operations it answers.
func TestWebhookStep(t *testing.T) {
	var asked []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var c ResourceInterpreterContext
		_ = json.Unmarshal(body, &c)
		asked = append(asked, string(c.Request.Operation))
		resp := &ResourceInterpreterResponse{UID: c.Request.UID, Successful: true}
		switch c.Request.Operation {
		case configv1alpha1.InterpreterOperationInterpretReplica:
			n := int32(7)
			resp.Replicas = &n
		case configv1alpha1.InterpreterOperationAggregateStatus:
			resp.Patch = []byte(`[{"op":"add","path":"/status","value":{"clusters":` + string(rune('0'+len(c.Request.AggregatedStatus))) + `}}]`)
			pt := "JSONPatch"
			resp.PatchType = &pt
		}
		_ = json.NewEncoder(w).Encode(&ResourceInterpreterContext{TypeMeta: c.TypeMeta, Response: resp})
	}))
	defer srv.Close()
	url := srv.URL
	hooks, errs := NewHTTPWebhooks([]configv1alpha1.ResourceInterpreterWebhookConfiguration{{
		ObjectMeta: metav1.ObjectMeta{Name: "w"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{Name: "widgets", InterpreterContextVersions: []string{"v1alpha1"},
			ClientConfig: admissionClientConfig(url, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})),
			Rules: []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{"InterpretReplica", "AggregateStatus"},
				Rule: configv1alpha1.Rule{APIGroups: []string{"example.io"}, APIVersions: []string{"*"}, Kinds: []string{"Widget"}}}}}},
	}}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	in := New(nil)
	in.SetWebhooks(hooks)
	n, _, ok, err := in.GetReplicas(context.Background(), widget(1))
	if err != nil || !ok || n != 7 {
		t.Fatalf("GetReplicas = %d %v %v", n, ok, err)
	}
	out, err := in.AggregateStatus(context.Background(), widget(1), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a"}, {ClusterName: "b"}})
	if err != nil || out.Object["status"].(map[string]any)["clusters"] != int64(2) {
		t.Fatalf("AggregateStatus = %v %v", out, err)
	}
	// Health is not in the rules: the built-in answer (Healthy for unknown kinds).
	if h := in.InterpretHealth(context.Background(), widget(1)); h != "Healthy" {
		t.Errorf("health = %s", h)
	}
	// A customization comes first.
	in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{customization("c", configv1alpha1.CustomizationRules{ReplicaResource: replicasTimes("1")})})
	if n, _, _, _ := in.GetReplicas(context.Background(), widget(3)); n != 3 {
		t.Errorf("with a customization: %d", n)
	}
	if strings.Join(asked, ",") != "InterpretReplica,AggregateStatus" {
		t.Errorf("asked %v", asked)
	}
}

func admissionClientConfig(url string, ca []byte) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca}
}
