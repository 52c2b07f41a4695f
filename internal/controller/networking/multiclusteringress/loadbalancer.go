package multiclusteringress

import (
	"context"
	"errors"
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
)

// Finalizer holds a MultiClusterIngress served by the provider until its
// load balancer is released: Karmada's.
const Finalizer = "karmada.io/multi-cluster-ingress-controller"

var loadBalance = eventrecord.Operation{Succeed: events.MCILoadBalance, Failed: events.MCILoadBalance}

// ErrClass is wrapped by the errors that say why the IngressClass of a
// MultiClusterIngress cannot be told.
var ErrClass = errors.New("ingress class")

// ClassMatches reports whether mci is for the provider whose IngressClass
// controller is class (--provider-ingress-class): the IngressClass it names
// in spec.ingressClassName, or else the default one (annotated
// ingressclass.kubernetes.io/is-default-class: "true"), has spec.controller
// class. No such IngressClass is no match; two defaults are an error, as in
// Karmada.
func ClassMatches(ctx context.Context, c client.Reader, mci *networkingv1alpha1.MultiClusterIngress, class string) (bool, error) {
	name := ""
	if mci.Spec.IngressClassName != nil {
		name = *mci.Spec.IngressClassName
	} else {
		list := &networkingv1.IngressClassList{}
		if err := c.List(ctx, list); err != nil {
			return false, err
		}
		var defaults []string
		for _, ic := range list.Items {
			if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
				defaults = append(defaults, ic.Name)
				if ic.Spec.Controller == class {
					name = ic.Name
				}
			}
		}
		if len(defaults) > 1 {
			return false, fmt.Errorf("%w: several IngressClasses are the default (%s): keep the %s annotation on one, or set spec.ingressClassName",
				ErrClass, strings.Join(defaults, ", "), networkingv1.AnnotationIsDefaultIngressClass)
		}
		if name == "" {
			return false, nil
		}
	}
	ic := &networkingv1.IngressClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, ic); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return ic.Spec.Controller == class, nil
}

// serve has the provider set up (or update) the load balancer of mci, whose
// status already holds this pass's serviceLocations and
// trafficBlockClusters, and puts what it returns in mci.Status.LoadBalancer.
// A provider's error is raised as a Warning (MCILoadBalance) and returned.
func (r *Reconciler) serve(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) error {
	_, exists, err := r.LoadBalancer.GetLoadBalancer(ctx, mci)
	var st *networkingv1.IngressLoadBalancerStatus
	if err == nil {
		if exists {
			st, err = r.LoadBalancer.UpdateLoadBalancer(ctx, mci)
		} else {
			st, err = r.LoadBalancer.EnsureLoadBalancer(ctx, mci)
		}
	}
	if err != nil {
		if !apierrors.IsConflict(err) {
			r.Events.Outcome(loadBalance, fmt.Errorf("%s provider: %w", r.LoadBalancer.Name(), err), "", mci)
		}
		return err
	}
	where := addresses(st)
	if a, ok := r.LoadBalancer.(interface {
		Address(*networkingv1alpha1.MultiClusterIngress) string
	}); ok && a.Address(mci) != "" {
		where = a.Address(mci) // the status has no port: see loadbalancer.LocalIngress
	}
	r.Events.Outcome(loadBalance, nil, fmt.Sprintf("Load balancer %s is set up by the %s provider.", where, r.LoadBalancer.Name()), mci)
	mci.Status.LoadBalancer = *st
	return nil
}

// release has the provider release the load balancer of mci.
func (r *Reconciler) release(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) error {
	if err := r.LoadBalancer.EnsureLoadBalancerDeleted(ctx, mci); err != nil {
		r.Events.Outcome(loadBalance, fmt.Errorf("%s provider: release the load balancer: %w", r.LoadBalancer.Name(), err), "", mci)
		return err
	}
	return nil
}

// addresses is "ip:port" (or "host:port", or the address alone) of each
// entry of st, comma-separated.
func addresses(st *networkingv1.IngressLoadBalancerStatus) string {
	var out []string
	for _, in := range st.Ingress {
		a := in.IP + in.Hostname
		for _, p := range in.Ports {
			out = append(out, fmt.Sprintf("%s:%d", a, p.Port))
		}
		if len(in.Ports) == 0 {
			out = append(out, a)
		}
	}
	return strings.Join(out, ",")
}
