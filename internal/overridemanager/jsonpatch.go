package overridemanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-openapi/jsonpointer"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// This file holds the JSON pointer (RFC 6901) and JSON patch (RFC 6902: add, remove, replace)
// access shared by the plaintext overrider, the field overrider and the workload overriders.
// Documents are the generic trees of encoding/json and unstructured: map[string]any, []any,
// string, bool, int64, float64 and nil.
//
// Pointers are read with go-openapi/jsonpointer and patches applied with evanphx/json-patch/v5,
// the libraries Karmada's override manager uses, with Karmada's options (the library defaults):
// so edge cases behave as in Karmada, including the library's extensions to RFC 6902 (an array
// index may be negative, counting from the end, and may have leading zeros).

// valueAt returns the value the pointer designates in doc.
func valueAt(doc any, pointer string) (any, error) {
	p, err := jsonpointer.New(pointer)
	if err != nil {
		return nil, fmt.Errorf("JSON pointer %q: %w", pointer, err)
	}
	v, _, err := p.Get(doc)
	if err != nil {
		return nil, fmt.Errorf("JSON pointer %q: %w", pointer, err)
	}
	return v, nil
}

// patchOptions are the library defaults Karmada applies patches with, except that <, > and & are
// not escaped in the output (which is decoded again, so escaping would only cost time).
var patchOptions = func() *jsonpatch.ApplyOptions {
	o := jsonpatch.NewApplyOptions()
	o.EscapeHTML = false
	return o
}()

// patch applies one add, remove or replace operation at pointer and returns the new document.
// When doc is an object and the result is one too, doc itself is updated, so callers holding the
// root map see the change. The semantics are those of evanphx/json-patch: add sets an object
// member (replacing an existing one) or inserts into an array ("-" appends) and needs the parent
// to exist; remove and replace need the target to exist.
func patch(doc any, op policyv1alpha1.OverriderOperator, pointer string, value any) (any, error) {
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return nil, fmt.Errorf("unsupported operator %q (want add, remove or replace)", op)
	}
	docJSON, err := encodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("encode the document: %w", err)
	}
	operation, err := patchOperation(op, pointer, value)
	if err != nil {
		return nil, err
	}
	out, err := jsonpatch.Patch{operation}.ApplyWithOptions(docJSON, patchOptions)
	if err != nil {
		return nil, err
	}
	updated, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("decode the patched document: %w", err)
	}
	root, isMap := doc.(map[string]any)
	updatedRoot, stillMap := updated.(map[string]any)
	if isMap && stillMap {
		clear(root)
		maps.Copy(root, updatedRoot)
		return root, nil
	}
	return updated, nil
}

// patchOperation builds one JSON patch operation; remove carries no value.
func patchOperation(op policyv1alpha1.OverriderOperator, pointer string, value any) (jsonpatch.Operation, error) {
	raw := func(v any) (*json.RawMessage, error) {
		b, err := encodeJSON(v)
		m := json.RawMessage(b)
		return &m, err
	}
	kind, _ := raw(string(op))
	path, _ := raw(pointer)
	operation := jsonpatch.Operation{"op": kind, "path": path}
	if op != policyv1alpha1.OverriderOpRemove {
		v, err := raw(value)
		if err != nil {
			return nil, fmt.Errorf("encode the value: %w", err)
		}
		operation["value"] = v
	}
	return operation, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64, json.Number:
		return "number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// decodeJSON decodes a JSON value into the generic tree unstructured objects use: integers
// become int64 and other numbers float64 (unstructured's deep copy accepts nothing else). Empty
// input is null.
func decodeJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return normalizeNumbers(v)
}

func normalizeNumbers(v any) (any, error) {
	var err error
	switch t := v.(type) {
	case json.Number:
		if i, ierr := t.Int64(); ierr == nil {
			return i, nil
		}
		f, ferr := t.Float64()
		if ferr != nil {
			return nil, fmt.Errorf("number %s is out of range", t)
		}
		return f, nil
	case map[string]any:
		for k, e := range t {
			if t[k], err = normalizeNumbers(e); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range t {
			if t[i], err = normalizeNumbers(e); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// encodeJSON marshals v compactly without escaping <, > and &, which would needlessly rewrite
// embedded documents such as URLs with query strings.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
