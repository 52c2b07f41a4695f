package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/core/promotion"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// promoteOptions are the flags and arguments of `flotilla promote`.
type promoteOptions struct {
	kubeconfig, context string
	namespace, cluster  string
	// clusterKubeconfig and clusterContext reach the member directly (karmadactl's
	// --cluster-kubeconfig and --cluster-context); empty, through the credentials the control
	// plane holds for it.
	clusterKubeconfig, clusterContext string
	policyName, output                string
	dependencies                      bool
	dryRun                            bool
	// autoCreatePolicy is karmadactl's --auto-create-policy: false creates the templates only.
	autoCreatePolicy bool

	kind, name  string
	out, errOut io.Writer
}

func newPromoteCommand() *cobra.Command {
	o := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote <kind> <name> -C <cluster> [-n <namespace>]",
		Short: "Take an object running in a member cluster into the control plane",
		Long: `Promote an object that already runs in a member cluster to a resource template
on the control plane, as 'karmadactl promote' does. The object is read from the
member; it is created on the control plane without what the member set (status,
uid, resourceVersion, managedFields, cluster IPs, a Job's generated selector,
...); and a PropagationPolicy (a ClusterPropagationPolicy for a cluster-scoped
kind) is created that places it on that member with conflictResolution
Overwrite, so the running object is adopted in place, not re-created.

The policy is named as Karmada names it: the object's name and a hash of its
namespace and kind, so two kinds with an object of the same name get two
policies. --policy-name names it instead.

With --dependencies, what the object refers to is promoted as well, as the
control plane's resource interpreter finds it: a ResourceInterpreterCustomization's
dependencyInterpretation for the kind, else the built-in rules (a workload's
ConfigMaps, Secrets, ServiceAccount, PersistentVolumeClaims, a StatefulSet's
Service). They become templates without policies of their own, and the policy
gets propagateDeps: true, which places them with the object, as karmadactl
promote --dependencies does. A dependency that is already a template on the
control plane is left as it is; one missing from the member is reported and
skipped.

Nothing is changed when the object already exists on the control plane, is
missing from the member, would be claimed by a policy already on the control
plane instead of the new one, or the cluster is not joined.`,
		Example: `  # Take the Deployment web of namespace shop, running in member1, into the control plane
  flotilla promote deployment web -n shop -C member1

  # The same with the ConfigMaps, Secrets and ServiceAccount its pods use
  flotilla promote deploy web -n shop -C member1 --dependencies

  # Print what would be created, as a YAML stream, and create nothing
  flotilla promote deployments.apps web -n shop -C member1 --dependencies --dry-run -o yaml

  # Read the object from the member with its own kubeconfig, as karmadactl does
  flotilla promote deployment web -n shop -C member1 --cluster-kubeconfig member1.config --cluster-context member1

  # The template only: place it with a policy of your own
  flotilla promote deployment web -n shop -C member1 --auto-create-policy=false

  # A cluster-scoped object gets a ClusterPropagationPolicy, here named by you
  flotilla promote clusterrole reader -C member2 --policy-name reader-from-member2`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out, o.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, else ~/.flotilla/karmada.config as written by 'flotilla up', else ~/.kube/config)")
	f.StringVar(&o.context, "karmada-context", "", "kubeconfig context of the control plane (default: the current context)")
	f.StringVar(&o.context, "context", "", "kubeconfig context of the control plane")
	_ = f.MarkDeprecated("context", "use --karmada-context, as karmadactl does")
	f.StringVar(&o.clusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster, to read the object from it directly (default: through the credentials the control plane holds for the cluster)")
	f.StringVar(&o.clusterContext, "cluster-context", "", "context of --cluster-kubeconfig (default: its current context)")
	f.BoolVar(&o.autoCreatePolicy, "auto-create-policy", true, "create the PropagationPolicy (ClusterPropagationPolicy for a cluster-scoped kind) that places the templates on the member; false creates the templates only")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the object (default: the context's namespace, else default); ignored for cluster-scoped kinds")
	f.StringVarP(&o.cluster, "cluster", "C", "", "member cluster the object runs in (required)")
	f.StringVar(&o.policyName, "policy-name", "", "name of the policy created for the object (default: Karmada's <name>-<hash>); dependencies keep generated names")
	f.BoolVarP(&o.dependencies, "dependencies", "d", false, "also promote the ConfigMaps, Secrets, ServiceAccount, PersistentVolumeClaims and Service a workload refers to")
	f.BoolVar(&o.dryRun, "dry-run", false, "create nothing; print what would be created")
	f.StringVarP(&o.output, "output", "o", "", "output format: yaml prints the objects (with --dry-run, those that would be created) as a YAML stream")
	return cmd
}

// Complete takes the arguments.
func (o *promoteOptions) Complete(args []string) error {
	o.kind, o.name = args[0], args[1]
	return nil
}

// Validate checks the flags before anything is read.
func (o *promoteOptions) Validate() error {
	if o.cluster == "" {
		return errors.New("the member cluster is required: add -C <cluster> (list them with 'kubectl get clusters')")
	}
	if o.clusterContext != "" && o.clusterKubeconfig == "" {
		return errors.New("--cluster-context names a context of --cluster-kubeconfig: add --cluster-kubeconfig")
	}
	if o.output != "" && o.output != "yaml" {
		return fmt.Errorf("unknown output format %q: the only one is yaml (-o yaml)", o.output)
	}
	return nil
}

// promotedObject is one object promote creates on the control plane.
type promotedObject struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// Run reads the object (and its dependencies) from the member, checks that
// nothing to be created exists yet, then creates the templates and policies.
func (o *promoteOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, cp, dyn, err := controlPlaneFlags{kubeconfig: o.kubeconfig, context: o.context}.clients()
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), disc, nil)
	mapping, err := resolveKind(mapper, o.kind)
	if err != nil {
		return err
	}
	if err := checkJoined(ctx, cp, o.cluster); err != nil {
		return err
	}
	memberDynamic, err := o.memberClient(ctx, cp)
	if err != nil {
		return err
	}
	namespaced := mapping.Scope.Name() == meta.RESTScopeNameNamespace
	ns := ""
	if namespaced {
		ns = o.namespace
		if ns == "" {
			ns = o.defaultNamespace()
		}
	}

	obj, err := getFrom(ctx, memberDynamic, mapping.Resource, ns, o.name)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s not found in member cluster %s: check the name, the kind and the namespace (-n)", describe(mapping, ns, o.name), o.cluster)
	} else if err != nil {
		return fmt.Errorf("read %s from member cluster %s: %w", describe(mapping, ns, o.name), o.cluster, err)
	}
	if _, err := getFrom(ctx, dyn, mapping.Resource, ns, o.name); err == nil {
		return fmt.Errorf("%s already exists on the control plane, so it is already a resource template: to place it on %s, create or edit a PropagationPolicy that selects it, with conflictResolution: Overwrite to adopt the member's copy", describe(mapping, ns, o.name), o.cluster)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("look up %s on the control plane: %w", describe(mapping, ns, o.name), err)
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		fmt.Fprintf(o.errOut, "warning: %s is owned by %s %s in %s; its owner is not promoted with it\n", describe(mapping, ns, o.name), refs[0].Kind, refs[0].Name, o.cluster)
	}

	policyName := o.policyName
	if policyName == "" {
		policyName = promotion.PolicyName(ns, o.name, obj.GroupVersionKind())
	}
	templates := []promotedObject{{gvr: mapping.Resource, obj: promotion.Template(obj)}}
	policies := []promotedObject{policyFor(policyName, o.cluster, ns, obj, o.dependencies)}

	if o.dependencies {
		deps, err := o.dependenciesOf(ctx, cp, mapper, obj, ns, memberDynamic, dyn)
		if err != nil {
			return err
		}
		// Dependencies go first, so the workload's template never exists
		// on the control plane without what its pods use. They get no
		// policy of their own: the workload's (propagateDeps) takes them
		// along, as karmadactl promote --dependencies does.
		var depTemplates []promotedObject
		for _, d := range deps {
			depTemplates = append(depTemplates, promotedObject{gvr: d.gvr, obj: promotion.Template(d.obj)})
		}
		templates = append(depTemplates, templates...)
	}
	if !o.autoCreatePolicy {
		policies = nil
	}
	for _, p := range policies {
		if _, err := getFrom(ctx, dyn, p.gvr, p.obj.GetNamespace(), p.obj.GetName()); err == nil {
			return fmt.Errorf("%s %s already exists on the control plane: delete it, or name the new policy with --policy-name", p.obj.GetKind(), key(p.obj))
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("look up %s %s: %w", p.obj.GetKind(), key(p.obj), err)
		}
	}

	if len(policies) > 0 {
		if err := checkClaims(ctx, cp, ns, templates, policies); err != nil {
			return err
		}
	}

	var create []promotedObject
	if namespaced {
		if _, err := getFrom(ctx, dyn, corev1.SchemeGroupVersion.WithResource("namespaces"), "", ns); apierrors.IsNotFound(err) {
			nsObj := &unstructured.Unstructured{}
			nsObj.SetAPIVersion("v1")
			nsObj.SetKind("Namespace")
			nsObj.SetName(ns)
			create = append(create, promotedObject{gvr: corev1.SchemeGroupVersion.WithResource("namespaces"), obj: nsObj})
		} else if err != nil {
			return fmt.Errorf("look up namespace %s on the control plane: %w", ns, err)
		}
	}
	// Policies before templates: a template is claimed as it is created,
	// by the best policy that exists then.
	create = append(append(create, policies...), templates...)
	return o.createAll(ctx, dyn, create)
}

// memberClient reads the member: with --cluster-kubeconfig directly, else through the
// credentials the control plane holds for the cluster.
func (o *promoteOptions) memberClient(ctx context.Context, cp client.Client) (dynamic.Interface, error) {
	if o.clusterKubeconfig == "" {
		member, err := (&registry.Registry{Reader: cp}).Get(ctx, o.cluster)
		if err != nil {
			return nil, fmt.Errorf("connect to member cluster %s: %w", o.cluster, err)
		}
		return member.Dynamic, nil
	}
	cfg, err := loadKubeconfig(o.clusterKubeconfig, o.clusterContext)
	if err != nil {
		return nil, fmt.Errorf("load the member cluster's kubeconfig (--cluster-kubeconfig %s): %w", o.clusterKubeconfig, err)
	}
	return dynamic.NewForConfig(cfg)
}

// checkClaims refuses to promote when a policy already on the control plane
// would claim one of the templates instead of the policy promote creates
// for it (a template is claimed by the best matching policy: Karmada's
// priority, then selector, then name order), naming that policy.
func checkClaims(ctx context.Context, cp client.Client, ns string, templates, policies []promotedObject) error {
	var pps []*policyv1alpha1.PropagationPolicy
	if ns != "" {
		list := &policyv1alpha1.PropagationPolicyList{}
		if err := cp.List(ctx, list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("list the PropagationPolicies of %s: %w", ns, err)
		}
		for i := range list.Items {
			pps = append(pps, &list.Items[i])
		}
	}
	clist := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := cp.List(ctx, clist); err != nil {
		return fmt.Errorf("list the ClusterPropagationPolicies: %w", err)
	}
	var cpps []*policyv1alpha1.ClusterPropagationPolicy
	for i := range clist.Items {
		cpps = append(cpps, &clist.Items[i])
	}
	for _, p := range policies {
		switch p.obj.GetKind() {
		case policymatch.KindPropagationPolicy:
			pp := &policyv1alpha1.PropagationPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(p.obj.Object, pp); err != nil {
				return err
			}
			pps = append(pps, pp)
		default:
			cpp := &policyv1alpha1.ClusterPropagationPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(p.obj.Object, cpp); err != nil {
				return err
			}
			cpps = append(cpps, cpp)
		}
	}
	// templates are the dependencies, then the workload; policies is the
	// workload's. A dependency claimed by a policy of its own is placed by
	// that policy rather than with the workload (Karmada's rule too); only
	// the workload must be claimed by the new policy.
	t, want := templates[len(templates)-1], policies[0]
	claim, ok := policymatch.BestMatch(t.obj, pps, cpps)
	if !ok || (claim.Name == want.obj.GetName() && claim.Namespace == want.obj.GetNamespace()) {
		return nil
	}
	return fmt.Errorf("%s %s would be claimed by %s, which already selects it, instead of the new policy %s: delete that policy or narrow its resourceSelectors first, then promote again",
		t.obj.GetKind(), key(t.obj), claim, want.obj.GetName())
}

// createAll creates objs in order (namespace, policies, templates), or with
// --dry-run only prints them. A failure part-way leaves what was created
// and says so.
func (o *promoteOptions) createAll(ctx context.Context, dyn dynamic.Interface, objs []promotedObject) error {
	var printed []*unstructured.Unstructured
	var done []string
	for _, p := range objs {
		result := p.obj
		if !o.dryRun {
			var ri dynamic.ResourceInterface = dyn.Resource(p.gvr)
			if p.obj.GetNamespace() != "" {
				ri = dyn.Resource(p.gvr).Namespace(p.obj.GetNamespace())
			}
			created, err := ri.Create(ctx, p.obj, metav1.CreateOptions{FieldManager: "flotilla-promote"})
			if err != nil {
				msg := fmt.Sprintf("create %s %s on the control plane: %v", p.obj.GetKind(), key(p.obj), err)
				if len(done) > 0 {
					msg += fmt.Sprintf("; already created, and left in place: %s (delete them to start again)", strings.Join(done, ", "))
				}
				return errors.New(msg)
			}
			result = created
		}
		done = append(done, p.obj.GetKind()+" "+key(p.obj))
		if o.output == "yaml" {
			printed = append(printed, result)
			continue
		}
		suffix := "created"
		if o.dryRun {
			suffix = "created (dry run)"
		}
		fmt.Fprintf(o.out, "%s%s/%s %s\n", strings.ToLower(p.obj.GetKind()), groupSuffix(p.gvr.Group), p.obj.GetName(), suffix)
	}
	if o.output == "yaml" {
		return printYAMLStream(o.out, printed)
	}
	return nil
}

type dependencyObject struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// dependenciesOf reads from the member what obj refers to, as the control
// plane's resource interpreter finds it: a ResourceInterpreterCustomization's
// dependencyInterpretation for obj's kind when there is one (it replaces
// the built-in rules, as everywhere else), else the built-in rules for
// workloads. It leaves out what is already a template on the control plane
// (it stays as it is) and what the member does not have (reported on
// stderr: the workload may tolerate it, as with optional references).
func (o *promoteOptions) dependenciesOf(ctx context.Context, cp client.Client, mapper meta.RESTMapper, obj *unstructured.Unstructured, ns string, member, dyn dynamic.Interface) ([]dependencyObject, error) {
	customizations := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := cp.List(ctx, customizations); err != nil {
		return nil, fmt.Errorf("read the control plane's ResourceInterpreterCustomizations: %w", err)
	}
	in := interpreter.New(nil)
	in.SetCustomizations(customizations.Items)
	if !in.Interprets(obj, configv1alpha1.InterpreterOperationInterpretDependency) {
		fmt.Fprintf(o.errOut, "note: nothing interprets the dependencies of %s (no built-in rule, no ResourceInterpreterCustomization); --dependencies finds nothing to promote with it\n", obj.GetKind())
		return nil, nil
	}
	refs, err := in.Dependencies(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("interpret the dependencies of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	var out []dependencyObject
	for _, ref := range refs {
		gvk := ref.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			fmt.Fprintf(o.errOut, "warning: %s %s depends on a %s, which the control plane does not serve: skipped\n", obj.GetKind(), obj.GetName(), gvk.Kind)
			continue
		}
		depNS := ref.Namespace
		if depNS == "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
			depNS = ns
		}
		var found []*unstructured.Unstructured
		if ref.Name != "" {
			d, err := getFrom(ctx, member, m.Resource, depNS, ref.Name)
			if apierrors.IsNotFound(err) {
				fmt.Fprintf(o.errOut, "warning: %s %s refers to %s %s, which member cluster %s does not have: skipped\n", obj.GetKind(), obj.GetName(), gvk.Kind, ref.Name, o.cluster)
				continue
			} else if err != nil {
				return nil, fmt.Errorf("read %s %s from member cluster %s: %w", gvk.Kind, ref.Name, o.cluster, err)
			}
			found = append(found, d)
		} else {
			list, err := member.Resource(m.Resource).Namespace(depNS).List(ctx, metav1.ListOptions{LabelSelector: ref.Selector})
			if err != nil {
				return nil, fmt.Errorf("list the %s matching %q in member cluster %s: %w", m.Resource.Resource, ref.Selector, o.cluster, err)
			}
			for i := range list.Items {
				found = append(found, &list.Items[i])
			}
		}
		for _, d := range found {
			if _, err := getFrom(ctx, dyn, m.Resource, d.GetNamespace(), d.GetName()); err == nil {
				fmt.Fprintf(o.errOut, "note: %s %s already exists on the control plane: left as it is, with whatever places it now\n", gvk.Kind, key(d))
				continue
			} else if !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("look up %s %s on the control plane: %w", gvk.Kind, key(d), err)
			}
			out = append(out, dependencyObject{gvr: m.Resource, obj: d})
		}
	}
	return out, nil
}

// policyFor builds the policy that places obj on cluster, as unstructured;
// with deps it propagates obj's dependencies too (propagateDeps).
func policyFor(name, cluster, ns string, obj *unstructured.Unstructured, deps bool) promotedObject {
	target := promotion.Target{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: ns, Name: obj.GetName(), Deps: deps}
	var typed runtime.Object
	resource := "clusterpropagationpolicies"
	if ns != "" {
		typed, resource = promotion.PropagationPolicy(name, cluster, target), "propagationpolicies"
	} else {
		typed = promotion.ClusterPropagationPolicy(name, cluster, target)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		panic(err) // a typed policy always converts
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return promotedObject{gvr: policyv1alpha1.SchemeGroupVersion.WithResource(resource), obj: u}
}

// resolveKind maps what a user typed for a kind to a resource, as kubectl
// does: a resource (deployments), its singular (deployment), a short name
// (deploy), each optionally qualified by group (deployments.apps) or by
// version and group (deployments.v1.apps), or a kind (Deployment).
func resolveKind(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	unknown := fmt.Errorf("unknown kind %q: the control plane serves no such resource; list the valid ones with 'kubectl api-resources' (against the control plane)", arg)
	if arg == "" {
		return nil, unknown
	}
	gvr, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var gvk schema.GroupVersionKind
	if gvr != nil {
		gvk, _ = mapper.KindFor(*gvr)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK != nil {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	if m, err := mapper.RESTMapping(gk); err == nil {
		return m, nil
	} else if !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("resolve kind %q: %w", arg, err)
	}
	return nil, unknown
}

// checkJoined refuses a cluster that has no Cluster object on the control
// plane, listing the joined ones.
func checkJoined(ctx context.Context, cp client.Client, name string) error {
	err := cp.Get(ctx, client.ObjectKey{Name: name}, &clusterv1alpha1.Cluster{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("look up cluster %s on the control plane: %w", name, err)
	}
	var list clusterv1alpha1.ClusterList
	if err := cp.List(ctx, &list); err != nil {
		return fmt.Errorf("cluster %q is not joined to the control plane (and listing the joined ones failed: %w)", name, err)
	}
	var joined []string
	for _, c := range list.Items {
		joined = append(joined, c.Name)
	}
	return notJoined([]string{name}, joined)
}

// defaultNamespace is controlPlaneFlags.defaultNamespace for promote's flags.
func (o *promoteOptions) defaultNamespace() string {
	return controlPlaneFlags{kubeconfig: o.kubeconfig, context: o.context}.defaultNamespace()
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func getFrom(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if ns == "" {
		return dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	}
	return dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
}

// describe names an object the way kubectl does: deployment.apps shop/web.
func describe(m *meta.RESTMapping, ns, name string) string {
	if ns != "" {
		name = ns + "/" + name
	}
	return strings.ToLower(m.GroupVersionKind.Kind) + groupSuffix(m.Resource.Group) + " " + name
}

func groupSuffix(group string) string {
	if group == "" {
		return ""
	}
	return "." + group
}

func key(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// printYAMLStream writes objs as YAML documents separated by ---.
func printYAMLStream(w io.Writer, objs []*unstructured.Unstructured) error {
	for i, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}
