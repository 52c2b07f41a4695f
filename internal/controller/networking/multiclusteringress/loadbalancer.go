package multiclusteringress

import (
	"context"
	"fmt"
	"slices"
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

// Verdict says whether the provider serves a MultiClusterIngress, by its
// IngressClass.
type Verdict int

const (
	// Ours means the IngressClass (named, or the default) has the provider's
	// controller.
	Ours Verdict = iota
	// Others means the IngressClass has another controller; another provider's
	// MultiClusterIngress, left alone.
	Others
	// Unserved means no IngressClass applies (the named one does not exist, or
	// none is named and none is the default): no provider serves it.
	Unserved
	// Unknown means several IngressClasses are the default; what is served is
	// left as it is until that is resolved.
	Unknown
)

// ClassOf tells whether the provider whose IngressClass controller is class
// (--provider-ingress-class) serves mci, as Karmada's provider does: the
// IngressClass mci names in spec.ingressClassName, or else the default one
// (annotated ingressclass.kubernetes.io/is-default-class: "true"), has
// spec.controller class. why says what a user should fix for Unserved and
// Unknown. err is a read error, to retry.
func ClassOf(ctx context.Context, c client.Reader, mci *networkingv1alpha1.MultiClusterIngress, class string) (v Verdict, why string, err error) {
	list := &networkingv1.IngressClassList{}
	if err := c.List(ctx, list); err != nil {
		return Unknown, "", err
	}
	var names, defaults []string
	byName := map[string]*networkingv1.IngressClass{}
	for i := range list.Items {
		ic := &list.Items[i]
		names = append(names, ic.Name)
		byName[ic.Name] = ic
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			defaults = append(defaults, ic.Name)
		}
	}
	slices.Sort(names)
	slices.Sort(defaults)
	var ic *networkingv1.IngressClass
	switch {
	case mci.Spec.IngressClassName != nil:
		if ic = byName[*mci.Spec.IngressClassName]; ic == nil {
			return Unserved, fmt.Sprintf("IngressClass %q does not exist, so no provider serves this MultiClusterIngress (IngressClasses: %s)",
				*mci.Spec.IngressClassName, orNone(names)), nil
		}
	case len(defaults) > 1:
		return Unknown, fmt.Sprintf("several IngressClasses are the default (%s): keep the %s annotation on one, or set spec.ingressClassName",
			strings.Join(defaults, ", "), networkingv1.AnnotationIsDefaultIngressClass), nil
	case len(defaults) == 0:
		return Unserved, fmt.Sprintf("spec.ingressClassName is not set and no IngressClass is the default, so no provider serves this MultiClusterIngress (IngressClasses: %s)",
			orNone(names)), nil
	default:
		ic = byName[defaults[0]]
	}
	if ic.Spec.Controller != class {
		return Others, fmt.Sprintf("IngressClass %s is served by %s, not by this provider (%s)", ic.Name, ic.Spec.Controller, class), nil
	}
	return Ours, "", nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
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
