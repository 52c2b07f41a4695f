package controlplane

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/flotilla-io/flotilla/api/crds"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/admission/defaulting"
	"github.com/flotilla-io/flotilla/internal/admission/validation"
	"github.com/flotilla-io/flotilla/internal/member/register"
)

// FieldManager owns, for server-side apply, what Install writes.
const FieldManager = "flotilla-install"

// Components are Flotilla's control-plane components that get their own
// identity and RBAC from Install: ClusterRole and ClusterRoleBinding
// "flotilla:<component>", bound to the ServiceAccount
// karmada-system/flotilla-<component> (in a host cluster) and to the user
// "system:flotilla:<component>" (a client certificate with that common name,
// out of cluster).
var Components = []string{"controller-manager", "scheduler", "webhook", "metrics-adapter"}

// SearchComponent is `flotilla search` (karmada-search): install writes its
// RBAC as for Components, and the Helm chart deploys it (search.enabled)
// with a kubeconfig for its user, but it is listed apart from Components.
const SearchComponent = "search"

// Webhook paths `flotilla webhook` serves, one per admission plugin.
const (
	ValidatePath       = "/validate"
	MutateDefaultsPath = "/mutate-defaults"
	MutateClaimPath    = "/mutate-claim"
	// MutateValidatePath is FlotillaValidation in the mutating phase, before the API
	// server's schema and CEL checks, so that one refusal names every error.
	MutateValidatePath = "/mutate-validate"
)

// WebhookConfigurationName names both the ValidatingWebhookConfiguration and
// the MutatingWebhookConfiguration Install writes.
const WebhookConfigurationName = "flotilla"

// InstallOptions says what Install puts on a control plane besides the CRDs,
// the reserved namespaces and the components' RBAC.
type InstallOptions struct {
	// Server is the control plane's URL as members reach it, and CAPEM its CA
	// (PEM). With both, Install also prepares Pull-mode registration:
	// kube-public/cluster-info and the bootstrap RBAC
	// (bootstrap.ControlPlaneObjects).
	Server string
	CAPEM  []byte
	// Webhook, when set, registers `flotilla webhook` as the API server's
	// admission webhooks: the checks CEL cannot express, the defaults CRDs
	// cannot express and the template claim. Leave it nil for an API server
	// with Flotilla's admission plugins built in (flotilla up).
	Webhook *WebhookTarget
	// MetricsAdapter, when set, registers `flotilla metrics-adapter` as the
	// control plane's metrics.k8s.io, custom.metrics.k8s.io and
	// external.metrics.k8s.io APIServices.
	MetricsAdapter *ServiceTarget
	// Search, when set, registers `flotilla search` (Karmada's karmada-search)
	// as the control plane's search.karmada.io/v1alpha1 APIService.
	Search *ServiceTarget
}

// WebhookTarget is where the API server reaches `flotilla webhook`: a URL
// (https://host:port, for a webhook outside the cluster) or a Service, and
// the CA bundle (PEM) that verifies its serving certificate.
type WebhookTarget struct {
	URL      string
	Service  *ServiceTarget
	CABundle []byte
}

// ServiceTarget is a Service of the control plane, port Port. With
// ExternalName set (a host name or IP), Install also writes the Service, of
// type ExternalName, so that an API server without a cluster network behind
// it reaches a process on that host.
type ServiceTarget struct {
	Namespace, Name string
	Port            int32
	ExternalName    string
	// CABundle (PEM) verifies the server's certificate; empty skips the
	// verification (the APIService's insecureSkipTLSVerify).
	CABundle []byte
}

// ParseServiceTarget reads "namespace/name:port". Errors say what the value
// should look like.
func ParseServiceTarget(s string) (*ServiceTarget, error) {
	nsName, port, ok := strings.Cut(s, ":")
	ns, name, ok2 := strings.Cut(nsName, "/")
	p, err := strconv.ParseInt(port, 10, 32)
	if !ok || !ok2 || ns == "" || name == "" || err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("service %q: want namespace/name:port, e.g. karmada-system/flotilla-webhook:443", s)
	}
	return &ServiceTarget{Namespace: ns, Name: name, Port: int32(p)}, nil
}

// Validate reports an incomplete or contradictory option set.
func (o InstallOptions) Validate() error {
	if (o.Server == "") != (len(o.CAPEM) == 0) {
		return fmt.Errorf("the server URL and its CA go together (Pull-mode registration needs both)")
	}
	if w := o.Webhook; w != nil {
		if (w.URL == "") == (w.Service == nil) {
			return fmt.Errorf("the webhook needs either a URL or a Service, not both")
		}
		if w.URL != "" {
			u, err := url.Parse(w.URL)
			if err != nil || u.Scheme != "https" || u.Host == "" {
				return fmt.Errorf("webhook URL %q: want https://host:port", w.URL)
			}
		}
		if len(w.CABundle) == 0 {
			return fmt.Errorf("the webhook needs the CA bundle that verifies its certificate")
		}
	}
	return nil
}

// Objects returns everything Install writes besides the CRDs (crds.All), in
// apply order: namespaces first, then RBAC, then the registrations. Each has
// its TypeMeta set. Errors come from the Pull-registration objects (a bad CA).
func Objects(o InstallOptions) ([]client.Object, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var out []client.Object
	for _, ns := range Namespaces {
		out = append(out, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	out = append(out, componentRBAC()...)
	if o.Server != "" {
		reg, err := register.ControlPlaneObjects(o.Server, o.CAPEM)
		if err != nil {
			return nil, err
		}
		out = append(out, reg...)
	}
	if o.Webhook != nil {
		out = append(out, webhookConfigurations(o.Webhook)...)
	}
	if a := o.MetricsAdapter; a != nil {
		if a.ExternalName != "" {
			out = append(out, externalNameService(a))
		}
		for _, api := range MetricsAPIServiceObjects(a.Namespace, a.Name, a.Port, a.CABundle) {
			out = append(out, api)
		}
	}
	if a := o.Search; a != nil {
		if a.ExternalName != "" {
			out = append(out, externalNameService(a))
		}
		out = append(out, SearchAPIServiceObject(a.Namespace, a.Name, a.Port, a.CABundle))
	}
	for _, obj := range out {
		gvk, err := apiutil.GVKForObject(obj, installScheme)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return out, nil
}

// Install prepares the API server cfg reaches as a Flotilla control plane:
// it installs or upgrades every Karmada CRD and waits until each is
// Established, then server-side applies Objects(o) as FieldManager. It is
// idempotent, so it also upgrades. progress, if not nil, is told each step.
// Errors name the object that could not be written.
func Install(ctx context.Context, cfg *rest.Config, o InstallOptions, progress func(string)) error {
	if progress == nil {
		progress = func(string) {}
	}
	all, objs, err := everything(o)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := InstallCRDs(ctx, ext, all); err != nil {
		return err
	}
	progress(fmt.Sprintf("%d CRDs installed and Established", len(all)))
	c, err := client.New(cfg, client.Options{Scheme: installScheme})
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := apply(ctx, c, obj); err != nil {
			return err
		}
	}
	progress(fmt.Sprintf("%d objects applied: namespaces, RBAC and registrations", len(objs)))
	return nil
}

// everything is what Install writes: the CRDs, then Objects(o).
func everything(o InstallOptions) ([]*apiextensionsv1.CustomResourceDefinition, []client.Object, error) {
	objs, err := Objects(o)
	if err != nil {
		return nil, nil, err
	}
	all, err := crds.All()
	return all, objs, err
}

// apply server-side applies obj. A binding whose roleRef changed (it is
// immutable) is deleted and applied again.
func apply(ctx context.Context, c client.Client, obj client.Object) error {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	err := c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership) //nolint:staticcheck // the typed objects above are what apply takes here
	if apierrors.IsInvalid(err) && (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
		if err = c.Delete(ctx, obj); err == nil || apierrors.IsNotFound(err) {
			err = c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership) //nolint:staticcheck
		}
	}
	if err != nil {
		return fmt.Errorf("apply %s %s: %w", kind, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// PrintObjects writes the CRDs and Objects(o) as one YAML stream, in apply
// order: what Install would write.
func PrintObjects(w interface{ Write([]byte) (int, error) }, o InstallOptions) error {
	all, objs, err := everything(o)
	if err != nil {
		return err
	}
	var stream []runtime.Object
	for _, crd := range all {
		c := crd.DeepCopy()
		c.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		stream = append(stream, c)
	}
	for _, obj := range objs {
		stream = append(stream, obj)
	}
	enc := json.NewSerializerWithOptions(json.DefaultMetaFactory, nil, nil, json.SerializerOptions{Yaml: true})
	for _, obj := range stream {
		if _, err := w.Write([]byte("---\n")); err != nil {
			return err
		}
		if err := enc.Encode(obj, w); err != nil {
			return err
		}
	}
	return nil
}

var installScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	_ = apiregv1.AddToScheme(s)
	return s
}()

// ClusterProxyAdmin names the ClusterRole and ClusterRoleBinding that let
// the administrators (AdminUser, and Karmada's system:admin) use every
// Cluster's proxy, as Karmada's installers name them.
const ClusterProxyAdmin = "cluster-proxy-admin"

// AdminUser is the user of the administrator certificate `flotilla up`
// writes (group system:masters).
const AdminUser = "flotilla-admin"

// componentRBAC is each component's ClusterRole and binding (Components).
// The controller manager acts on any kind a template may be, so it may do
// anything, as Karmada's does; the others get what they use.
func componentRBAC() []client.Object {
	read := []string{"get", "list", "watch"}
	write := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	leases := rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: write}
	events := rbacv1.PolicyRule{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}}
	rules := map[string][]rbacv1.PolicyRule{
		"controller-manager": {
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
		},
		"scheduler": {
			{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: read},
			{APIGroups: []string{"work.karmada.io"}, Resources: []string{"resourcebindings", "clusterresourcebindings", "resourcebindings/status", "clusterresourcebindings/status"}, Verbs: write},
			leases, events,
		},
		"webhook": {
			// The claim reads the policies, and the checks what they name.
			{APIGroups: []string{"policy.karmada.io"}, Resources: []string{"*"}, Verbs: read},
			leases, events,
		},
		"metrics-adapter": {
			{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters", "clusters/proxy"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: read},
			{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"prioritylevelconfigurations", "flowschemas"}, Verbs: read},
			{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"*"}, Verbs: read},
			{APIGroups: []string{"autoscaling.karmada.io"}, Resources: []string{"*"}, Verbs: read},
		},
		"search": {
			// Members are reached with the Clusters' credentials; the proxy
			// sends other requests to the control plane as their caller.
			{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"userextras/*", "uids"}, Verbs: []string{"impersonate"}},
			{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"prioritylevelconfigurations", "flowschemas"}, Verbs: read},
			{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"*"}, Verbs: read},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
			// The replica holding the Lease writes the registries' status.
			leases,
		},
	}
	var out []client.Object
	for _, c := range append(slices.Clone(Components), SearchComponent) {
		name := "flotilla:" + c
		subjects := componentSubjects(c)
		out = append(out,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules[c]},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})
	}
	// Karmada's cluster-proxy-admin: the administrators may use every
	// cluster's proxy, and so (unified authentication) be impersonated in
	// every member. Their group, system:masters, already is, through the
	// cluster-admin binding.
	out = append(out,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ClusterProxyAdmin}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, Verbs: []string{"*"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ClusterProxyAdmin},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:admin"},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: AdminUser},
			},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ClusterProxyAdmin}})
	// An aggregated API server delegates authentication and authorization
	// to the control plane, and reads its client CA.
	for _, c := range []string{"metrics-adapter", "search"} {
		subjects := componentSubjects(c)
		out = append(out,
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flotilla:" + c + ":auth-delegator"}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "flotilla:" + c + ":auth-reader"}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}})
	}
	return out
}

func componentSubjects(component string) []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.ServiceAccountKind, Namespace: "karmada-system", Name: "flotilla-" + component},
		{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:flotilla:" + component},
	}
}

// webhookConfigurations registers the three admission plugins of `flotilla
// webhook`. The checks and the defaults fail closed, as the built-in plugins
// do; the claim fails open, since the detector claims whatever it leaves.
func webhookConfigurations(t *WebhookTarget) []client.Object {
	cc := func(path string) admissionregistrationv1.WebhookClientConfig {
		c := admissionregistrationv1.WebhookClientConfig{CABundle: t.CABundle}
		if t.URL != "" {
			c.URL = ptr.To(strings.TrimSuffix(t.URL, "/") + path)
		} else {
			c.Service = &admissionregistrationv1.ServiceReference{Namespace: t.Service.Namespace, Name: t.Service.Name, Path: ptr.To(path), Port: ptr.To(t.Service.Port)}
		}
		return c
	}
	rules := func(grs []schema.GroupResource, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		byGroup := map[string][]string{}
		for _, gr := range grs {
			byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
		}
		groups := make([]string, 0, len(byGroup))
		for g := range byGroup {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		var out []admissionregistrationv1.RuleWithOperations
		for _, g := range groups {
			res := byGroup[g]
			sort.Strings(res)
			out = append(out, admissionregistrationv1.RuleWithOperations{Operations: ops,
				Rule: admissionregistrationv1.Rule{APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: res, Scope: ptr.To(admissionregistrationv1.AllScopes)}})
		}
		return out
	}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	fail, ignore := ptr.To(admissionregistrationv1.Fail), ptr.To(admissionregistrationv1.Ignore)
	versions := []string{"v1"}
	createUpdate := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	return []client.Object{
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigurationName},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "validation.flotilla.io", ClientConfig: cc(ValidatePath), Rules: rules(validation.Resources(), createUpdate...),
				FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: versions, TimeoutSeconds: ptr.To[int32](10),
			}, {
				// Karmada's resourcedeletionprotection: the delete of any
				// object labelled deletion-protected=Always is refused; the
				// object selector sends only those here.
				Name: "resourcedeletionprotection.flotilla.io", ClientConfig: cc(ValidatePath),
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}, Scope: ptr.To(admissionregistrationv1.AllScopes)}}},
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: workv1alpha2.DeletionProtectionLabelKey, Operator: metav1.LabelSelectorOpIn, Values: []string{workv1alpha2.DeletionProtectionAlways}}}},
				FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: versions, TimeoutSeconds: ptr.To[int32](10),
			}}},
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigurationName},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name: "defaulting.flotilla.io", ClientConfig: cc(MutateDefaultsPath), Rules: rules(defaulting.Resources(), createUpdate...),
				FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: versions, TimeoutSeconds: ptr.To[int32](10),
			}, {
				// Every create of a top-level object, except the control
				// plane's own bookkeeping, which is never a template.
				Name: "claim.flotilla.io", ClientConfig: cc(MutateClaimPath),
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}, Scope: ptr.To(admissionregistrationv1.AllScopes)}}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{
					Name:       "not-bookkeeping",
					Expression: `!(request.resource.group in ['coordination.k8s.io', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io', 'certificates.k8s.io', 'work.karmada.io', 'search.karmada.io']) && !(request.resource.group == '' && request.resource.resource in ['events', 'namespaces'])`,
				}},
				FailurePolicy: ignore, SideEffects: none, AdmissionReviewVersions: versions, TimeoutSeconds: ptr.To[int32](3),
				ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			}, {
				// FlotillaValidation once more, in the mutating phase, which
				// comes before the API server checks the CRD's schema and CEL
				// rules: a refusal here names those errors too, so one apply
				// shows every error of the object, as on the embedded control
				// plane. It changes nothing; the validating webhook above
				// stays the authoritative check, after every mutation.
				Name: "early.validation.flotilla.io", ClientConfig: cc(MutateValidatePath), Rules: rules(validation.Resources(), createUpdate...),
				FailurePolicy: fail, SideEffects: none, AdmissionReviewVersions: versions, TimeoutSeconds: ptr.To[int32](10),
				ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			}}},
	}
}

func externalNameService(s *ServiceTarget) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: s.ExternalName,
			Ports: []corev1.ServicePort{{Name: "https", Port: s.Port, Protocol: corev1.ProtocolTCP}}}}
}

// SearchAPIServiceObject is the APIService v1alpha1.search.karmada.io, served
// by the Service namespace/name on port (`flotilla search`); caBundle as for
// MetricsAPIServiceObjects.
func SearchAPIServiceObject(namespace, name string, port int32, caBundle []byte) *apiregv1.APIService {
	return &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.search.karmada.io"},
		Spec: apiregv1.APIServiceSpec{
			Group: "search.karmada.io", Version: "v1alpha1",
			Service:               &apiregv1.ServiceReference{Namespace: namespace, Name: name, Port: ptr.To(port)},
			CABundle:              caBundle,
			InsecureSkipTLSVerify: len(caBundle) == 0,
			GroupPriorityMinimum:  2000,
			VersionPriority:       10,
		},
	}
}

// MetricsAPIServiceObjects are the APIServices of the metrics APIs
// (metrics.k8s.io v1beta1, custom.metrics.k8s.io v1beta1 and v1beta2,
// external.metrics.k8s.io v1beta1), all served by the Service
// namespace/name on port. caBundle (PEM) verifies the server's certificate;
// without it the API server skips the verification (insecureSkipTLSVerify,
// as for the local stack's loopback servers).
func MetricsAPIServiceObjects(namespace, name string, port int32, caBundle []byte) []*apiregv1.APIService {
	apis := []struct {
		group, version string
		priority       int32
	}{
		{"metrics.k8s.io", "v1beta1", 100},
		{"custom.metrics.k8s.io", "v1beta1", 100},
		{"custom.metrics.k8s.io", "v1beta2", 200},
		{"external.metrics.k8s.io", "v1beta1", 100},
	}
	out := make([]*apiregv1.APIService, 0, len(apis))
	for _, a := range apis {
		out = append(out, &apiregv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: a.version + "." + a.group},
			Spec: apiregv1.APIServiceSpec{
				Group: a.group, Version: a.version,
				Service:               &apiregv1.ServiceReference{Namespace: namespace, Name: name, Port: ptr.To(port)},
				CABundle:              caBundle,
				InsecureSkipTLSVerify: len(caBundle) == 0,
				GroupPriorityMinimum:  100,
				VersionPriority:       a.priority,
			},
		})
	}
	return out
}
