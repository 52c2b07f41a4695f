package override

import (
	"bytes"
	"errors"
	"fmt"
	"maps"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// overriderStep is one kind of overrider in a rule: its field name and how to apply its i-th
// entry. apply returns the JSON pointer it acted on (for errors) and the failure, if any.
type overriderStep struct {
	name  string
	count int
	apply func(i int) (string, error)
}

// applyOverriders applies the overriders of one rule to obj in Karmada's documented order:
// imageOverrider, commandOverrider, argsOverrider, labelsOverrider, annotationsOverrider,
// fieldOverrider, plaintext; entries of one kind in list order. field is the overriders' location
// in the policy, for example "spec.overrideRules[0].overriders". It returns an *Error without
// the policy identity, which the caller fills in.
func applyOverriders(obj *unstructured.Unstructured, o *policyv1alpha1.Overriders, field string) *Error {
	steps := []overriderStep{
		{"imageOverrider", len(o.ImageOverrider), func(i int) (string, error) {
			return applyImageOverrider(obj, &o.ImageOverrider[i])
		}},
		{"commandOverrider", len(o.CommandOverrider), func(i int) (string, error) {
			return applyCommandArgsOverrider(obj, "command", &o.CommandOverrider[i])
		}},
		{"argsOverrider", len(o.ArgsOverrider), func(i int) (string, error) {
			return applyCommandArgsOverrider(obj, "args", &o.ArgsOverrider[i])
		}},
		{"labelsOverrider", len(o.LabelsOverrider), func(i int) (string, error) {
			return "/metadata/labels", applyStringMapOverrider(obj.GetLabels, obj.SetLabels, &o.LabelsOverrider[i])
		}},
		{"annotationsOverrider", len(o.AnnotationsOverrider), func(i int) (string, error) {
			return "/metadata/annotations", applyStringMapOverrider(obj.GetAnnotations, obj.SetAnnotations, &o.AnnotationsOverrider[i])
		}},
		{"fieldOverrider", len(o.FieldOverrider), func(i int) (string, error) {
			return applyFieldOverrider(obj, &o.FieldOverrider[i])
		}},
		{"plaintext", len(o.Plaintext), func(i int) (string, error) {
			return o.Plaintext[i].Path, applyPlaintext(obj, &o.Plaintext[i])
		}},
	}
	for _, step := range steps {
		for i := 0; i < step.count; i++ {
			if path, err := step.apply(i); err != nil {
				return &Error{Field: fmt.Sprintf("%s.%s[%d]", field, step.name, i), Path: path, Err: err}
			}
		}
	}
	return nil
}

// applyPlaintext applies one JSON patch operation to the whole manifest, like
// `kubectl patch --type=json`. An absent value is JSON null.
func applyPlaintext(obj *unstructured.Unstructured, p *policyv1alpha1.PlaintextOverrider) error {
	var value any
	if p.Operator != policyv1alpha1.OverriderOpRemove {
		v, err := decodeJSON(p.Value.Raw)
		if err != nil {
			return fmt.Errorf("value: %w", err)
		}
		value = v
	}
	doc, err := patch(obj.Object, p.Operator, p.Path, value)
	if err != nil {
		return err
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("the manifest would become a %s", typeName(doc))
	}
	obj.Object = root
	return nil
}

// applyStringMapOverrider applies a labelsOverrider or annotationsOverrider entry through the
// given accessors. Karmada's semantics: add sets every listed key (overwriting existing values);
// remove deletes every listed key that is present, whatever its value; replace changes only
// listed keys that are already present. The map is created by add when absent.
func applyStringMapOverrider(get func() map[string]string, set func(map[string]string), o *policyv1alpha1.LabelAnnotationOverrider) error {
	current := get()
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd:
		if len(o.Value) == 0 {
			return nil
		}
		if current == nil {
			current = make(map[string]string, len(o.Value))
		}
		maps.Copy(current, o.Value)
	case policyv1alpha1.OverriderOpRemove:
		for k := range o.Value {
			delete(current, k)
		}
	case policyv1alpha1.OverriderOpReplace:
		for k, v := range o.Value {
			if _, ok := current[k]; ok {
				current[k] = v
			}
		}
	default:
		return fmt.Errorf("unsupported operator %q (want add, remove or replace)", o.Operator)
	}
	if current == nil {
		return nil
	}
	set(current)
	return nil
}

// applyFieldOverrider patches the JSON or YAML document held in the string field at FieldPath
// and writes it back. JSON documents are written back compact, YAML documents as block YAML
// with sorted keys (comments and formatting of the original do not survive, as in Karmada).
func applyFieldOverrider(obj *unstructured.Unstructured, f *policyv1alpha1.FieldOverrider) (string, error) {
	if len(f.JSON) > 0 && len(f.YAML) > 0 {
		return f.FieldPath, errors.New("json and yaml cannot both be set")
	}
	if len(f.JSON) == 0 && len(f.YAML) == 0 {
		return f.FieldPath, nil
	}
	current, err := valueAt(obj.Object, f.FieldPath)
	if err != nil {
		return f.FieldPath, err
	}
	text, ok := current.(string)
	if !ok {
		return f.FieldPath, fmt.Errorf("field is a %s, not a string holding a document", typeName(current))
	}
	var updated string
	if len(f.JSON) > 0 {
		updated, err = patchEmbeddedJSON(text, f.JSON)
	} else {
		updated, err = patchEmbeddedYAML(text, f.YAML)
	}
	if err != nil {
		return f.FieldPath, err
	}
	_, err = patch(obj.Object, policyv1alpha1.OverriderOpReplace, f.FieldPath, updated)
	return f.FieldPath, err
}

func patchEmbeddedJSON(text string, ops []policyv1alpha1.JSONPatchOperation) (string, error) {
	doc, err := decodeJSON([]byte(text))
	if err != nil {
		return "", fmt.Errorf("field does not hold a JSON document: %w", err)
	}
	for i := range ops {
		if doc, err = patchEmbedded(doc, ops[i].Operator, ops[i].SubPath, ops[i].Value.Raw); err != nil {
			return "", fmt.Errorf("json[%d] (subPath %q): %w", i, ops[i].SubPath, err)
		}
	}
	out, err := encodeJSON(doc)
	return string(out), err
}

// patchEmbeddedYAML patches a YAML document. It reads YAML 1.2 (only true and false are
// booleans), so keys and values such as "on", "yes" or "n" survive as strings, unlike a YAML 1.1
// round trip.
func patchEmbeddedYAML(text string, ops []policyv1alpha1.YAMLPatchOperation) (string, error) {
	var decoded any
	if err := yaml.Unmarshal([]byte(text), &decoded); err != nil {
		return "", fmt.Errorf("field does not hold a YAML document: %w", err)
	}
	doc, err := jsonCompatible(decoded)
	if err != nil {
		return "", fmt.Errorf("field does not hold a YAML document that JSON patch can address: %w", err)
	}
	for i := range ops {
		if doc, err = patchEmbedded(doc, ops[i].Operator, ops[i].SubPath, ops[i].Value.Raw); err != nil {
			return "", fmt.Errorf("yaml[%d] (subPath %q): %w", i, ops[i].SubPath, err)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// jsonCompatible converts a decoded YAML value to the generic JSON tree: integers become int64,
// and mappings must have string keys.
func jsonCompatible(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case []any:
		for i, e := range t {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	case int:
		return int64(t), nil
	case uint64:
		return float64(t), nil
	case nil, string, bool, int64, float64:
		return t, nil
	default:
		return nil, fmt.Errorf("unsupported YAML value of type %T (mapping keys must be strings)", v)
	}
}

func patchEmbedded(doc any, op policyv1alpha1.OverriderOperator, subPath string, raw []byte) (any, error) {
	var value any
	if op != policyv1alpha1.OverriderOpRemove {
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		value = v
	}
	return patch(doc, op, subPath, value)
}
