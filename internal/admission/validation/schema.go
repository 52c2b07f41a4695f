package validation

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/flotilla-io/flotilla/api/crds"
)

// crdSchema is one served version of a Karmada CRD, ready to validate an
// object as the API server does: its OpenAPI schema and its CEL rules.
type crdSchema struct {
	openAPI apiservervalidation.SchemaValidator
	cel     *cel.Validator
	s       *structuralschema.Structural
}

// schemas holds the embedded CRDs' schemas by group, resource and
// version, built once.
var schemas = sync.OnceValues(func() (map[schema.GroupVersionResource]*crdSchema, error) {
	all, err := crds.All()
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionResource]*crdSchema{}
	for _, crd := range all {
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, fmt.Errorf("convert the schema of %s %s: %w", crd.Name, v.Name, err)
			}
			s, err := structuralschema.NewStructural(internal)
			if err != nil {
				return nil, fmt.Errorf("structural schema of %s %s: %w", crd.Name, v.Name, err)
			}
			openAPI, _, err := apiservervalidation.NewSchemaValidator(internal)
			if err != nil {
				return nil, fmt.Errorf("schema validator of %s %s: %w", crd.Name, v.Name, err)
			}
			gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
			out[gvr] = &crdSchema{openAPI: openAPI, cel: cel.NewValidator(s, true, celconfig.PerCallLimit), s: s}
		}
	}
	return out, nil
})

// schemaErrors are the errors the API server's own validation of the CRD
// would find in obj (its OpenAPI schema, then its CEL rules, old being
// the object before an update or nil), for a resource whose CRD Flotilla
// embeds; nil otherwise. Checked before those checks run, they let one
// answer carry both the API server's errors and the plugin's.
func schemaErrors(ctx context.Context, gvr schema.GroupVersionResource, obj, old map[string]any) field.ErrorList {
	all, err := schemas()
	if err != nil {
		return nil
	}
	cs, ok := all[gvr]
	if !ok {
		return nil
	}
	var errs field.ErrorList
	if old == nil {
		errs = apiservervalidation.ValidateCustomResource(nil, obj, cs.openAPI)
	} else {
		errs = apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, cs.openAPI)
	}
	if cs.cel != nil {
		var oldObj any
		if old != nil {
			oldObj = old
		}
		celErrs, _ := cs.cel.Validate(ctx, nil, cs.s, obj, oldObj, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}
