package override

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// fuzzOperators maps a fuzzed byte to an operator; the fourth value (and any byte past it)
// means "no operation", so that a fuzzed input can hold one or two operations.
var fuzzOperators = []policyv1alpha1.OverriderOperator{opAdd, opRemove, opReplace}

func fuzzOperator(b uint8) (policyv1alpha1.OverriderOperator, bool) {
	if int(b)%4 == 3 {
		return "", false
	}
	return fuzzOperators[int(b)%4], true
}

// FuzzJSONPatch applies up to two add/remove/replace operations to a JSON document with this
// package's patch machinery and with github.com/evanphx/json-patch/v5 (what Karmada uses), with
// its default options. Neither may panic, and when both accept the input and it avoids the
// differences documented in jsonpatch.go, both must give the same JSON value.
func FuzzJSONPatch(f *testing.F) {
	doc := `{"a/b":{"m~n":1},"list":[1,2,3],"obj":{"k":"v","":{"x":true}},"n":null,"s":"text"}`
	for _, seed := range []struct {
		doc           string
		op1           uint8
		path1, value1 string
		op2           uint8
		path2, value2 string
	}{
		{doc, 0, "/obj/new", `{"x":[1,2]}`, 3, "", ""},
		{doc, 0, "/list/1", `9`, 1, "/list/0", ""},
		{doc, 0, "/list/-", `"end"`, 2, "/list/3", `4.5`},
		{doc, 0, "/list/3", `9`, 3, "", ""},
		{doc, 1, "/a~1b/m~0n", "", 0, "/a~1b/p", `[]`},
		{doc, 2, "/obj/k", `"w"`, 2, "/obj/missing", `1`},
		{doc, 2, "", `[1,2]`, 0, "/0", `0`},
		{doc, 0, "/obj/", `"empty key"`, 1, "/obj//x", ""},
		{doc, 2, "/list/01", `1`, 3, "", ""},
		{doc, 2, "/list/-1", `1`, 3, "", ""},
		{doc, 1, "/s/x", "", 3, "", ""},
		{doc, 0, "/n/x", `1`, 3, "", ""},
		{`[]`, 0, "/0", `{"a":1}`, 0, "/0/b", `2`},
		{`[[1],[2,[3]]]`, 1, "/1/1/0", "", 2, "/0/0", `12345678901234567890`},
		{`{"big":1e400}`, 2, "/big", `1`, 3, "", ""},
		{`{"a":{"b":{"c":{}}}}`, 0, "/a/b/c/d", `"<&>"`, 1, "/a/b", ""},
		{`1`, 2, "", `{"a":1}`, 3, "", ""},
		{`{"a":1}`, 1, "", "", 3, "", ""},
		{`{"a":[]}`, 0, "/a/1", `1`, 3, "", ""},
		{`{"a":[1]}`, 1, "/a/-", "", 3, "", ""},
		{`{"é":{"\u0000":1}}`, 2, "/é/\u0000", `"\u2028"`, 3, "", ""},
	} {
		f.Add([]byte(seed.doc), seed.op1, seed.path1, []byte(seed.value1), seed.op2, seed.path2, []byte(seed.value2))
	}
	f.Fuzz(func(t *testing.T, doc []byte, op1 uint8, path1 string, value1 []byte, op2 uint8, path2 string, value2 []byte) {
		var ops []patchOp
		if op, ok := fuzzOperator(op1); ok {
			ops = append(ops, patchOp{op, path1, value1})
		}
		if op, ok := fuzzOperator(op2); ok {
			ops = append(ops, patchOp{op, path2, value2})
		}
		if len(ops) == 0 {
			return
		}

		// This package's machinery, as the plaintext overrider uses it.
		ours, ourErr := func() (any, error) {
			tree, err := decodeJSON(doc)
			if err != nil {
				return nil, err
			}
			for _, o := range ops {
				var value any
				if o.op != opRemove {
					if value, err = decodeJSON(o.value); err != nil {
						return nil, err
					}
				}
				if tree, err = patch(tree, o.op, o.path, value); err != nil {
					return nil, err
				}
			}
			return tree, nil
		}()
		var ourJSON []byte
		if ourErr == nil {
			var err error
			if ourJSON, err = encodeJSON(ours); err != nil {
				t.Fatalf("the patched document does not encode: %v", err)
			}
		}

		// The library, given the same operations as an RFC 6902 patch.
		var rfc []map[string]any
		for _, o := range ops {
			entry := map[string]any{"op": string(o.op), "path": o.path}
			if o.op != opRemove {
				value := o.value
				if len(bytes.TrimSpace(value)) == 0 {
					value = []byte("null") // decodeJSON reads an empty value as null
				}
				entry["value"] = json.RawMessage(value)
			}
			rfc = append(rfc, entry)
		}
		patchJSON, err := json.Marshal(rfc)
		if err != nil {
			return // a value that is not JSON: the library is never given it
		}
		var theirs []byte
		theirErr := func() (err error) {
			p, err := jsonpatch.DecodePatch(patchJSON)
			if err != nil {
				return err
			}
			theirs, err = p.Apply(doc)
			return err
		}()

		if ourErr != nil || theirErr != nil || !comparablePatch(ops) {
			return
		}
		var want, got any
		if err := json.Unmarshal(theirs, &want); err != nil {
			t.Fatalf("the library's result %q is not JSON: %v", theirs, err)
		}
		if err := json.Unmarshal(ourJSON, &got); err != nil {
			t.Fatalf("our result %q is not JSON: %v", ourJSON, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("document %q, patch %s:\nlibrary %s\nours    %s\n(-library +ours):\n%s", doc, patchJSON, theirs, ourJSON, diff)
		}
	})
}

// patchOp is one fuzzed JSON patch operation.
type patchOp struct {
	op    policyv1alpha1.OverriderOperator
	path  string
	value []byte
}

// comparablePatch reports whether the operations avoid the documented differences between the
// two implementations (jsonpatch.go): array indexes that RFC 6901 does not allow (a sign,
// leading zeros), which the library reads as offsets; and an empty reference token before the
// last, which the library refuses. Tokens are checked whatever the container they address, so
// this errs on the side of skipping the comparison.
func comparablePatch(ops []patchOp) bool {
	for _, o := range ops {
		tokens, err := parsePointer(o.path)
		if err != nil {
			return false
		}
		for i, tok := range tokens {
			if tok == "" && i < len(tokens)-1 {
				return false
			}
			if nonRFCIndex(tok) {
				return false
			}
		}
	}
	return true
}

// nonRFCIndex reports whether tok is an integer that RFC 6901 does not allow as an array index
// but the library does: signed, or with a leading zero.
func nonRFCIndex(tok string) bool {
	digits := strings.TrimLeft(tok, "+-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	return len(digits) != len(tok) || (len(digits) > 1 && digits[0] == '0')
}

// FuzzApply applies a ClusterOverridePolicy and an OverridePolicy that use every overrider kind
// (plaintext, imageOverrider with and without a predicate, labelsOverrider,
// annotationsOverrider, commandOverrider, argsOverrider, fieldOverrider on a JSON and a YAML
// document) to a manifest built from the fuzzed input, through the public Apply and
// ApplyForWork. Invariants: no panic; either an error or an overridden manifest, never both;
// the result is plain JSON (it encodes and deep-copies); neither the manifest nor the policies
// are modified.
func FuzzApply(f *testing.F) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"},"annotations":{"a":"1"}},` +
		`"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c0","image":"registry.k8s.io/nginx:1.25","args":["-v"]},{"name":"c1","image":"busybox@sha256:abc"}]}}}}`
	configMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"config.json":"{\"a\":{\"b\":[1,2]}}","config.yaml":"a:\n  b: [1, 2]\non: yes\n"}}`
	cronJob := `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj","namespace":"ops"},"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c0","image":"localhost:5000/job","command":["run"]}]}}}}}}`
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c0","image":"nginx"},{"image":5},"x"]}}`
	for _, seed := range []struct {
		manifest                   string
		choice                     uint32
		path, value                string
		imageValue, imagePath      string
		key, labelValue, container string
		arg                        string
		fieldPath, subPath         string
		subValue                   string
	}{
		{deployment, 0, "/spec/replicas", `5`, ".cn", "", "env", "prod", "c0", "--debug", "/metadata/annotations/a", "", `1`},
		{deployment, 0x5555, "/metadata/annotations/x", `"y"`, "v2", "/spec/template/spec/containers/0/image", "app", "", "c1", "-v", "/metadata/name", "/a", `2`},
		{deployment, 0xaaaa, "/spec/template/spec/containers/-", `{"name":"side","image":"envoy"}`, "mirror.example", "", "app", "web", "c0", "-v", "", "", ``},
		{configMap, 0x0102, "/data/extra", `"v"`, "x", "", "k", "v", "c0", "a", "/data/config.json", "/a/b/-", `3`},
		{configMap, 0x0321, "/data/extra", `"v"`, "x", "", "k", "v", "c0", "a", "/data/config.yaml", "/a/b/0", `{"c":null}`},
		{configMap, 0x0f0f, "/data", `null`, "x", "/data/config.json", "k", "v", "c0", "a", "/data/config.yaml", "/on", `false`},
		{cronJob, 0x1234, "", `{"kind":"Other"}`, "sha256:0123456789abcdef", "", "k", "v", "c0", "go", "/spec", "/x", `1`},
		{pod, 0x4321, "/spec/containers/1/image", `"ok"`, "latest", "/spec/containers/2", "k", "v", "", "a", "/spec/containers/2", "", `0`},
		{`{"kind":"Secret","metadata":{"labels":"not a map","annotations":{"a":1}},"data":{"d":"W10="}}`, 0x7777, "/metadata", `{}`, "a", "", "k", "v", "c", "a", "/data/d", "/0", `"x"`},
	} {
		f.Add([]byte(seed.manifest), seed.choice, seed.path, []byte(seed.value), seed.imageValue, seed.imagePath,
			seed.key, seed.labelValue, seed.container, seed.arg, seed.fieldPath, seed.subPath, []byte(seed.subValue))
	}
	f.Fuzz(func(t *testing.T, manifest []byte, choice uint32, path string, value []byte, imageValue, imagePath string,
		key, labelValue, container, arg, fieldPath, subPath string, subValue []byte) {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest); err != nil {
			return
		}
		// Two bits of choice pick each operator, so every combination is reachable.
		op := func(shift uint) policyv1alpha1.OverriderOperator {
			return []policyv1alpha1.OverriderOperator{opAdd, opRemove, opReplace, "move"}[(choice>>shift)&3]
		}
		component := []policyv1alpha1.ImageComponent{policyv1alpha1.Registry, policyv1alpha1.Repository, policyv1alpha1.Tag, "Digest"}[(choice>>28)&3]
		var predicate *policyv1alpha1.ImagePredicate
		if imagePath != "" {
			predicate = &policyv1alpha1.ImagePredicate{Path: imagePath}
		}
		field := policyv1alpha1.FieldOverrider{FieldPath: fieldPath}
		if choice&(1<<30) == 0 {
			field.JSON = []policyv1alpha1.JSONPatchOperation{{SubPath: subPath, Operator: op(20), Value: apiextensionsv1.JSON{Raw: subValue}}}
		} else {
			field.YAML = []policyv1alpha1.YAMLPatchOperation{{SubPath: subPath, Operator: op(20), Value: apiextensionsv1.JSON{Raw: subValue}}}
		}
		overriders := policyv1alpha1.Overriders{
			Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: path, Operator: op(0), Value: apiextensionsv1.JSON{Raw: value}}},
			ImageOverrider: []policyv1alpha1.ImageOverrider{
				{Component: component, Operator: op(2), Value: imageValue},
				{Predicate: predicate, Component: policyv1alpha1.Tag, Operator: op(4), Value: imageValue},
			},
			LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{{Operator: op(6), Value: map[string]string{key: labelValue}}},
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: op(8), Value: map[string]string{key: labelValue, "fixed": arg}}},
			CommandOverrider:     []policyv1alpha1.CommandArgsOverrider{{ContainerName: container, Operator: op(10), Value: []string{arg}}},
			ArgsOverrider:        []policyv1alpha1.CommandArgsOverrider{{ContainerName: container, Operator: op(12), Value: []string{arg, labelValue}}},
			FieldOverrider:       []policyv1alpha1.FieldOverrider{field},
		}
		if choice&(1<<31) != 0 {
			// Only some kinds, so that a failing one does not hide the others.
			overriders.Plaintext, overriders.FieldOverrider = nil, nil
		}
		cop := &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "cop"},
			Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: overriders}}}}
		// A namespaced policy in the deprecated form, selecting the manifest by kind.
		op1 := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: "op"},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind()}},
				Overriders: policyv1alpha1.Overriders{
					Plaintext:       []policyv1alpha1.PlaintextOverrider{{Path: subPath, Operator: op(14), Value: apiextensionsv1.JSON{Raw: subValue}}},
					LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: op(16), Value: map[string]string{"k": labelValue}}},
				},
			}}
		ops, cops := []*policyv1alpha1.OverridePolicy{op1}, []*policyv1alpha1.ClusterOverridePolicy{cop}
		before, opBefore, copBefore := obj.DeepCopy(), op1.DeepCopy(), cop.DeepCopy()

		out, applied, err := Apply(obj, member("m1", map[string]string{"k": "v"}), ops, cops)
		switch {
		case err != nil && out != nil:
			t.Fatalf("Apply returned both a manifest and the error %v", err)
		case err != nil && (len(applied.Overrides) > 0 || len(applied.ClusterOverrides) > 0):
			t.Fatalf("Apply returned applied rules with the error %v", err)
		case err == nil && out == nil:
			t.Fatal("Apply returned neither a manifest nor an error")
		}
		if err == nil {
			if _, jerr := json.Marshal(out.Object); jerr != nil {
				t.Fatalf("the overridden manifest does not encode: %v", jerr)
			}
			_ = out.DeepCopy() // panics on values that are not plain JSON
			if _, aerr := applied.Annotations(); aerr != nil {
				t.Fatalf("Annotations: %v", aerr)
			}
		}
		forWork, _, _, aerr := ApplyForWork(obj, member("m1", nil), ops, cops)
		if (aerr == nil) == (forWork == nil) {
			t.Fatalf("ApplyForWork returned %v and error %v", forWork != nil, aerr)
		}
		if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
			t.Fatalf("Apply modified its input manifest (-before +after):\n%s", diff)
		}
		if !reflect.DeepEqual(opBefore, op1) || !reflect.DeepEqual(copBefore, cop) {
			t.Fatalf("Apply modified its policies: %s", cmp.Diff([]any{opBefore, copBefore}, []any{op1, cop}))
		}
	})
}
