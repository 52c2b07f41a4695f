package detector

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
)

// schedulePriority resolves the policy's spec.schedulePriority (Karmada's
// PriorityBasedScheduling): the value of the control plane's
// scheduling.k8s.io/v1 PriorityClass it names, for the binding's
// spec.schedulePriority. Nil without the field or with the gate off. A
// class that does not exist is an error naming it (ApplyPolicyFailed); the
// class's creation wakes the policy's templates.
func (d *Detector) schedulePriority(ctx context.Context, p *policy) (*workv1alpha2.SchedulePriority, error) {
	sp := p.spec.SchedulePriority
	if sp == nil || !features.Or(d.Features).Enabled(features.PriorityBasedScheduling) {
		return nil, nil
	}
	if sp.PriorityClassSource != policyv1alpha1.KubePriorityClass {
		return nil, fmt.Errorf("%s: schedulePriority.priorityClassSource %s is not supported; use KubePriorityClass", policyKindRef(p.obj), sp.PriorityClassSource)
	}
	pc := &schedulingv1.PriorityClass{}
	err := d.Client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, pc)
	if apierrors.IsNotFound(err) {
		return nil, &missingPriorityClassError{policy: policyKindRef(p.obj), name: sp.PriorityClassName}
	}
	if err != nil {
		return nil, fmt.Errorf("get PriorityClass %s: %w", sp.PriorityClassName, err)
	}
	return &workv1alpha2.SchedulePriority{Priority: pc.Value}, nil
}

// missingPriorityClassError is a policy's schedulePriority naming a
// PriorityClass that does not exist: reported, not retried with back-off
// (the class's creation wakes the templates).
type missingPriorityClassError struct{ policy, name string }

func (e *missingPriorityClassError) Error() string {
	return fmt.Sprintf("the PriorityClass %s that %s names in spec.schedulePriority.priorityClassName does not exist; create it (kubectl create priorityclass %s --value=<priority>) or name another",
		e.name, e.policy, e.name)
}

// watchPriorityClasses wakes the templates of the policies that name a
// PriorityClass when it is created or its value changes.
func (d *Detector) watchPriorityClasses(ctx context.Context) error {
	if !features.Or(d.Features).Enabled(features.PriorityBasedScheduling) {
		return nil
	}
	inf, err := d.Cache.GetInformer(ctx, &schedulingv1.PriorityClass{})
	if err != nil {
		return fmt.Errorf("watch PriorityClasses: %w", err)
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { d.enqueueForPriorityClass(ctx, o) },
		UpdateFunc: func(o, n any) {
			if op, ok := o.(*schedulingv1.PriorityClass); ok {
				if np, ok := n.(*schedulingv1.PriorityClass); ok && op.Value != np.Value {
					d.enqueueForPriorityClass(ctx, n)
				}
			}
		},
	})
	return err
}

// enqueueForPriorityClass enqueues the templates selected by every policy
// whose spec.schedulePriority names the PriorityClass o.
func (d *Detector) enqueueForPriorityClass(ctx context.Context, o any) {
	pc, ok := o.(*schedulingv1.PriorityClass)
	if !ok {
		return
	}
	d.enqueuePoliciesWhere(ctx, policyScope{namespaced: true, clusterScoped: true}, func(s *policyv1alpha1.PropagationSpec) bool {
		return s.SchedulePriority != nil && s.SchedulePriority.PriorityClassName == pc.Name
	})
}
