package crds_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// isKarmadaGroup reports whether objects of the group are served by Flotilla's CRDs.
func isKarmadaGroup(group string) bool {
	return strings.HasSuffix(group, ".karmada.io") || group == "multicluster.x-k8s.io"
}

// TestReferenceSamplesAreAccepted admits every Karmada object of the upstream samples
// (karmada-samples) and of the upstream interpreter customization bundles through our CRDs:
// each must be accepted without errors and without the schema dropping any field. Each is
// also decoded strictly into its Go type, so the Go types know every field the YAML uses.
func TestReferenceSamplesAreAccepted(t *testing.T) {
	ref := referenceDir(t)
	admitSamples(t, ref, "karmada-samples", "interpreter-customizations")
}

// TestExamplesAreAccepted does the same for the repository's own examples/.
func TestExamplesAreAccepted(t *testing.T) {
	admitSamples(t, moduleRoot(t), "examples")
}

// admitSamples admits the Karmada objects of every YAML file under root's dirs, as
// TestReferenceSamplesAreAccepted describes, and fails when it finds none.
func admitSamples(t *testing.T, root string, dirs ...string) {
	var files []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return nil
			}
			// The interpreter bundles' testdata are inputs for the Lua interpreter, not objects.
			if strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				return nil
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
	}

	as := newAdmitters(t)
	admitted := 0
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		for i, doc := range yamlDocuments(t, file) {
			jsonDoc, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Errorf("%s document %d: %v", rel, i, err)
				continue
			}
			obj := map[string]interface{}{}
			if err := utiljson.Unmarshal(jsonDoc, &obj); err != nil {
				t.Errorf("%s document %d: %v", rel, i, err)
				continue
			}
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			gv, err := schema.ParseGroupVersion(apiVersion)
			if err != nil || !isKarmadaGroup(gv.Group) {
				continue
			}
			gvk := gv.WithKind(kind)
			t.Run(rel+"/"+kind, func(t *testing.T) {
				a, err := as.forKind(t, gvk)
				if err != nil {
					t.Fatal(err)
				}
				got := a.admit(obj)
				if len(got.Pruned) > 0 {
					t.Errorf("the schema dropped fields %v", got.Pruned)
				}
				if len(got.Errors) > 0 {
					t.Errorf("refused:\n%s", errorLines(got))
				}

				if !strings.HasSuffix(gvk.Group, ".karmada.io") {
					return // mcs-api kinds have no Flotilla Go types
				}
				typed, err := testScheme.New(gvk)
				if err != nil {
					t.Fatalf("no Go type for %s: %v", gvk, err)
				}
				if err := yaml.UnmarshalStrict(doc, typed); err != nil {
					t.Errorf("strict decoding into %T: %v", typed, err)
				}
			})
			admitted++
		}
	}
	if admitted == 0 {
		t.Fatalf("found no Karmada objects under %s in %v", root, dirs)
	}
	t.Logf("admitted %d Karmada objects from %d files", admitted, len(files))
}
