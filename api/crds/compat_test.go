package crds_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// referenceSets are the Karmada releases whose CRDs Flotilla must accept, newest first.
var referenceSets = []string{"karmada-crds", "karmada-crds-v1.7"}

// skippedReferenceVersions are served reference versions Flotilla deliberately leaves out:
// Karmada converts the v1alpha1 bindings with a webhook, and nothing uses them any more.
var skippedReferenceVersions = map[string]bool{
	"resourcebindings.work.karmada.io/v1alpha1":        true,
	"clusterresourcebindings.work.karmada.io/v1alpha1": true,
}

// referenceCRD is one CRD as shipped by one Karmada release.
type referenceCRD struct {
	set string // the reference directory, e.g. "karmada-crds-v1.7"
	crd *apiextensionsv1.CustomResourceDefinition
}

// loadReferenceCRDs reads every CRD of every reference set, grouped by CRD name, newest
// release first.
func loadReferenceCRDs(t *testing.T) map[string][]referenceCRD {
	t.Helper()
	root := referenceDir(t)
	out := map[string][]referenceCRD{}
	for _, set := range referenceSets {
		var files []string
		err := filepath.WalkDir(filepath.Join(root, set), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".yaml") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("reading reference set %s: %v", set, err)
		}
		if len(files) == 0 {
			t.Fatalf("reference set %s holds no CRD YAML", filepath.Join(root, set))
		}
		for _, file := range files {
			for _, doc := range yamlDocuments(t, file) {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.Unmarshal(doc, crd); err != nil {
					t.Fatalf("decoding %s: %v", file, err)
				}
				if crd.Kind != "CustomResourceDefinition" {
					continue
				}
				out[crd.Name] = append(out[crd.Name], referenceCRD{set: set, crd: crd})
			}
		}
	}
	return out
}

// yamlDocuments splits a YAML file into its non-empty documents.
func yamlDocuments(t *testing.T, file string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("splitting %s into YAML documents: %v", file, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
	return docs
}

// stripComments drops full-line YAML comments, to tell empty documents from real ones.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// schemaNode is what the compatibility check compares at one field path.
type schemaNode struct {
	Type                  string
	Format                string
	IntOrString           bool
	PreserveUnknownFields bool
	Enum                  []string // JSON-encoded values
	Default               string   // JSON-encoded; "" when there is none
	Required              bool
}

// flattenSchema maps every field path of a schema (".spec.placement.clusterAffinities[]",
// ".spec.overall{}" for map values) to its node.
func flattenSchema(s *apiextensionsv1.JSONSchemaProps) map[string]schemaNode {
	out := map[string]schemaNode{}
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps, required bool)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps, required bool) {
		n := schemaNode{
			Type:        s.Type,
			Format:      s.Format,
			IntOrString: s.XIntOrString,
			Required:    required,
		}
		if s.XPreserveUnknownFields != nil {
			n.PreserveUnknownFields = *s.XPreserveUnknownFields
		}
		for _, e := range s.Enum {
			n.Enum = append(n.Enum, string(e.Raw))
		}
		if s.Default != nil {
			n.Default = normalizeJSON(string(s.Default.Raw))
		}
		out[path] = n
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		for name, child := range s.Properties {
			walk(path+"."+name, &child, req[name])
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", s.Items.Schema, false)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(path+"{}", s.AdditionalProperties.Schema, false)
		}
	}
	walk("", s, false)
	return out
}

func versionSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensionsv1.CustomResourceDefinitionVersion, map[string]schemaNode) {
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Name != version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return v, map[string]schemaNode{}
		}
		return v, flattenSchema(v.Schema.OpenAPIV3Schema)
	}
	return nil, nil
}

// TestSchemaCompatibility checks every Karmada reference CRD (v1.19 and v1.7.5) against the
// embedded CRD of the same name: names, scope, served versions, status subresource, printer
// columns, and, for every field path of every served version, the type, format, enum values,
// default and required-ness.
//
// Where the two Karmada releases disagree, Flotilla must accept objects valid under either:
// an enum is the union of both releases' values, a field is required only if both require it,
// and a default must equal one of the releases' defaults. A difference is reported only when
// no reference release agrees with Flotilla's schema. Defaults that neither release has (for
// example FederatedHPA minReplicas 1, which Karmada sets in its mutating webhook) are allowed.
func TestSchemaCompatibility(t *testing.T) {
	refs := loadReferenceCRDs(t)
	ours := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range ourCRDs(t) {
		ours[crd.Name] = crd
	}
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			our, ok := ours[name]
			if !ok {
				t.Fatalf("no embedded CRD named %s", name)
			}
			for _, ref := range refs[name] {
				checkNames(t, ref, our, ref.set == referenceSets[0])
				checkVersions(t, ref, our, refs[name])
			}
		})
	}
}

func checkNames(t *testing.T, ref referenceCRD, our *apiextensionsv1.CustomResourceDefinition, newest bool) {
	t.Helper()
	rn, on := ref.crd.Spec.Names, our.Spec.Names
	if ref.crd.Spec.Group != our.Spec.Group {
		t.Errorf("[%s] group: reference %q, ours %q", ref.set, ref.crd.Spec.Group, our.Spec.Group)
	}
	if ref.crd.Spec.Scope != our.Spec.Scope {
		t.Errorf("[%s] scope: reference %s, ours %s", ref.set, ref.crd.Spec.Scope, our.Spec.Scope)
	}
	if rn.Kind != on.Kind || rn.Plural != on.Plural || rn.Singular != on.Singular || (rn.ListKind != "" && rn.ListKind != on.ListKind) {
		t.Errorf("[%s] names: reference %+v, ours %+v", ref.set, rn, on)
	}
	// Karmada's own groups must match exactly; the mcs-api CRDs come from a newer mcs-api
	// release that only added short names.
	exact := newest && strings.HasSuffix(our.Spec.Group, ".karmada.io")
	compareNameList(t, ref.set, "shortNames", rn.ShortNames, on.ShortNames, exact)
	compareNameList(t, ref.set, "categories", rn.Categories, on.Categories, exact)
}

func compareNameList(t *testing.T, set, what string, ref, ours []string, exact bool) {
	t.Helper()
	have := map[string]bool{}
	for _, s := range ours {
		have[s] = true
	}
	for _, s := range ref {
		if !have[s] {
			t.Errorf("[%s] %s: reference has %q, ours %v", set, what, s, ours)
		}
	}
	if exact && len(ours) != len(ref) {
		t.Errorf("[%s] %s: reference %v, ours %v", set, what, ref, ours)
	}
}

func checkVersions(t *testing.T, ref referenceCRD, our *apiextensionsv1.CustomResourceDefinition, all []referenceCRD) {
	t.Helper()
	for _, rv := range ref.crd.Spec.Versions {
		if !rv.Served || skippedReferenceVersions[ref.crd.Name+"/"+rv.Name] {
			continue
		}
		ov, ourFields := versionSchema(our, rv.Name)
		if ov == nil || !ov.Served {
			t.Errorf("[%s] version %s is served by the reference but not by ours", ref.set, rv.Name)
			continue
		}
		if rv.Storage && !ov.Storage {
			t.Errorf("[%s] version %s is the reference's storage version but not ours", ref.set, rv.Name)
		}
		refHasStatus := rv.Subresources != nil && rv.Subresources.Status != nil
		ourHasStatus := ov.Subresources != nil && ov.Subresources.Status != nil
		if refHasStatus != ourHasStatus {
			t.Errorf("[%s] version %s: status subresource: reference %v, ours %v", ref.set, rv.Name, refHasStatus, ourHasStatus)
		}
		checkPrinterColumns(t, ref.set, rv, *ov, ref.set == referenceSets[0])

		_, refFields := versionSchema(ref.crd, rv.Name)
		var others []map[string]schemaNode
		for _, other := range all {
			if other.set == ref.set {
				continue
			}
			if _, f := versionSchema(other.crd, rv.Name); f != nil {
				others = append(others, f)
			}
		}
		checkFields(t, ref.set+" "+rv.Name, refFields, ourFields, others)
	}
}

func checkPrinterColumns(t *testing.T, set string, rv, ov apiextensionsv1.CustomResourceDefinitionVersion, newest bool) {
	t.Helper()
	if newest {
		// kubectl get prints exactly Karmada's columns; ours may only add,
		// after them, columns that -o wide alone shows (priority 1 or more:
		// the bindings' ROLLOUT, Flotilla's staged rollouts).
		extra := ov.AdditionalPrinterColumns[min(len(rv.AdditionalPrinterColumns), len(ov.AdditionalPrinterColumns)):]
		wideOnly := true
		for _, c := range extra {
			wideOnly = wideOnly && c.Priority > 0
		}
		if len(rv.AdditionalPrinterColumns) > len(ov.AdditionalPrinterColumns) || !wideOnly {
			t.Errorf("[%s] version %s: printer columns: reference %+v, ours %+v", set, rv.Name, rv.AdditionalPrinterColumns, ov.AdditionalPrinterColumns)
			return
		}
		for i, rc := range rv.AdditionalPrinterColumns {
			oc := ov.AdditionalPrinterColumns[i]
			if rc.Name != oc.Name || rc.Type != oc.Type || rc.JSONPath != oc.JSONPath || rc.Format != oc.Format || rc.Priority != oc.Priority {
				t.Errorf("[%s] version %s: printer column %d: reference %+v, ours %+v", set, rv.Name, i, rc, oc)
			}
		}
		return
	}
	// Older releases: every column they showed is still shown (names differ only in case,
	// and kubectl prints them upper-cased anyway).
	for _, rc := range rv.AdditionalPrinterColumns {
		found := false
		for _, oc := range ov.AdditionalPrinterColumns {
			if strings.EqualFold(rc.Name, oc.Name) && rc.JSONPath == oc.JSONPath && rc.Type == oc.Type {
				found = true
			}
		}
		if !found {
			t.Errorf("[%s] version %s: printer column %q (%s) is missing", set, rv.Name, rc.Name, rc.JSONPath)
		}
	}
}

// checkFields reports, as test errors, the field differences compareFields finds, and logs
// the differences it tolerates.
func checkFields(t *testing.T, where string, ref, ours map[string]schemaNode, others []map[string]schemaNode) {
	t.Helper()
	problems, tolerated := compareFields(where, ref, ours, others)
	for _, p := range problems {
		t.Error(p)
	}
	for _, n := range tolerated {
		t.Log(n)
	}
}

// compareFields compares every field path of a reference schema with ours. others are the
// schemas of the same version in the other reference releases; a difference is tolerated when
// one of them agrees with ours. It returns the differences that break compatibility and,
// separately, the tolerated ones.
func compareFields(where string, ref, ours map[string]schemaNode, others []map[string]schemaNode) (problems, tolerated []string) {
	paths := make([]string, 0, len(ref))
	for p := range ref {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		r := ref[path]
		o, ok := ours[path]
		field := displayPath(path)
		if !ok {
			problems = append(problems, fmt.Sprintf("[%s] field %s is missing from our schema", where, field))
			continue
		}
		agreesElsewhere := func(same func(schemaNode) bool) bool {
			for _, other := range others {
				if n, ok := other[path]; ok && same(n) {
					return true
				}
			}
			return false
		}
		if r.Type != o.Type || r.Format != o.Format || r.IntOrString != o.IntOrString || r.PreserveUnknownFields != o.PreserveUnknownFields {
			problems = append(problems, fmt.Sprintf("[%s] field %s: type %q format %q (int-or-string %v, preserve-unknown-fields %v) in the reference, type %q format %q (int-or-string %v, preserve-unknown-fields %v) in ours",
				where, field, r.Type, r.Format, r.IntOrString, r.PreserveUnknownFields, o.Type, o.Format, o.IntOrString, o.PreserveUnknownFields))
		}
		if missing := missingEnumValues(r.Enum, o.Enum); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("[%s] field %s: enum values %v of the reference are not accepted by ours %v", where, field, missing, o.Enum))
		}
		if len(r.Enum) == 0 && len(o.Enum) > 0 {
			if agreesElsewhere(func(n schemaNode) bool { return len(n.Enum) > 0 && len(missingEnumValues(n.Enum, o.Enum)) == 0 }) {
				tolerated = append(tolerated, fmt.Sprintf("[%s] field %s: enum %v where this release has none; another Karmada release has the enum", where, field, o.Enum))
			} else {
				problems = append(problems, fmt.Sprintf("[%s] field %s: ours restricts the field to %v, the reference accepts any value", where, field, o.Enum))
			}
		}
		switch {
		case r.Default == o.Default:
		case r.Default == "":
			tolerated = append(tolerated, fmt.Sprintf("[%s] field %s: default %s added where this release has none", where, field, o.Default))
		case agreesElsewhere(func(n schemaNode) bool { return n.Default == o.Default }):
			tolerated = append(tolerated, fmt.Sprintf("[%s] field %s: default %s instead of %s, as in another Karmada release", where, field, orNone(o.Default), r.Default))
		default:
			problems = append(problems, fmt.Sprintf("[%s] field %s: default %s in the reference, %s in ours", where, field, r.Default, orNone(o.Default)))
		}
		if r.Required != o.Required {
			if agreesElsewhere(func(n schemaNode) bool { return n.Required == o.Required }) {
				tolerated = append(tolerated, fmt.Sprintf("[%s] field %s: required=%v instead of %v, as in another Karmada release", where, field, o.Required, r.Required))
			} else {
				problems = append(problems, fmt.Sprintf("[%s] field %s: required=%v in the reference, required=%v in ours", where, field, r.Required, o.Required))
			}
		}
	}
	return problems, tolerated
}

func orNone(def string) string {
	if def == "" {
		return "none"
	}
	return def
}

func missingEnumValues(ref, ours []string) []string {
	if len(ref) == 0 || len(ours) == 0 {
		// No enum in ours accepts every value; no enum in the reference asks for none.
		return nil
	}
	have := map[string]bool{}
	for _, v := range ours {
		have[normalizeJSON(v)] = true
	}
	var missing []string
	for _, v := range ref {
		if !have[normalizeJSON(v)] {
			missing = append(missing, v)
		}
	}
	return missing
}

func normalizeJSON(raw string) string {
	var v interface{}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// displayPath turns ".spec.rules[].name" into "spec.rules[*].name".
func displayPath(path string) string {
	p := strings.TrimPrefix(path, ".")
	p = strings.ReplaceAll(p, "[]", "[*]")
	p = strings.ReplaceAll(p, "{}", "[<key>]")
	if p == "" {
		return "<root>"
	}
	return p
}

// TestCompareFieldsReportsEachKindOfDifference makes sure the compatibility check itself
// catches what it promises to, naming the field path each time.
func TestCompareFieldsReportsEachKindOfDifference(t *testing.T) {
	str := schemaNode{Type: "string"}
	tests := []struct {
		name      string
		ref, ours map[string]schemaNode
		others    []map[string]schemaNode
		want      string // substring of the single expected problem; "" for none
	}{
		{
			name: "a missing field is reported",
			ref:  map[string]schemaNode{".spec.name": str},
			ours: map[string]schemaNode{},
			want: "field spec.name is missing",
		},
		{
			name: "a changed type is reported",
			ref:  map[string]schemaNode{".spec.rules[].name": str},
			ours: map[string]schemaNode{".spec.rules[].name": {Type: "integer"}},
			want: "field spec.rules[*].name: type",
		},
		{
			name: "a dropped enum value is reported",
			ref:  map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`, `"B"`}}},
			ours: map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`}}},
			want: `field spec.mode: enum values ["B"]`,
		},
		{
			name: "an enum superset is accepted",
			ref:  map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`}}},
			ours: map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`, `"B"`}}},
		},
		{
			name: "an enum where no release has one is reported",
			ref:  map[string]schemaNode{".spec.mode": str},
			ours: map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`}}},
			want: "field spec.mode: ours restricts the field",
		},
		{
			name:   "an enum that another release has is accepted",
			ref:    map[string]schemaNode{".spec.mode": str},
			ours:   map[string]schemaNode{".spec.mode": {Type: "string", Enum: []string{`"A"`, `"B"`}}},
			others: []map[string]schemaNode{{".spec.mode": {Type: "string", Enum: []string{`"B"`}}}},
		},
		{
			name: "a changed default is reported",
			ref:  map[string]schemaNode{".spec.mode": {Type: "string", Default: `"A"`}},
			ours: map[string]schemaNode{".spec.mode": {Type: "string", Default: `"B"`}},
			want: "field spec.mode: default",
		},
		{
			name:   "a default that another release has is accepted",
			ref:    map[string]schemaNode{".spec.mode": {Type: "string", Default: `"A"`}},
			ours:   map[string]schemaNode{".spec.mode": {Type: "string", Default: `"B"`}},
			others: []map[string]schemaNode{{".spec.mode": {Type: "string", Default: `"B"`}}},
		},
		{
			name: "a newly required field is reported",
			ref:  map[string]schemaNode{".spec.mode": str},
			ours: map[string]schemaNode{".spec.mode": {Type: "string", Required: true}},
			want: "field spec.mode: required=false in the reference",
		},
		{
			name: "a field no longer required is reported",
			ref:  map[string]schemaNode{".spec.mode": {Type: "string", Required: true}},
			ours: map[string]schemaNode{".spec.mode": str},
			want: "field spec.mode: required=true in the reference",
		},
		{
			name:   "a field another release does not require is accepted as optional",
			ref:    map[string]schemaNode{".spec.mode": {Type: "string", Required: true}},
			ours:   map[string]schemaNode{".spec.mode": str},
			others: []map[string]schemaNode{{".spec.mode": str}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems, _ := compareFields("test", tc.ref, tc.ours, tc.others)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("expected no problem, got %q", problems)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0], tc.want) {
				t.Fatalf("expected one problem containing %q, got %q", tc.want, problems)
			}
		})
	}
}
