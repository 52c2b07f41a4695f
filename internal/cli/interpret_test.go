package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

func TestInterpret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: widget}
spec:
  target: {apiVersion: example.io/v1, kind: Widget}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj) return obj.spec.replicas end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, n) obj.spec.replicas = n return obj end
`)
	bad := write("bad.yaml", strings.Replace(string(mustRead(t, good)), "return obj.spec.replicas end", "return obj.spec.replicas +", 1))
	obj := write("obj.yaml", "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 3}\n")
	other := write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	run := func(o interpretOptions, replicaSet bool) (string, error) {
		var out bytes.Buffer
		err := interpret(context.Background(), &out, o, replicaSet)
		return out.String(), err
	}
	if out, err := run(interpretOptions{file: good, check: true}, false); err != nil || !strings.Contains(out, "is valid") {
		t.Errorf("check good: %q %v", out, err)
	}
	if out, err := run(interpretOptions{file: bad, check: true}, false); err == nil || !strings.Contains(out, "replicaResource.luaScript") || !strings.Contains(out, "line 1") {
		t.Errorf("check bad: %q %v", out, err)
	}
	if out, err := run(interpretOptions{file: good, operation: "interpretReplica", desiredFile: obj}, false); err != nil || !strings.Contains(out, "replica: 3") {
		t.Errorf("interpretReplica: %q %v", out, err)
	}
	if out, err := run(interpretOptions{file: good, operation: "ReviseReplica", desiredFile: obj, desiredReplica: 5}, true); err != nil || !strings.Contains(out, "replicas: 5") {
		t.Errorf("reviseReplica: %q %v", out, err)
	}
	if _, err := run(interpretOptions{file: good, operation: "reviseReplica", desiredFile: obj}, false); err == nil || !strings.Contains(err.Error(), "--desired-replica") {
		t.Errorf("reviseReplica without replicas: %v", err)
	}
	if _, err := run(interpretOptions{file: good, operation: "interpretReplica", desiredFile: other}, false); err == nil || !strings.Contains(err.Error(), "targets example.io/v1 Widget") {
		t.Errorf("another kind: %v", err)
	}
	if _, err := run(interpretOptions{file: good, operation: "guess"}, false); err == nil || !strings.Contains(err.Error(), "unknown --operation") {
		t.Errorf("unknown operation: %v", err)
	}
	// The repository's own cases for a bundled kind.
	out, err := run(interpretOptions{test: "../interpreter/thirdparty/customizations/apps.kruise.io/v1alpha1/CloneSet"}, false)
	if err != nil || !strings.Contains(out, "0 failed") {
		t.Errorf("--test: %v\n%s", err, out)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInterpretTheWidgetExample runs docs/user-guide/resource-interpreter.md's `flotilla interpret` commands
// on examples/widget and checks the outputs that page shows.
func TestInterpretTheWidgetExample(t *testing.T) {
	dir := filepath.Join(reftest.ModuleRoot(t), "examples", "widget")
	customization, widget := filepath.Join(dir, "customization.yaml"), filepath.Join(dir, "w1.yaml")
	run := func(o interpretOptions, replicaSet bool) string {
		t.Helper()
		var out bytes.Buffer
		if err := interpret(context.Background(), &out, o, replicaSet); err != nil {
			t.Fatalf("%+v: %v\n%s", o, err, out.String())
		}
		return out.String()
	}
	for _, c := range []struct {
		out  string
		want []string
	}{
		{run(interpretOptions{file: customization, check: true}, false), []string{"ResourceInterpreterCustomization widget is valid"}},
		{run(interpretOptions{file: customization, operation: "interpretReplica", desiredFile: widget}, false), []string{"replica: 6", "namespace: shop", "cpu: 100m"}},
		{run(interpretOptions{file: customization, operation: "reviseReplica", desiredFile: widget, desiredReplica: 2}, true), []string{"replicas: 2"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.out, w) {
				t.Errorf("output lacks %q:\n%s", w, c.out)
			}
		}
	}
}
