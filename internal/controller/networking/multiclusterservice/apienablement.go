package multiclusterservice

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// Karmada's APIIncompatible, on the MultiClusterService: the providers (the
// multiclusterservice controller) and the consumers (the dispatcher) that do
// not serve EndpointSlices. Only failures are reported.
var (
	providersIncompatible = eventrecord.Operation{Failed: events.APIIncompatible, Instance: "providers"}
	consumersIncompatible = eventrecord.Operation{Failed: events.APIIncompatible, Instance: "consumers"}
)

// lacksEndpointSlices reports whether cluster c is known not to serve
// discovery.k8s.io/v1 EndpointSlices: its status.apiEnablements do not list
// them and are complete (condition CompleteAPIEnablements True), as Karmada
// judges an API disabled. A cluster that has not reported its APIs, or
// reported an incomplete list, is not.
func lacksEndpointSlices(c *clusterv1alpha1.Cluster) bool {
	gv := mcs.EndpointSliceGVK.GroupVersion().String()
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion == gv && slices.ContainsFunc(e.Resources, func(r clusterv1alpha1.APIResource) bool { return r.Kind == mcs.EndpointSliceGVK.Kind }) {
			return false
		}
	}
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
}

// withoutEndpointSlices returns, sorted, the clusters among names that
// lack EndpointSlices (lacksEndpointSlices). Errors: the Clusters cannot be
// listed.
func withoutEndpointSlices(ctx context.Context, c client.Reader, names []string) ([]string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		if cl := &list.Items[i]; slices.Contains(names, cl.Name) && lacksEndpointSlices(cl) {
			out = append(out, cl.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// incompatibility is the APIIncompatible error naming the clusters of role
// ("provider" or "consumer") without EndpointSlices, and what that costs;
// nil when there are none.
func incompatibility(role string, clusters []string, consequence string) error {
	if len(clusters) == 0 {
		return nil
	}
	return fmt.Errorf("%s cluster(s) %s do not serve %s %s (status.apiEnablements): %s",
		role, strings.Join(clusters, ", "), mcs.EndpointSliceGVK.GroupVersion(), mcs.EndpointSliceGVK.Kind, consequence)
}

// without returns names less those in drop, in order.
func without(names, drop []string) []string {
	if len(drop) == 0 {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
}
