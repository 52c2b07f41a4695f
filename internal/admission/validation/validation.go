// Package validation refuses, when they are applied, the Karmada
// objects whose mistakes the CRDs' CEL rules cannot see: a FederatedHPA's
// spec as the Kubernetes HPA's validation checks it, a
// CronFederatedHPA's cron schedules and IANA time zones, the cluster
// fieldSelectors of every policy (keys provider, region and zone,
// operators In and NotIn: CEL could, but not within the API server's cost
// budget for nested lists), the patch values, label and annotation syntax
// of OverridePolicies and ClusterOverridePolicies, the label selectors,
// label keys and taints of the policies (PropagationPolicies,
// OverridePolicies, ClusterTaintPolicies and their cluster-scoped twins),
// the resource names, quantities and cluster names of
// FederatedResourceQuotas,
// the endpoints, proxy, topology values and taints of Clusters, the
// rules, backends and TLS of MultiClusterIngresses (as an Ingress's), the
// condition types of Remedies (those some component writes to a Cluster), the
// Lua scripts of ResourceInterpreterCustomizations and the endpoints, names
// and context versions of ResourceInterpreterWebhookConfigurations. These
// are the checks of Karmada's validating webhooks and API server that CEL
// cannot express.
//
// The same check runs in two places:
//   - as the admission plugin PluginName inside the control plane's
//     kube-apiserver that Flotilla embeds (Register), and
//   - as a validating admission webhook (Handler) for a control plane that
//     Flotilla does not embed.
//
// A refusal is a 422 Invalid error whose causes name every bad field, such
// as spec.rules[0].schedule, exactly as a CEL refusal does. In the API
// server the plugin also looks in the mutating phase, before the CRD's
// schema and CEL rules run, and a refusal there adds what those would find
// (Admit): one answer names every error of the object.
package validation

import (
	"context"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// PluginName is the name to enable with kube-apiserver's
// --enable-admission-plugins.
const PluginName = "FlotillaValidation"

// Kind is one kind whose objects are checked.
type Kind struct {
	// Resource is the kind's group and resource (any version).
	Resource schema.GroupResource
	// New returns an empty object of the kind.
	New func() client.Object
	// Check validates one object of the kind (made by New); an empty
	// list means it is valid. Errors carry field paths such as
	// spec.rules[0].schedule.
	Check func(client.Object) field.ErrorList
}

// Kinds are the checked kinds. The admission plugin and the webhook refuse
// their invalid objects; the validation controller reports them as events
// on a control plane that runs neither.
var Kinds = []Kind{
	{Resource: autoscalingv1alpha1.SchemeGroupVersion.WithResource("federatedhpas").GroupResource(),
		New: func() client.Object { return &autoscalingv1alpha1.FederatedHPA{} },
		Check: func(o client.Object) field.ErrorList {
			return hpa.Validate(o.(*autoscalingv1alpha1.FederatedHPA))
		}},
	{Resource: autoscalingv1alpha1.SchemeGroupVersion.WithResource("cronfederatedhpas").GroupResource(),
		New: func() client.Object { return &autoscalingv1alpha1.CronFederatedHPA{} },
		Check: func(o client.Object) field.ErrorList {
			return autoscalingv1alpha1.ValidateCronFederatedHPA(o.(*autoscalingv1alpha1.CronFederatedHPA))
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.PropagationPolicy{} },
		Check: func(o client.Object) field.ErrorList {
			return policyv1alpha1.ValidatePropagationSpec(&o.(*policyv1alpha1.PropagationPolicy).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("clusterpropagationpolicies").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.ClusterPropagationPolicy{} },
		Check: func(o client.Object) field.ErrorList {
			return policyv1alpha1.ValidatePropagationSpec(&o.(*policyv1alpha1.ClusterPropagationPolicy).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("overridepolicies").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.OverridePolicy{} },
		Check: func(o client.Object) field.ErrorList {
			return policyv1alpha1.ValidateOverrideSpec(&o.(*policyv1alpha1.OverridePolicy).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("clusteroverridepolicies").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.ClusterOverridePolicy{} },
		Check: func(o client.Object) field.ErrorList {
			return policyv1alpha1.ValidateOverrideSpec(&o.(*policyv1alpha1.ClusterOverridePolicy).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("clustertaintpolicies").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.ClusterTaintPolicy{} },
		Check: func(o client.Object) field.ErrorList {
			return policyv1alpha1.ValidateClusterTaintPolicySpec(&o.(*policyv1alpha1.ClusterTaintPolicy).Spec)
		}},
	{Resource: policyv1alpha1.SchemeGroupVersion.WithResource("federatedresourcequotas").GroupResource(),
		New: func() client.Object { return &policyv1alpha1.FederatedResourceQuota{} },
		Check: func(o client.Object) field.ErrorList {
			return validateFederatedResourceQuota(o.(*policyv1alpha1.FederatedResourceQuota))
		}},
	{Resource: clusterv1alpha1.SchemeGroupVersion.WithResource("clusters").GroupResource(),
		New: func() client.Object { return &clusterv1alpha1.Cluster{} },
		Check: func(o client.Object) field.ErrorList {
			return clusterv1alpha1.ValidateClusterSpec(&o.(*clusterv1alpha1.Cluster).Spec)
		}},
	{Resource: networkingv1alpha1.SchemeGroupVersion.WithResource("multiclusteringresses").GroupResource(),
		New: func() client.Object { return &networkingv1alpha1.MultiClusterIngress{} },
		Check: func(o client.Object) field.ErrorList {
			return validateMultiClusterIngress(o.(*networkingv1alpha1.MultiClusterIngress))
		}},
	{Resource: remedyv1alpha1.SchemeGroupVersion.WithResource("remedies").GroupResource(),
		New: func() client.Object { return &remedyv1alpha1.Remedy{} },
		Check: func(o client.Object) field.ErrorList {
			return validateRemedy(o.(*remedyv1alpha1.Remedy))
		}},
	{Resource: configv1alpha1.SchemeGroupVersion.WithResource("resourceinterpretercustomizations").GroupResource(),
		New: func() client.Object { return &configv1alpha1.ResourceInterpreterCustomization{} },
		Check: func(o client.Object) field.ErrorList {
			return interpreter.ValidateCustomization(o.(*configv1alpha1.ResourceInterpreterCustomization))
		}},
	{Resource: configv1alpha1.SchemeGroupVersion.WithResource("resourceinterpreterwebhookconfigurations").GroupResource(),
		New: func() client.Object { return &configv1alpha1.ResourceInterpreterWebhookConfiguration{} },
		Check: func(o client.Object) field.ErrorList {
			return interpreter.ValidateWebhookConfiguration(o.(*configv1alpha1.ResourceInterpreterWebhookConfiguration))
		}},
}

// kindOf returns the checked kind of resource gr, if any.
func kindOf(gr schema.GroupResource) (Kind, bool) {
	for _, k := range Kinds {
		if k.Resource == gr {
			return k, true
		}
	}
	return Kind{}, false
}

// Resources lists the resources Validate checks, for a webhook
// configuration's rules.
func Resources() []schema.GroupResource {
	out := make([]schema.GroupResource, 0, len(Kinds))
	for _, k := range Kinds {
		out = append(out, k.Resource)
	}
	return out
}

// Validate checks a created or updated object of resource gr. It returns nil
// for a valid object and for a resource it does not check, and otherwise an
// Invalid (422) error naming the kind, the object and every bad field.
func Validate(gr schema.GroupResource, kind schema.GroupKind, name string, obj map[string]any) error {
	errs := check(gr, obj)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(kind, name, errs)
}

// check is Validate's list of errors; empty when obj is valid or gr is not
// checked.
func check(gr schema.GroupResource, obj map[string]any) field.ErrorList {
	k, ok := kindOf(gr)
	if !ok || obj == nil {
		return nil
	}
	typed := k.New()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		// The API server decoded it already; an object the typed API cannot
		// hold is refused as such.
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	return k.Check(typed)
}

// Register adds the plugin to an API server's admission plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// New returns the plugin, for kube-apiserver (Register) or, through
// webhook.Handler, as a webhook of `flotilla webhook`.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
}

// Plugin is the admission plugin; see the package documentation.
type Plugin struct {
	*admission.Handler
}

var (
	_ admission.ValidationInterface = &Plugin{}
	_ admission.MutationInterface   = &Plugin{}
)

// Admit runs the plugin's checks before the API server's own validation of
// the object (its CRD's OpenAPI schema and CEL rules), so that one answer
// names every error: when the plugin finds any, the refusal adds those the
// API server would have found (schemaErrors). It changes nothing. An
// object the plugin finds valid goes on to the API server's validation,
// whose refusal is then the answer, as before.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() == admission.Delete || a.GetSubresource() != "" {
		return nil
	}
	gr := a.GetResource().GroupResource()
	if _, checked := kindOf(gr); !checked {
		return nil
	}
	obj, old := asMap(a.GetObject()), asMap(a.GetOldObject())
	errs := check(gr, obj)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), mergeErrors(schemaErrors(ctx, a.GetResource(), obj, old), errs))
}

// asMap is obj's content as unstructured data; nil for nil.
func asMap(obj runtime.Object) map[string]any {
	switch o := obj.(type) {
	case nil:
		return nil
	case *unstructured.Unstructured:
		return o.Object
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return m
}

// mergeErrors is first then second, without an error second repeats
// (same field and message).
func mergeErrors(first, second field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	out := field.ErrorList{}
	for _, list := range []field.ErrorList{first, second} {
		for _, e := range list {
			if k := e.Field + "\x00" + e.Error(); !seen[k] {
				seen[k] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// Validate refuses a create or update that fails Validate, and the delete
// of a protected object (ProtectedFromDeletion). Status and other
// subresource writes are not checked: they cannot change the spec.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() == admission.Delete {
		return ProtectedFromDeletion(a.GetResource().GroupResource(), a.GetName(), a.GetOldObject())
	}
	gr := a.GetResource().GroupResource()
	if _, checked := kindOf(gr); !checked || a.GetSubresource() != "" {
		return nil // every write passes here: decide before touching the object
	}
	u, ok := a.GetObject().(*unstructured.Unstructured)
	if !ok {
		if a.GetObject() == nil {
			return nil
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a.GetObject())
		if err != nil {
			return nil
		}
		u = &unstructured.Unstructured{Object: m}
	}
	return Validate(gr, a.GetKind().GroupKind(), a.GetName(), u.Object)
}

// ProtectedFromDeletion refuses the delete of obj (of resource gr, named
// name; nil passes) when it carries Karmada's deletion-protection label
// resourcetemplate.karmada.io/deletion-protected with the value Always: a
// 403 Forbidden error with Karmada's message, naming the label to remove.
func ProtectedFromDeletion(gr schema.GroupResource, name string, obj runtime.Object) error {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetLabels()[workv1alpha2.DeletionProtectionLabelKey] != workv1alpha2.DeletionProtectionAlways {
		return nil
	}
	target := gr.String()
	if ns := m.GetNamespace(); ns != "" {
		target += " -n " + ns
	}
	return apierrors.NewForbidden(gr, name, fmt.Errorf("This resource is protected, please make sure to remove the label: %s (kubectl label %s %s %s-)", //nolint:staticcheck // Karmada's message, capitalised as Karmada's
		workv1alpha2.DeletionProtectionLabelKey, target, name, workv1alpha2.DeletionProtectionLabelKey))
}
