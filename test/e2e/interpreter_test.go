package e2e

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// crdYAML is a namespaced custom kind KIND (plural PLURAL) of example.io/v1 with
// spec.replicas, a pod template and a status subresource.
func crdYAML(kind, plural string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.example.io}
spec:
  group: example.io
  names: {kind: %[1]s, plural: %[2]s, singular: %[3]s, listKind: %[1]sList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`, kind, plural, strings.ToLower(kind))
}

func customObject(kind, ns, name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: example.io/v1
kind: %s
metadata: {name: %s, namespace: %s}
spec:
  replicas: %d
  template:
    spec:
      containers:
      - name: app
        image: nginx
        resources: {requests: {cpu: 100m}}
`, kind, name, ns, replicas)
}

func dividedPolicy(ns, kind, name string) string {
	return staticWeightPolicy(ns, strings.ToLower(kind)+"-"+name, "example.io/v1", kind, name, 2, 1)
}

// widgetCustomization interprets Widgets: replicas (times factor), revision, status
// reflection, health (phase Ready) and aggregation (the sum of readyReplicas).
func widgetCustomization(factor int) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: widget}
spec:
  target: {apiVersion: example.io/v1, kind: Widget}
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          return obj.spec.replicas * %d, kube.accuratePodRequirements(obj.spec.template)
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desired)
          obj.spec.replicas = desired
          return obj
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(obj)
          if obj.status == nil then return nil end
          return {readyReplicas = obj.status.readyReplicas, phase = obj.status.phase}
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status ~= nil and obj.status.phase == "Ready"
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desired, items)
          local ready = 0
          for i = 1, #items do
            local st = items[i].status
            if st ~= nil and st.readyReplicas ~= nil then
              ready = ready + st.readyReplicas
            end
          end
          desired.status = desired.status or {}
          desired.status.readyReplicas = ready
          desired.status.clusters = #items
          desired.status.factor = %d
          return desired
        end
`, factor, factor)
}

// TestCustomKindThroughTheInterpreter propagates a custom kind whose replicas, health and
// status come from a ResourceInterpreterCustomization (Lua), then another through an
// interpreter webhook, and checks that bad scripts are refused at apply and a runaway one
// fails within its budget without holding up other templates.
func TestCustomKindThroughTheInterpreter(t *testing.T) {
	s := sharedStackOf(t, 2)
	for _, m := range []string{"", "member1", "member2"} {
		s.applyIn(m, crdYAML("Widget", "widgets")+"---\n"+crdYAML("Gadget", "gadgets"))
	}
	s.kubectl("", "create", "namespace", "shop")
	for _, m := range []string{"", "member1", "member2"} {
		eventually(t, time.Minute, "the CRDs to be served in "+m, func() (bool, string) {
			out := s.get(m, "widgets,gadgets", "-n", "shop")
			return !strings.Contains(out, "error"), out
		})
	}
	memberReplicas := func(kind, name string) string {
		return s.get("member1", kind, name, "-n", "shop", "-o", "jsonpath={.spec.replicas}") + "/" + s.get("member2", kind, name, "-n", "shop", "-o", "jsonpath={.spec.replicas}")
	}
	setStatus := func(member, kind, name, status string) {
		t.Helper()
		s.kubectl(member, "patch", kind, name, "-n", "shop", "--subresource=status", "--type=merge", "-p", `{"status":`+status+`}`)
	}

	t.Run("Lua customization", func(t *testing.T) {
		s.mustApply(t, "", widgetCustomization(1))
		s.mustApply(t, "", customObject("Widget", "shop", "w1", 6)+"---\n"+dividedPolicy("shop", "Widget", "w1"))
		s.waitFor(t, "6 member1=4 member2=2", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.spec.replicas} {range .spec.clusters[*]}{.name}={.replicas} {end}`)
		eventually(t, 2*time.Minute, "the members to run 4 and 2", func() (bool, string) {
			got := memberReplicas("widget", "w1")
			return got == "4/2", got
		})
		if req := s.get("", "rb", "w1-widget", "-n", "shop", "-o", "jsonpath={.spec.replicaRequirements.resourceRequest.cpu}"); req != "100m" {
			t.Errorf("replicaRequirements cpu = %q, want 100m (kube.accuratePodRequirements)", req)
		}
		// Applied, but not healthy: the members report no phase yet.
		s.waitFor(t, "True", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.status.conditions[?(@.type=="FullyApplied")].status}`)
		s.waitFor(t, "Unhealthy Unhealthy", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.status.aggregatedStatus[*].health}`)

		setStatus("member1", "widget", "w1", `{"phase":"Ready","readyReplicas":4}`)
		setStatus("member2", "widget", "w1", `{"phase":"Ready","readyReplicas":2}`)
		s.waitFor(t, "Healthy Healthy", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.status.aggregatedStatus[*].health}`)
		s.waitFor(t, "6 2", "", "widget", "w1", "-n", "shop", "-o", `jsonpath={.status.readyReplicas} {.status.clusters}`)

		// An edited customization takes effect without a restart.
		s.mustApply(t, "", widgetCustomization(2))
		s.waitFor(t, "12 member1=8 member2=4", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.spec.replicas} {range .spec.clusters[*]}{.name}={.replicas} {end}`)
		eventually(t, 2*time.Minute, "the members to run 8 and 4", func() (bool, string) {
			got := memberReplicas("widget", "w1")
			return got == "8/4", got
		})
		// ... and the template's status is aggregated again by the new script.
		s.waitFor(t, "2", "", "widget", "w1", "-n", "shop", "-o", "jsonpath={.status.factor}")
	})

	t.Run("interpreter webhook", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(gadgetWebhook))
		defer srv.Close()
		ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		s.mustApply(t, "", fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata: {name: gadgets}
webhooks:
- name: gadgets.example.io
  clientConfig:
    url: %s/interpret
    caBundle: %s
  rules:
  - operations: [InterpretReplica, ReviseReplica, InterpretHealth]
    apiGroups: [example.io]
    apiVersions: [v1]
    kinds: [Gadget]
  interpreterContextVersions: [v1alpha1]
  timeoutSeconds: 5
`, srv.URL, base64.StdEncoding.EncodeToString(ca)))
		s.mustApply(t, "", customObject("Gadget", "shop", "g1", 6)+"---\n"+dividedPolicy("shop", "Gadget", "g1"))
		s.waitFor(t, "6 member1=4 member2=2", "", "rb", "g1-gadget", "-n", "shop", "-o", `jsonpath={.spec.replicas} {range .spec.clusters[*]}{.name}={.replicas} {end}`)
		eventually(t, 2*time.Minute, "the members to run 4 and 2", func() (bool, string) {
			got := memberReplicas("gadget", "g1")
			return got == "4/2", got
		})
		s.waitFor(t, "Unhealthy Unhealthy", "", "rb", "g1-gadget", "-n", "shop", "-o", `jsonpath={.status.aggregatedStatus[*].health}`)
		setStatus("member1", "gadget", "g1", `{"ready":true}`)
		setStatus("member2", "gadget", "g1", `{"ready":true}`)
		s.waitFor(t, "Healthy Healthy", "", "rb", "g1-gadget", "-n", "shop", "-o", `jsonpath={.status.aggregatedStatus[*].health}`)
	})

	t.Run("bad scripts are refused at apply", func(t *testing.T) {
		bad := func(script string) string {
			return `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: bad}
spec:
  target: {apiVersion: example.io/v1, kind: Gizmo}
  customizations:
    healthInterpretation:
      luaScript: |
` + indent(script, "        ")
		}
		for script, want := range map[string]string{
			"function InterpretHealth(obj)\n  return obj.status.phase ==\nend": `spec.customizations.healthInterpretation.luaScript: Invalid value: "end": line 3: near 'end': syntax error`,
			"function InterpretHealth(obj)\n  return isReady(obj)\nend":        `Invalid value: "return isReady(obj)": line 2: call to undefined function isReady`,
		} {
			out, err := s.apply(bad(script))
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("applying %q: err %v, output %q; want it refused with %q", script, err, out, want)
			}
		}
		if got := s.get("", "resourceinterpretercustomizations", "bad", "-o", "name"); got != "" {
			t.Errorf("the refused customization exists: %q", got)
		}
	})

	t.Run("a runaway script fails within its budget", func(t *testing.T) {
		s.mustApply(t, "", strings.Replace(widgetCustomization(1), `return obj.status ~= nil and obj.status.phase == "Ready"`, `while true do end`, 1))
		// Health is asked again when a member's status changes.
		start := time.Now()
		setStatus("member1", "widget", "w1", `{"phase":"Ready","readyReplicas":3}`)
		eventually(t, time.Minute, "an InterpreterFailed event on the customization", func() (bool, string) {
			out := s.get("", "events", "-A", "--field-selector", "reason=InterpreterFailed", "-o", "jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name}: {.message}{\"\\n\"}{end}")
			return strings.Contains(out, "ResourceInterpreterCustomization/widget") && strings.Contains(out, "budget"), out
		})
		t.Logf("event after %s", time.Since(start).Round(time.Second))
		s.waitFor(t, "Unknown", "", "rb", "w1-widget", "-n", "shop", "-o", `jsonpath={.status.aggregatedStatus[?(@.clusterName=="member1")].health}`)
		// Other templates keep propagating.
		s.mustApply(t, "", deploymentYAML("shop", "web", 2, "nginx")+"---\n"+policyTo("shop", "web", "Deployment", "web", "member1"))
		s.waitFor(t, "2", "member1", "deployment", "web", "-n", "shop", "-o", "jsonpath={.spec.replicas}")
	})
}

// gadgetWebhook interprets Gadgets over Karmada's ResourceInterpreterContext: replicas from
// spec.replicas, revision as a JSON patch, health from status.ready.
func gadgetWebhook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Request    struct {
			UID       string          `json:"uid"`
			Operation string          `json:"operation"`
			Object    json.RawMessage `json:"object"`
			Replicas  *int32          `json:"replicas"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var obj struct {
		Spec struct {
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
		Status struct {
			Ready bool `json:"ready"`
		} `json:"status"`
	}
	_ = json.Unmarshal(in.Request.Object, &obj)
	resp := map[string]any{"uid": in.Request.UID, "successful": true}
	switch in.Request.Operation {
	case "InterpretReplica":
		resp["replicas"] = obj.Spec.Replicas
	case "ReviseReplica":
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/replicas", "value": *in.Request.Replicas}})
		resp["patch"] = patch
		resp["patchType"] = "JSONPatch"
	case "InterpretHealth":
		resp["healthy"] = obj.Status.Ready
	default:
		resp = map[string]any{"uid": in.Request.UID, "successful": false, "status": map[string]any{"message": "unexpected operation " + in.Request.Operation, "code": 400}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": in.APIVersion, "kind": in.Kind, "response": resp})
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}
