// Package defaulting writes, when Karmada objects are applied, the defaults that the
// CRDs' structural defaults cannot express, so that `kubectl get -o yaml` shows them as it
// shows an HPA's. A FederatedHPA's: an empty metrics list becomes 80% CPU, and
// a behavior's missing rules and fields take Kubernetes' HPA defaults
// (federatedhpa.SetDefaults; a behavior without selectPolicy gets Max, Karmada issue 4085);
// minReplicas 1 and absent metrics are the CRD's own defaults. A PropagationPolicy's or
// ClusterPropagationPolicy's: one that selects a ServiceImport gets propagateDeps true, as
// Karmada's policy webhook sets it. A Cluster's: no spec.resourceModels become Karmada's nine
// default grades, and models given are sorted by grade with the first mins at 0 and the last
// maxes at math.MaxInt64 (CustomizedClusterResourceModeling; Karmada's API server does this).
//
// The same defaulting runs in two places:
//   - as the mutating admission plugin PluginName inside the control plane's kube-apiserver
//     that Flotilla embeds (Register), and
//   - as a mutating admission webhook (Handler) for a control plane that Flotilla does not
//     embed.
//
// Only the spec fields a default changes are written; every other field stays as it was sent.
// Nothing is ever refused here: an object the typed API cannot hold is left to validation.
package defaulting

import (
	"context"
	"io"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// PluginName is the name to enable with kube-apiserver's --enable-admission-plugins.
const PluginName = "FlotillaDefaulting"

// Kind is one kind whose objects are defaulted.
type Kind struct {
	// Resource is the kind's group and resource (any version).
	Resource schema.GroupResource
	// New returns an empty object of the kind.
	New func() client.Object
	// Default fills in the defaults of one object of the kind (made by New), in place.
	Default func(client.Object)
}

// Kinds are the defaulted kinds.
var Kinds = []Kind{
	{Resource: autoscalingv1alpha1.SchemeGroupVersion.WithResource("federatedhpas").GroupResource(),
		New:     func() client.Object { return &autoscalingv1alpha1.FederatedHPA{} },
		Default: func(o client.Object) { hpa.SetDefaults(o.(*autoscalingv1alpha1.FederatedHPA)) }},
	{Resource: clusterv1alpha1.SchemeGroupVersion.WithResource("clusters").GroupResource(),
		New: func() client.Object { return &clusterv1alpha1.Cluster{} },
		Default: func(o client.Object) {
			clusterv1alpha1.DefaultClusterResourceModels(&o.(*clusterv1alpha1.Cluster).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies").GroupResource(),
		New:     func() client.Object { return &policyv1alpha1.PropagationPolicy{} },
		Default: func(o client.Object) { serviceImportDeps(&o.(*policyv1alpha1.PropagationPolicy).Spec) }},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("clusterpropagationpolicies").GroupResource(),
		New:     func() client.Object { return &policyv1alpha1.ClusterPropagationPolicy{} },
		Default: func(o client.Object) { serviceImportDeps(&o.(*policyv1alpha1.ClusterPropagationPolicy).Spec) }},
}

// serviceImportDeps turns propagateDeps on for a policy that selects a ServiceImport, as
// Karmada's policy webhook does: the derived Service and the imported EndpointSlices are
// the ServiceImport's dependencies, and reach the consumer clusters only with it.
func serviceImportDeps(spec *policyv1alpha1.PropagationSpec) {
	for _, rs := range spec.ResourceSelectors {
		if schema.FromAPIVersionAndKind(rs.APIVersion, rs.Kind).GroupKind() == mcs.ServiceImportGVK.GroupKind() {
			spec.PropagateDeps = true
			return
		}
	}
}

// kindOf returns the defaulted kind of resource gr, if any.
func kindOf(gr schema.GroupResource) (Kind, bool) {
	for _, k := range Kinds {
		if k.Resource == gr {
			return k, true
		}
	}
	return Kind{}, false
}

// Resources lists the resources Default handles, for a webhook configuration's rules.
func Resources() []schema.GroupResource {
	out := make([]schema.GroupResource, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, k.Resource)
	}
	return out
}

// Operation is one JSON patch (RFC 6902) operation: an "add" of Value at Path, which sets a
// member whether or not it exists.
type Operation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Default writes the defaults of resource gr into obj, a created or updated object's JSON
// map, in place, and returns the same change as JSON patch operations, one per spec field it
// set. It returns nil for a resource it does not handle, an object without a spec, and one
// the typed API cannot hold.
func Default(gr schema.GroupResource, obj map[string]any) []Operation {
	k, ok := kindOf(gr)
	if !ok || obj == nil {
		return nil
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return nil
	}
	typed := k.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		return nil
	}
	before, err := specOf(typed)
	if err != nil {
		return nil
	}
	k.Default(typed)
	after, err := specOf(typed)
	if err != nil {
		return nil
	}
	var ops []Operation
	for _, field := range slices.Sorted(maps.Keys(after)) {
		if equality.Semantic.DeepEqual(before[field], after[field]) {
			continue
		}
		spec[field] = after[field]
		ops = append(ops, Operation{Op: "add", Path: "/spec/" + field, Value: after[field]})
	}
	return ops
}

// specOf returns the spec of a typed object as a JSON map.
func specOf(obj client.Object) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	spec, _ := m["spec"].(map[string]any)
	return spec, nil
}

// Register adds the plugin to an API server's admission plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// New returns the plugin, for kube-apiserver (Register) or, through
// webhook.Handler, as a webhook of `flotilla webhook`.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Plugin is the admission plugin; see the package documentation.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = &Plugin{}

// Admit applies Default to a created or updated object. Status and other subresource writes
// are left alone: they cannot change the spec.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if _, handled := kindOf(gr); !handled || a.GetSubresource() != "" {
		return nil // every write passes here: decide before touching the object
	}
	// Custom resources reach admission as unstructured objects.
	if u, ok := a.GetObject().(*unstructured.Unstructured); ok {
		Default(gr, u.Object)
	}
	return nil
}
