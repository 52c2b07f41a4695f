package search

import (
	"context"
	"net/url"
	"regexp"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// ValidateResourceRegistry returns what is wrong with a ResourceRegistry, as
// Karmada's karmada-search refuses it: the name, spec.targetCluster (a
// ClusterAffinity, checked as the scheduler compiles it), each selector's
// apiVersion (a group/version whose version is a Kubernetes one: v1,
// v1beta2), kind (required) and namespace (a namespace
// name), and each OpenSearch address (an http or https URL with a host).
func ValidateResourceRegistry(r *searchv1alpha1.ResourceRegistry) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&r.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if _, err := clusteraffinity.Compile("spec.targetCluster", &r.Spec.TargetCluster); err != nil {
		errs = append(errs, field.Invalid(spec.Child("targetCluster"), r.Spec.TargetCluster, err.Error()))
	}
	if len(r.Spec.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(spec.Child("resourceSelectors"), "name at least one kind to cache"))
	}
	for i, s := range r.Spec.ResourceSelectors {
		p := spec.Child("resourceSelectors").Index(i)
		if s.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), `for example "apps/v1" or "v1"`))
		} else if gv, err := schema.ParseGroupVersion(s.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion, err.Error()))
		} else if !kubeVersion.MatchString(gv.Version) {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion,
				`must be group/version, as in a manifest: "apps/v1", or "v1" for the core group`))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), `for example "Deployment"`))
		}
		if s.Namespace != "" {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(s.Namespace, false) {
				errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
			}
		}
	}
	if b := r.Spec.BackendStore; b != nil && b.OpenSearch != nil {
		p := spec.Child("backendStore", "openSearch", "addresses")
		for i, a := range b.OpenSearch.Addresses {
			u, err := url.Parse(a)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, field.Invalid(p.Index(i), a, "must be an http or https URL with a host"))
			}
		}
	}
	return errs
}

// kubeVersion is the shape of a Kubernetes API version: v1, v2beta1, v1alpha3.
var kubeVersion = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// registryStrategy is how ResourceRegistries are created, updated and deleted:
// cluster-scoped, spec and status written separately (the status subresource),
// generation bumped on a spec change.
type registryStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	status bool
}

func (registryStrategy) NamespaceScoped() bool                         { return false }
func (registryStrategy) AllowCreateOnUpdate(context.Context) bool      { return false }
func (registryStrategy) AllowUnconditionalUpdate(context.Context) bool { return true }
func (registryStrategy) Canonicalize(runtime.Object)                   {}

func (s registryStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	field := "status"
	if s.status {
		field = "spec"
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(searchv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie(field)),
	}
}

func (registryStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r := obj.(*searchv1alpha1.ResourceRegistry)
	r.Status = searchv1alpha1.ResourceRegistryStatus{}
	r.Generation = 1
}

func (s registryStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*searchv1alpha1.ResourceRegistry), old.(*searchv1alpha1.ResourceRegistry)
	if s.status {
		n.Spec = o.Spec
		n.Labels, n.Annotations = o.Labels, o.Annotations
		return
	}
	n.Status = o.Status
	if !apiequality.Semantic.DeepEqual(n.Spec, o.Spec) {
		n.Generation = o.Generation + 1
	}
}

func (registryStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateResourceRegistry(obj.(*searchv1alpha1.ResourceRegistry))
}

func (registryStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*searchv1alpha1.ResourceRegistry), old.(*searchv1alpha1.ResourceRegistry)
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, field.NewPath("metadata"))
	return append(errs, ValidateResourceRegistry(n)...)
}

func (registryStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (registryStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// registryStorage is the REST storage of resourceregistries and
// resourceregistries/status, kept in etcd.
type registryStorage struct {
	registry *genericregistry.Store
	status   *statusREST
}

func newRegistryStorage(opts generic.RESTOptionsGetter) (*registryStorage, error) {
	strategy := registryStrategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &searchv1alpha1.ResourceRegistry{} },
		NewListFunc:               func() runtime.Object { return &searchv1alpha1.ResourceRegistryList{} },
		DefaultQualifiedResource:  searchv1alpha1.Resource(searchv1alpha1.ResourcePluralResourceRegistry),
		SingularQualifiedResource: searchv1alpha1.Resource(searchv1alpha1.ResourceSingularResourceRegistry),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ResetFieldsStrategy:       strategy,
		TableConvertor:            registryTable{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: opts}); err != nil {
		return nil, err
	}
	statusStore := *store
	statusStrategy := strategy
	statusStrategy.status = true
	statusStore.UpdateStrategy = statusStrategy
	statusStore.ResetFieldsStrategy = statusStrategy
	return &registryStorage{registry: store, status: &statusREST{store: &statusStore}}, nil
}

// statusREST serves resourceregistries/status: get and update only.
type statusREST struct{ store *genericregistry.Store }

var (
	_ rest.Getter              = &statusREST{}
	_ rest.Updater             = &statusREST{}
	_ rest.ResetFieldsStrategy = &statusREST{}
)

func (r *statusREST) New() runtime.Object { return &searchv1alpha1.ResourceRegistry{} }
func (r *statusREST) Destroy()            {}

func (r *statusREST) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, opts)
}

func (r *statusREST) Update(ctx context.Context, name string, obj rest.UpdatedObjectInfo, create rest.ValidateObjectFunc, update rest.ValidateObjectUpdateFunc, _ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// A subresource never creates its object.
	return r.store.Update(ctx, name, obj, create, update, false, opts)
}

func (r *statusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
