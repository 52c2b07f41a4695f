// Package api is the root of Flotilla's Karmada-compatible API types. It holds no code of its
// own: the go:generate directives below regenerate, from the types under api/<group>/<version>,
//
//   - the deepcopy methods (zz_generated.deepcopy.go in every type package), and
//   - the CustomResourceDefinition YAML in api/crds/bases,
//
// and copy the multicluster.x-k8s.io ServiceExport/ServiceImport CRDs from the pinned
// sigs.k8s.io/mcs-api release into api/crds/bases. Run `go generate ./api/...` from the
// repository root.
package api

//go:generate go tool controller-gen object paths=./...
//go:generate go tool controller-gen crd:crdVersions=v1 paths=./... output:crd:artifacts:config=crds/bases
//go:generate go run ./crds/mcsapi_copy.go -version v0.4.1 -out crds/bases
