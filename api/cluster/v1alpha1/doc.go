// OpenAPI definitions of this package's types are generated for the search server
// (api/search/v1alpha1/zz_generated.openapi.go), which serves them.
//
// +k8s:openapi-gen=true

package v1alpha1
