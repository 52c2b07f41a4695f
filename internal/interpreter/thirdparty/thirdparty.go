// Package thirdparty holds Flotilla's bundled ResourceInterpreterCustomizations for
// third-party kinds (Argo, Flux, Kruise, Kyverno, Volcano, Kubeflow, Ray, Flink and more),
// written for this project. They apply to those kinds out of the box, after the user's own
// customizations and interpreter webhooks and before the built-in rules, as Karmada's
// third-party customizations do.
//
// Each kind lives in customizations/<group>/<version>/<Kind>/customizations.yaml (one
// ResourceInterpreterCustomization), with test cases in testdata/ beside it in the format of
// Karmada's bundle (see package interpretertest).
package thirdparty

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
)

//go:embed customizations
var files embed.FS

var (
	once   sync.Once
	loaded []configv1alpha1.ResourceInterpreterCustomization
)

// Customizations returns the bundled customizations, sorted by name. It panics if an embedded
// file does not decode: that is a build defect, caught by the package's tests.
func Customizations() []configv1alpha1.ResourceInterpreterCustomization {
	once.Do(func() {
		err := fs.WalkDir(files, "customizations", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path.Base(p) != "customizations.yaml" {
				return err
			}
			data, err := files.ReadFile(p)
			if err != nil {
				return err
			}
			var c configv1alpha1.ResourceInterpreterCustomization
			if err := yaml.UnmarshalStrict(data, &c); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			loaded = append(loaded, c)
			return nil
		})
		if err != nil {
			panic(fmt.Sprintf("bundled interpreter customizations: %v", err))
		}
		sort.Slice(loaded, func(i, j int) bool { return loaded[i].Name < loaded[j].Name })
	})
	return loaded
}

// Files are the embedded customization and test files, for tests and `flotilla interpret`.
func Files() fs.FS { return files }
