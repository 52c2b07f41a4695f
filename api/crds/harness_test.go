package crds_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/flotilla-io/flotilla/api/crds"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// ourCRDs returns the embedded CRDs, failing the test if they do not decode.
func ourCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	all, err := crds.All()
	if err != nil {
		t.Fatalf("crds.All: %v", err)
	}
	return all
}

// toInternal applies the v1 defaults the API server applies to a CRD it receives and converts
// the CRD to the internal version its validation and serving code works on.
func toInternal(t *testing.T, in *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	crd := in.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		t.Fatalf("converting CRD %s to the internal version: %v", in.Name, err)
	}
	return out
}

// admitter runs an object through the same steps the API server applies to a custom resource
// on create: pruning of unknown fields, dropping of nulls, defaulting, OpenAPI schema
// validation, list-type validation, embedded ObjectMeta validation and the CEL
// x-kubernetes-validations rules (skipped, as the server does, when an earlier error blocks
// them).
type admitter struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// newAdmitter builds the admitter for one served version of a CRD.
func newAdmitter(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, version string) *admitter {
	t.Helper()
	var v *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			v = &crd.Spec.Versions[i]
		}
	}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		t.Fatalf("CRD %s has no schema for version %s", crd.Name, version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
		t.Fatalf("converting schema of %s/%s: %v", crd.Name, version, err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		t.Fatalf("schema of %s/%s is not structural: %v", crd.Name, version, err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		t.Fatalf("pruning defaults of %s/%s: %v", crd.Name, version, err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		t.Fatalf("building the schema validator of %s/%s: %v", crd.Name, version, err)
	}
	return &admitter{
		structural: s,
		schema:     validator,
		cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
	}
}

// admission is the outcome of admitting one object.
type admission struct {
	// Errors are the validation errors, as the API server would report them.
	Errors field.ErrorList
	// Pruned are the paths of fields the schema does not know, which the server would drop.
	Pruned []string
	// Object is the object after pruning and defaulting.
	Object map[string]interface{}
}

// admit runs obj (which it modifies) through the create path of the API server.
func (a *admitter) admit(obj map[string]interface{}) admission {
	return a.admitUpdate(nil, obj)
}

// admitUpdate runs obj (which it modifies) through the update path of the API server, from
// old (nil: the create path), so that transition rules (oldSelf) are checked.
func (a *admitter) admitUpdate(old, obj map[string]interface{}) admission {
	pruned := structuralpruning.PruneWithOptions(obj, a.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, a.structural)
	structuraldefaulting.Default(obj, a.structural)

	var errs field.ErrorList
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, a.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj, a.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, a.structural, obj)...)
	if !blocksCEL(errs) && a.cel != nil {
		var oldObj interface{}
		if old != nil {
			oldObj = old
		}
		celErrs, _ := a.cel.Validate(context.Background(), nil, a.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return admission{Errors: errs, Pruned: pruned, Object: obj}
}

// blocksCEL mirrors the API server's rule that CEL validation is skipped when the object has
// errors of kinds that make the rules meaningless (missing required fields, wrong types, ...).
func blocksCEL(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// admitters caches one admitter per group/kind/version; building the CEL programs is the
// slow part.
type admitters struct {
	mu    sync.Mutex
	crds  []*apiextensionsv1.CustomResourceDefinition
	cache map[schema.GroupVersionKind]*admitter
}

func newAdmitters(t *testing.T) *admitters {
	return &admitters{crds: ourCRDs(t), cache: map[schema.GroupVersionKind]*admitter{}}
}

// forKind returns the admitter for gvk, or an error if no embedded CRD serves it.
func (as *admitters) forKind(t *testing.T, gvk schema.GroupVersionKind) (*admitter, error) {
	t.Helper()
	as.mu.Lock()
	defer as.mu.Unlock()
	if a, ok := as.cache[gvk]; ok {
		return a, nil
	}
	for _, crd := range as.crds {
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == gvk.Version && v.Served {
				a := newAdmitter(t, crd, v.Name)
				as.cache[gvk] = a
				return a, nil
			}
		}
	}
	return nil, fmt.Errorf("no embedded CRD serves %s", gvk)
}

// moduleRoot returns the repository root (tests run in the package directory).
func moduleRoot(t *testing.T) string { return reftest.ModuleRoot(t) }

// referenceDir returns ../shared/reference beside the checkout, which holds Karmada's CRDs and
// samples; without it the test is skipped (and fails under CI).
func referenceDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(reftest.Shared(t, "reference", "karmada-crds"))
}
