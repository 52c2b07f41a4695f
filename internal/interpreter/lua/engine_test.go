package lua

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

func TestEmptyObjectsSurviveTheRoundTrip(t *testing.T) {
	e := New(Options{})
	in := obj(map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"affinity": map[string]any{}, "containers": []any{}}},
		},
	})
	out, err := e.ReviseReplica(context.Background(), "function ReviseReplica(obj, r) obj.spec.replicas = r return obj end", in, 5)
	if err != nil {
		t.Fatal(err)
	}
	spec := out.Object["spec"].(map[string]any)
	if spec["replicas"] != int64(5) {
		t.Errorf("replicas = %#v", spec["replicas"])
	}
	tmpl := spec["template"].(map[string]any)["spec"].(map[string]any)
	if a, ok := tmpl["affinity"].(map[string]any); !ok || len(a) != 0 {
		t.Errorf("affinity = %#v, want an empty object", tmpl["affinity"])
	}
	if c, ok := tmpl["containers"].([]any); !ok || len(c) != 0 {
		t.Errorf("containers = %#v, want an empty array", tmpl["containers"])
	}
}

func TestBudgetStopsRunawayScripts(t *testing.T) {
	e := New(Options{Timeout: 200 * time.Millisecond, MemoryBudget: 64 << 20})
	for name, script := range map[string]string{
		"loop":   "function InterpretHealth(o) while true do end end",
		"memory": "function InterpretHealth(o) local t = {} local s = 'x' for i = 1, 1e9 do t[i] = s .. i end end",
		"concat": "function InterpretHealth(o) local s = 'xxxxxxxx' while true do s = s .. s end end",
		"rep":    "function InterpretHealth(o) return string.rep('x', 1e10) end",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := e.InterpretHealth(context.Background(), script, obj(map[string]any{"kind": "X"}))
			if err == nil {
				t.Fatal("no error")
			}
			if name != "rep" && !errors.Is(err, ErrBudget) {
				t.Errorf("error %v does not wrap ErrBudget", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	// The engine still works afterwards.
	ok, err := e.InterpretHealth(context.Background(), "function InterpretHealth(o) return o.kind == 'X' end", obj(map[string]any{"kind": "X"}))
	if err != nil || !ok {
		t.Fatalf("after the budget failures: %v %v", ok, err)
	}
}

func TestScriptsDoNotShareGlobals(t *testing.T) {
	e := New(Options{PoolSize: 1})
	a := "n = 0 function helper() return 'a' end function InterpretHealth(o) n = n + 1 error = nil return helper() == 'a' and n == 1 end"
	b := "function helper() return 'b' end function InterpretHealth(o) return helper() == 'b' and error ~= nil end"
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := a
			if i%2 == 1 {
				script = b
			}
			ok, err := e.InterpretHealth(context.Background(), script, obj(map[string]any{}))
			if err != nil || !ok {
				t.Errorf("call %d: %v %v", i, ok, err)
			}
		}()
	}
	wg.Wait()
}

func TestCheckNamesTheLine(t *testing.T) {
	for script, want := range map[string]string{
		"function GetReplicas(obj)\n  return obj.spec.replicas,\nend":                                                          "line 3",
		"function GetReplicas(obj)\n  local r = helper(obj)\n  return r\nend":                                                  "line 2: call to undefined function helper",
		"function Other(obj) return 1 end":                                                                                     "does not define the global function GetReplicas",
		"local kube = require('kube')\nfunction GetReplicas(o)\n return 1, kube.accuratePodRequirements(o.spec.template)\nend": "",
	} {
		err := Check(script, "GetReplicas")
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", script, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want %q", script, err, want)
		}
	}
}

func TestRuntimeErrorsNameTheLine(t *testing.T) {
	e := New(Options{})
	_, err := e.InterpretHealth(context.Background(), "function InterpretHealth(o)\n  return o.status.ready\nend", obj(map[string]any{}))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestKubeLibrary(t *testing.T) {
	e := New(Options{})
	tmpl := map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]any{"disk": "ssd"},
		"containers": []any{map[string]any{"name": "c", "resources": map[string]any{"requests": map[string]any{"cpu": "500m"}},
			"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": "cfg"}}}}},
	}}
	replicas, req, err := e.GetReplicas(context.Background(), `
local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end`, obj(map[string]any{"metadata": map[string]any{"namespace": "ns"}, "spec": map[string]any{"replicas": int64(4), "template": tmpl}}))
	if err != nil {
		t.Fatal(err)
	}
	if replicas != 4 || req == nil || req.ResourceRequest.Cpu().MilliValue() != 500 || req.NodeClaim.NodeSelector["disk"] != "ssd" || req.Namespace != "ns" {
		t.Errorf("got %d %+v", replicas, req)
	}
	deps, err := e.GetDependencies(context.Background(), `
local kube = require("kube")
function GetDependencies(obj)
  return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace)
end`, obj(map[string]any{"metadata": map[string]any{"namespace": "ns"}, "spec": map[string]any{"template": tmpl}}))
	if err != nil || len(deps) != 1 || deps[0].Kind != "ConfigMap" || deps[0].Name != "cfg" || deps[0].Namespace != "ns" {
		t.Errorf("deps = %+v, %v", deps, err)
	}
	healthy, err := e.InterpretHealth(context.Background(), `
local kube = require("kube")
function InterpretHealth(obj)
  return kube.getResourceQuantity("1500m") == 1.5 and kube.resourceAdd("500m", "1500m") == "2"
end`, obj(map[string]any{}))
	if err != nil || !healthy {
		t.Errorf("quantities: %v %v", healthy, err)
	}
}
