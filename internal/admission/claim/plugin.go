// Package claim is an admission plugin of the control plane's
// kube-apiserver that claims a new resource template for its
// PropagationPolicy or ClusterPropagationPolicy while it is being created:
// the template is stored with Karmada's claim metadata already on it (the
// propagationpolicy.karmada.io/permanent-id label and the
// propagationpolicy.karmada.io/name and /namespace annotations, or their
// clusterpropagationpolicy forms), exactly as the detector would write them.
// That saves the detector's claim patch: one API write fewer on every new
// template's way to its member clusters, and for a Deployment no second
// generation.
//
// The detector stays the authority. The plugin only ever adds a claim to a
// namespaced template that has none, using the same matching rules
// (policymatch.BestMatch) over its own informer view of the policies; when it
// cannot decide (policies not loaded yet, a policy without its permanent id,
// a generated name, a kind served in a version other than the preferred one)
// it leaves the template alone and the detector claims it as before. It never
// rejects a request. Like Karmada's webhook, it also gives a new
// PropagationPolicy or ClusterPropagationPolicy its permanent-id label.
package claim

import (
	"context"
	"io"
	"maps"
	"sync"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

// PluginName is the name to enable with kube-apiserver's
// --enable-admission-plugins.
const PluginName = "FlotillaPolicyClaim"

var (
	ppResource  = policyv1alpha1.SchemeGroupVersion.WithResource("propagationpolicies")
	cppResource = policyv1alpha1.SchemeGroupVersion.WithResource("clusterpropagationpolicies")
)

// permanentIDLabels are the policy resources born with a permanent-id label.
var permanentIDLabels = map[schema.GroupVersionResource]string{
	ppResource:  policymatch.PropagationPolicyPermanentIDLabel,
	cppResource: policymatch.ClusterPropagationPolicyPermanentIDLabel,
}

// Register adds the plugin to an API server's admission plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(PluginName, func(io.Reader) (admission.Interface, error) { return New(), nil })
}

// New returns the plugin, for kube-apiserver (Register) or, through
// webhook.Handler, as a webhook of `flotilla webhook`, where the
// caller gives it a dynamic client and a REST mapper (SetDynamicClient,
// SetRESTMapper) and a stop channel (SetDrainedNotification).
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create)}
}

// Plugin is the admission plugin; see the package documentation.
type Plugin struct {
	*admission.Handler
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	stop    <-chan struct{}

	start    sync.Once
	pps, cps cache.SharedIndexInformer
}

var _ admission.MutationInterface = &Plugin{}

// SetDynamicClient receives the API server's loopback client, used to watch policies.
func (p *Plugin) SetDynamicClient(c dynamic.Interface) { p.dynamic = c }

// SetRESTMapper receives the API server's REST mapper, used to find a kind's preferred version.
func (p *Plugin) SetRESTMapper(m meta.RESTMapper) { p.mapper = m }

// SetDrainedNotification receives the channel closed when the server shuts down.
func (p *Plugin) SetDrainedNotification(c <-chan struct{}) { p.stop = c }

// ValidateInitialization fails when the server did not provide what the plugin needs.
func (p *Plugin) ValidateInitialization() error {
	if p.dynamic == nil || p.mapper == nil {
		return errMissing
	}
	return nil
}

type initError string

func (e initError) Error() string { return string(e) }

const errMissing = initError(PluginName + " needs a dynamic client and a REST mapper")

// informers starts watching policies on first use (the server must be
// serving by then) and reports whether both caches are loaded.
func (p *Plugin) informers() bool {
	p.start.Do(func() {
		f := dynamicinformer.NewDynamicSharedInformerFactory(p.dynamic, 0)
		p.pps = f.ForResource(ppResource).Informer()
		p.cps = f.ForResource(cppResource).Informer()
		_ = p.pps.SetTransform(toTyped[policyv1alpha1.PropagationPolicy])
		_ = p.cps.SetTransform(toTyped[policyv1alpha1.ClusterPropagationPolicy])
		stop := p.stop
		if stop == nil {
			stop = make(chan struct{})
		}
		f.Start(stop)
	})
	return p.pps.HasSynced() && p.cps.HasSynced()
}

// toTyped converts a watched policy once, when it enters the cache.
func toTyped[T any](obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Admit adds the claim of the policy that selects a new namespaced template.
// It never returns an error: a template it does not claim is claimed by the
// detector afterwards.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Create || a.GetSubresource() != "" {
		return nil
	}
	synced := p.informers() // started by the first create the server admits
	if label, ok := permanentIDLabels[a.GetResource()]; ok {
		// As Karmada's webhook does: a policy is born with its permanent
		// id, so the templates created right after it are claimed here too.
		if obj, err := meta.Accessor(a.GetObject()); err == nil && obj.GetLabels()[label] == "" {
			obj.SetLabels(with(obj.GetLabels(), map[string]string{label: uuid.NewString()}))
		}
		return nil
	}
	ns := a.GetNamespace()
	if ns == "" ||
		template.SkipNamespace(ns) || !template.IsTemplateResource(a.GetResource()) {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil || obj.GetName() == "" || claimed(obj) {
		return nil
	}
	gvk := a.GetKind()
	if m, err := p.mapper.RESTMapping(gvk.GroupKind()); err != nil || m.GroupVersionKind.Version != gvk.Version {
		// The detector sees every template in its kind's preferred
		// version; selectors are matched against that apiVersion.
		return nil
	}
	if !synced {
		return nil
	}
	c, ok := policymatch.BestMatch(sketch(gvk, ns, obj), policies[policyv1alpha1.PropagationPolicy](p.pps, ns), policies[policyv1alpha1.ClusterPropagationPolicy](p.cps, ""))
	if !ok || c.PermanentID == "" {
		return nil // the detector gives the policy its permanent id first
	}
	obj.SetLabels(with(obj.GetLabels(), c.TemplateLabels()))
	obj.SetAnnotations(with(obj.GetAnnotations(), c.TemplateAnnotations()))
	return nil
}

// with returns m (a new map if m is nil) with the entries of add set.
func with(m, add map[string]string) map[string]string {
	if m == nil {
		m = make(map[string]string, len(add))
	}
	maps.Copy(m, add)
	return m
}

// claimed reports a template that already carries some policy's claim.
func claimed(obj metav1.Object) bool {
	l, a := obj.GetLabels(), obj.GetAnnotations()
	return l[policymatch.PropagationPolicyPermanentIDLabel] != "" || l[policymatch.ClusterPropagationPolicyPermanentIDLabel] != "" ||
		a[policymatch.PropagationPolicyNameAnnotation] != "" || a[policymatch.ClusterPropagationPolicyNameAnnotation] != ""
}

// sketch is what policy matching reads of a template: its apiVersion, kind,
// namespace, name and labels.
func sketch(gvk schema.GroupVersionKind, ns string, obj metav1.Object) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(obj.GetName())
	u.SetLabels(obj.GetLabels())
	return u
}

// policies lists the cached policies of one kind, in ns ("" for all).
func policies[T any](inf cache.SharedIndexInformer, ns string) []*T {
	items := inf.GetStore().List()
	if ns != "" {
		var err error
		if items, err = inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns); err != nil {
			return nil
		}
	}
	out := make([]*T, 0, len(items))
	for _, o := range items {
		if p, ok := o.(*T); ok {
			out = append(out, p)
		}
	}
	return out
}
