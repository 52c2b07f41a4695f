package detector

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// missingOverrides lists the overrides that the policy's
// spec.dependentOverrides (Karmada's v1.7 field) names and that do not
// exist yet: OverridePolicies of the policy's namespace for a
// PropagationPolicy, ClusterOverridePolicies for a ClusterPropagationPolicy,
// each as "Kind namespace/name". While any is missing the policy is not
// applied to a template, so that its first copy in every member already
// carries the override.
func (d *Detector) missingOverrides(ctx context.Context, p *policy) ([]string, error) {
	var missing []string
	for _, name := range p.spec.DependentOverrides {
		var obj client.Object
		kind := "ClusterOverridePolicy"
		if p.obj.GetNamespace() != "" {
			obj, kind = &policyv1alpha1.OverridePolicy{}, "OverridePolicy"
		} else {
			obj = &policyv1alpha1.ClusterOverridePolicy{}
		}
		err := d.Client.Get(ctx, client.ObjectKey{Namespace: p.obj.GetNamespace(), Name: name}, obj)
		switch {
		case client.IgnoreNotFound(err) != nil:
			return nil, fmt.Errorf("look up the dependent %s %s: %w", kind, name, err)
		case err != nil:
			if ns := p.obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			missing = append(missing, kind+" "+name)
		}
	}
	return missing, nil
}

// errWaitingForOverrides is the ApplyPolicyFailed message of a policy whose
// dependent overrides do not all exist.
func errWaitingForOverrides(p *policy, missing []string) error {
	return fmt.Errorf("waiting for dependent overrides of %s: %s does not exist yet (spec.dependentOverrides); the policy applies once it is created",
		policyKindRef(p.obj), strings.Join(missing, ", "))
}

// watchOverrides wakes the templates of the policies that wait for an
// override (spec.dependentOverrides) when that override is created.
func (d *Detector) watchOverrides(ctx context.Context) error {
	for _, obj := range []client.Object{&policyv1alpha1.OverridePolicy{}, &policyv1alpha1.ClusterOverridePolicy{}} {
		inf, err := d.Cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) { d.enqueueDependents(ctx, o) }})
		if err != nil {
			return err
		}
	}
	return nil
}

// enqueueDependents enqueues the templates selected by every policy whose
// spec.dependentOverrides names the override o.
func (d *Detector) enqueueDependents(ctx context.Context, o any) {
	switch op := o.(type) {
	case *policyv1alpha1.OverridePolicy:
		d.enqueuePoliciesWhere(ctx, policyScope{namespaced: true, namespace: op.Namespace}, func(s *policyv1alpha1.PropagationSpec) bool {
			return slices.Contains(s.DependentOverrides, op.Name)
		})
	case *policyv1alpha1.ClusterOverridePolicy:
		d.enqueuePoliciesWhere(ctx, policyScope{clusterScoped: true}, func(s *policyv1alpha1.PropagationSpec) bool {
			return slices.Contains(s.DependentOverrides, op.Name)
		})
	}
}

// policyScope says which propagation policies enqueuePoliciesWhere looks
// at: the PropagationPolicies of namespace (every namespace when empty),
// the ClusterPropagationPolicies, or both.
type policyScope struct {
	namespaced    bool
	namespace     string
	clusterScoped bool
}

// enqueuePoliciesWhere queues, through enqueueForPolicy, the templates of
// every policy in scope whose spec satisfies keep (read from the cache). A
// list that fails queues nothing; the next event of the watched object
// retries.
func (d *Detector) enqueuePoliciesWhere(ctx context.Context, scope policyScope, keep func(*policyv1alpha1.PropagationSpec) bool) {
	if scope.namespaced {
		list := &policyv1alpha1.PropagationPolicyList{}
		if err := d.Client.List(ctx, list, client.InNamespace(scope.namespace)); err == nil {
			for i := range list.Items {
				if keep(&list.Items[i].Spec) {
					d.enqueueForPolicy(&list.Items[i])
				}
			}
		}
	}
	if scope.clusterScoped {
		list := &policyv1alpha1.ClusterPropagationPolicyList{}
		if err := d.Client.List(ctx, list); err == nil {
			for i := range list.Items {
				if keep(&list.Items[i].Spec) {
					d.enqueueForPolicy(&list.Items[i])
				}
			}
		}
	}
}
