package crds_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flotilla-io/flotilla/api/crds"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// specPaths lists the field paths under spec of a schema ("[]" for list
// items), sorted.
func specPaths(root *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	var walk func(s *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(s *apiextensionsv1.JSONSchemaProps, path string) {
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, path+"[]")
			return
		}
		for name, child := range s.Properties {
			p := path + "." + name
			out = append(out, p)
			walk(&child, p)
		}
	}
	if spec, ok := root.Properties["spec"]; ok {
		out = append(out, "spec")
		walk(&spec, "spec")
	}
	sort.Strings(out)
	return out
}

// uncovered returns the paths of kind that no entry of table covers, and
// the entries (by index) that cover something.
func uncovered(table []crds.FieldUse, kind string, paths []string, used map[int]bool) []string {
	var missing []string
	for _, p := range paths {
		found := false
		for i, e := range table {
			if !slices.Contains(e.Kinds, kind) {
				continue
			}
			if e.Path == p || (e.Subtree && strings.HasPrefix(p, e.Path+".")) || (e.Subtree && strings.HasPrefix(p, e.Path+"[]")) {
				found = true
				used[i] = true
				break
			}
		}
		if !found {
			missing = append(missing, kind+" "+p)
		}
	}
	return missing
}

// TestEverySpecFieldSaysWhatActsOnIt is the guard against a served field
// that nothing reads: every spec field of every served CRD version needs an
// entry in crds.Fields, saying which controller acts on it or why none
// does, and no entry may name a field that is not served.
func TestEverySpecFieldSaysWhatActsOnIt(t *testing.T) {
	used := map[int]bool{}
	var missing []string
	for _, crd := range ourCRDs(t) {
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			missing = append(missing, uncovered(crds.Fields, crd.Spec.Names.Kind, specPaths(v.Schema.OpenAPIV3Schema), used)...)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d spec fields have no entry in crds.Fields (say which controller acts on each, or why none does):\n  %s",
			len(missing), strings.Join(slices.Compact(missing), "\n  "))
	}
	for i, e := range crds.Fields {
		if !used[i] {
			t.Errorf("crds.Fields entry %v %s names no served field", e.Kinds, e.Path)
		}
		if (e.ActedOnBy == "") == (e.NotActing == "") {
			t.Errorf("crds.Fields entry %v %s must have exactly one of ActedOnBy and NotActing", e.Kinds, e.Path)
		}
	}
}

// TestANewFieldWithoutAnEntryFails shows the guard at work: a field added
// to the PropagationPolicy schema, under a part the table lists field by
// field, is reported.
func TestANewFieldWithoutAnEntryFails(t *testing.T) {
	var pp *apiextensionsv1.CustomResourceDefinition
	for _, crd := range ourCRDs(t) {
		if crd.Spec.Names.Kind == "PropagationPolicy" {
			pp = crd
		}
	}
	if pp == nil {
		t.Fatal("no PropagationPolicy CRD")
	}
	schema := pp.Spec.Versions[0].Schema.OpenAPIV3Schema
	placement := schema.Properties["spec"].Properties["placement"]
	placement.Properties["newThing"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	got := uncovered(crds.Fields, "PropagationPolicy", specPaths(schema), map[int]bool{})
	if !slices.Equal(got, []string{"PropagationPolicy spec.placement.newThing"}) {
		t.Errorf("uncovered = %v, want only the new field", got)
	}
}

// TestCompatibilityPageListsWhatDoesNotAct checks the user-facing list of
// fields that do not act (docs/reference/compatibility.md, between its
// not-acting markers) against the table: it must be crds.NotActingMarkdown.
func TestCompatibilityPageListsWhatDoesNotAct(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(reftest.ModuleRoot(t), "docs", "reference", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- not-acting:begin -->\n", "<!-- not-acting:end -->"
	_, rest, ok1 := strings.Cut(string(page), begin)
	listed, _, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("docs/reference/compatibility.md lacks the markers %q and %q", begin, end)
	}
	if want := crds.NotActingMarkdown(); listed != want {
		t.Errorf("the list of fields that do not act in docs/reference/compatibility.md differs from crds.Fields; put this between the markers:\n%s", want)
	}
}
