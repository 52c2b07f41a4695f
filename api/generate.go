// Package api is the root of Flotilla's Karmada-compatible API types. It holds no code of its
// own: the go:generate directives below regenerate, from the types under api/<group>/<version>,
//
//   - the deepcopy methods (zz_generated.deepcopy.go in every type package), and
//   - the CustomResourceDefinition YAML in api/crds/bases,
//   - the OpenAPI definitions the search server serves (search.karmada.io, and the policy and
//     cluster types its ResourceRegistry refers to) in api/search/v1alpha1,
//
// and copy the multicluster.x-k8s.io ServiceExport/ServiceImport CRDs from the pinned
// sigs.k8s.io/mcs-api release into api/crds/bases. Run `go generate ./api/...` from the
// repository root.
package api

//go:generate go tool controller-gen object paths=./...
//go:generate go tool controller-gen crd:crdVersions=v1 paths=./... output:crd:artifacts:config=crds/bases
//go:generate go run k8s.io/kube-openapi/cmd/openapi-gen --output-dir ./search/v1alpha1 --output-pkg github.com/flotilla-io/flotilla/api/search/v1alpha1 --output-file zz_generated.openapi.go --go-header-file /dev/null -r /dev/null github.com/flotilla-io/flotilla/api/search/v1alpha1 github.com/flotilla-io/flotilla/api/policy/v1alpha1 github.com/flotilla-io/flotilla/api/cluster/v1alpha1
//go:generate go run ./crds/mcsapi_copy.go -version v0.4.1 -out crds/bases
