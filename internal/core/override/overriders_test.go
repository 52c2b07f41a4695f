package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

const (
	opAdd     = policyv1alpha1.OverriderOpAdd
	opRemove  = policyv1alpha1.OverriderOpRemove
	opReplace = policyv1alpha1.OverriderOpReplace
)

func TestPlaintext(t *testing.T) {
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\ndata:\n  example: \"1\"\n"
	tests := []struct {
		name    string
		ops     []policyv1alpha1.PlaintextOverrider
		want    string
		wantErr bool
	}{
		{name: "replace data, as in Karmada's example", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opReplace, "/data/example", `"2"`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\ndata:\n  example: \"2\"\n"},
		{name: "add a member", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/data/extra", `"x"`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\ndata:\n  example: \"1\"\n  extra: x\n"},
		{name: "add on an existing map replaces the whole map (JSON patch semantics)",
			ops:  []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/metadata/annotations", `{"zone":"dev"}`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    zone: dev\ndata:\n  example: \"1\"\n"},
		{name: "add one annotation through an escaped pointer",
			ops:  []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/metadata/annotations/example.io~1zone", `"dev"`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\n    example.io/zone: dev\ndata:\n  example: \"1\"\n"},
		{name: "remove ignores the value", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opRemove, "/data", `"ignored"`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\n"},
		{name: "numbers become int64 like the rest of the manifest", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/data/num", `{"i":3,"f":1.5}`)},
			want: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n  annotations:\n    a: b\n    c: d\ndata:\n  example: \"1\"\n  num: {i: 3, f: 1.5}\n"},
		{name: "replace of an absent field fails", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opReplace, "/data/missing", `"x"`)}, wantErr: true},
		{name: "add below an absent parent fails", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/spec/replicas", `1`)}, wantErr: true},
		{name: "an invalid value fails", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opAdd, "/data/x", `{`)}, wantErr: true},
		{name: "replacing the whole manifest with a scalar fails", ops: []policyv1alpha1.PlaintextOverrider{plaintext(opReplace, "", `1`)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, configMap)
			var err error
			for i := range tt.ops {
				if err = applyPlaintext(obj, &tt.ops[i]); err != nil {
					break
				}
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("applyPlaintext() error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(object(t, tt.want).Object, obj.Object); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandAndArgsOverriders(t *testing.T) {
	pod := func() *unstructured.Unstructured {
		return object(t, `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  initContainers:
  - {name: myapp, image: init, command: [./init]}
  containers:
  - {name: myapp, image: myapp, command: [./myapp, --parameter1=foo, --parameter2=bar]}
  - {name: sidecar, image: sidecar}
`)
	}
	containerField := func(obj *unstructured.Unstructured, list string, index int, field string) any {
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", list)
		return containers[index].(map[string]any)[field]
	}
	tests := []struct {
		name      string
		field     string
		o         policyv1alpha1.CommandArgsOverrider
		container int
		want      any
	}{
		{name: "add appends flags (Karmada's example)", field: "command", container: 0, want: []any{"./myapp", "--parameter1=foo", "--parameter2=bar", "--cluster=member1"},
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opAdd, Value: []string{"--cluster=member1"}}},
		{name: "remove deletes flags (Karmada's example)", field: "command", container: 0, want: []any{"./myapp", "--parameter2=bar"},
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opRemove, Value: []string{"--parameter1=foo"}}},
		{name: "remove of an absent flag changes nothing", field: "command", container: 0, want: []any{"./myapp", "--parameter1=foo", "--parameter2=bar"},
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opRemove, Value: []string{"--verbose"}}},
		{name: "add creates an absent list", field: "args", container: 1, want: []any{"-v"},
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "sidecar", Operator: opAdd, Value: []string{"-v"}}},
		{name: "remove leaves an absent list absent", field: "args", container: 1, want: nil,
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "sidecar", Operator: opRemove, Value: []string{"-v"}}},
		{name: "other containers are untouched", field: "command", container: 1, want: nil,
			o: policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opAdd, Value: []string{"--x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := pod()
			if _, err := applyCommandArgsOverrider(obj, tt.field, &tt.o); err != nil {
				t.Fatalf("applyCommandArgsOverrider() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, containerField(obj, "containers", tt.container, tt.field)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.field, diff)
			}
			if diff := cmp.Diff([]any{"./init"}, containerField(obj, "initContainers", 0, "command")); diff != "" {
				t.Errorf("init container command changed (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("replace is not an operator of command and args", func(t *testing.T) {
		o := policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opReplace, Value: []string{"x"}}
		if _, err := applyCommandArgsOverrider(pod(), "command", &o); err == nil {
			t.Errorf("applyCommandArgsOverrider() accepted replace")
		}
	})
	t.Run("a command that is not a list of strings names its path", func(t *testing.T) {
		obj := pod()
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "containers")
		containers[0].(map[string]any)["command"] = "./myapp"
		_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "containers")
		o := policyv1alpha1.CommandArgsOverrider{ContainerName: "myapp", Operator: opAdd, Value: []string{"x"}}
		if path, err := applyCommandArgsOverrider(obj, "command", &o); err == nil || path != "/spec/containers/0/command" {
			t.Errorf("applyCommandArgsOverrider() = %q, %v; want an error at /spec/containers/0/command", path, err)
		}
	})
}

func TestLabelsAndAnnotationsOverriders(t *testing.T) {
	tests := []struct {
		name    string
		current map[string]string
		o       policyv1alpha1.LabelAnnotationOverrider
		want    map[string]string
		wantErr bool
	}{
		{name: "add sets keys and overwrites existing values", current: map[string]string{"foo": "foo"},
			o: policyv1alpha1.LabelAnnotationOverrider{Operator: opAdd, Value: map[string]string{"bar": "bar", "foo": "new"}}, want: map[string]string{"foo": "new", "bar": "bar"}},
		{name: "add creates the map", o: policyv1alpha1.LabelAnnotationOverrider{Operator: opAdd, Value: map[string]string{"example.io/zone": "a:b"}},
			want: map[string]string{"example.io/zone": "a:b"}},
		{name: "replace changes present keys only", current: map[string]string{"foo": "foo", "baz": "baz"},
			o: policyv1alpha1.LabelAnnotationOverrider{Operator: opReplace, Value: map[string]string{"foo": "exist", "absent": "x"}}, want: map[string]string{"foo": "exist", "baz": "baz"}},
		{name: "remove deletes present keys whatever their value", current: map[string]string{"foo": "foo", "baz": "baz"},
			o: policyv1alpha1.LabelAnnotationOverrider{Operator: opRemove, Value: map[string]string{"baz": "other", "absent": "x"}}, want: map[string]string{"foo": "foo"}},
		{name: "replace and remove on an absent map leave it absent", o: policyv1alpha1.LabelAnnotationOverrider{Operator: opReplace, Value: map[string]string{"a": "b"}}},
		{name: "unknown operators fail", current: map[string]string{"a": "b"}, want: map[string]string{"a": "b"}, wantErr: true,
			o: policyv1alpha1.LabelAnnotationOverrider{Operator: "merge", Value: map[string]string{"a": "c"}}},
	}
	for _, tt := range tests {
		for _, kind := range []string{"labels", "annotations"} {
			t.Run(kind+": "+tt.name, func(t *testing.T) {
				obj := deployment(t, "web", nil, "nginx")
				get, set := obj.GetLabels, obj.SetLabels
				if kind == "annotations" {
					get, set = obj.GetAnnotations, obj.SetAnnotations
				}
				set(tt.current)
				err := applyStringMapOverrider(get, set, &tt.o)
				if (err != nil) != tt.wantErr {
					t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, get()); diff != "" {
					t.Errorf("%s (-want +got):\n%s", kind, diff)
				}
			})
		}
	}
}

// configFiles is a ConfigMap holding YAML, JSON and plain-text files.
const configFiles = `
apiVersion: v1
kind: ConfigMap
metadata: {name: example-config, namespace: default}
data:
  db-config.yaml: |
    database:
      host: localhost
      port: 3306
  settings.json: '{"feature":{"enabled":false},"hosts":["a"],"url":"http://x/?a=1&b=2"}'
  plain: "just text"
  workflow.yaml: |
    on:
      push: {}
    enabled: yes
`

func TestFieldOverrider(t *testing.T) {
	configMap := func() *unstructured.Unstructured { return object(t, configFiles) }
	tests := []struct {
		name     string
		f        policyv1alpha1.FieldOverrider
		key      string
		want     string
		wantPath string
		wantErr  bool
	}{
		{name: "YAML document, as in Karmada's proposal", key: "db-config.yaml", want: "database:\n  host: remote-db.example.com\n  port: \"3307\"\n",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/db-config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				{SubPath: "/database/host", Operator: opReplace, Value: rawJSON(`"remote-db.example.com"`)},
				{SubPath: "/database/port", Operator: opReplace, Value: rawJSON(`"3307"`)}}}},
		{name: "YAML add and remove", key: "db-config.yaml", want: "database:\n  host: localhost\n  user: app\n",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/db-config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				{SubPath: "/database/user", Operator: opAdd, Value: rawJSON(`"app"`)},
				{SubPath: "/database/port", Operator: opRemove}}}},
		{name: "YAML is read as YAML 1.2: on and yes stay strings", key: "workflow.yaml", want: "build: x\nenabled: \"yes\"\n\"on\":\n  push: {}\n",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/workflow.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				{SubPath: "/build", Operator: opAdd, Value: rawJSON(`"x"`)}}}},
		{name: "JSON document, written back compact and unescaped", key: "settings.json",
			want: `{"feature":{"enabled":true},"hosts":["a","b"],"url":"http://x/?a=1&b=2"}`,
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/settings.json", JSON: []policyv1alpha1.JSONPatchOperation{
				{SubPath: "/feature/enabled", Operator: opReplace, Value: rawJSON(`true`)},
				{SubPath: "/hosts/-", Operator: opAdd, Value: rawJSON(`"b"`)}}}},
		{name: "an empty subPath replaces the whole document", key: "settings.json", want: `{"fresh":1}`,
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/settings.json", JSON: []policyv1alpha1.JSONPatchOperation{
				{SubPath: "", Operator: opReplace, Value: rawJSON(`{"fresh":1}`)}}}},
		{name: "a field that does not hold JSON fails", wantErr: true, wantPath: "/data/plain",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/plain", JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: opRemove}}}},
		{name: "an absent field fails", wantErr: true, wantPath: "/data/absent.yaml",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/absent.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: opRemove}}}},
		{name: "a field that is not a string fails", wantErr: true, wantPath: "/metadata",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/metadata", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: opRemove}}}},
		{name: "a subPath that does not resolve fails", wantErr: true, wantPath: "/data/db-config.yaml",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/db-config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				{SubPath: "/cache/size", Operator: opReplace, Value: rawJSON(`1`)}}}},
		{name: "json and yaml together fail", wantErr: true, wantPath: "/data/settings.json",
			f: policyv1alpha1.FieldOverrider{FieldPath: "/data/settings.json",
				JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: opRemove}},
				YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: opRemove}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := configMap()
			path, err := applyFieldOverrider(obj, &tt.f)
			if (err != nil) != tt.wantErr {
				t.Fatalf("applyFieldOverrider() error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if path != tt.wantPath {
					t.Errorf("error path = %q, want %q", path, tt.wantPath)
				}
				if !cmp.Equal(configMap().Object, obj.Object) {
					t.Errorf("a failed field overrider changed the manifest")
				}
				return
			}
			got, _, _ := unstructured.NestedString(obj.Object, "data", tt.key)
			if got != tt.want {
				t.Errorf("data[%q] = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}
