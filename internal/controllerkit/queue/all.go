package queue

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// All maps any event to a request for every object c lists into a new
// list of newList's kind (such as &clusterv1alpha1.ClusterList{}): for a
// controller that must look at all its objects again when something they
// all depend on changes (a Cluster's remedyActions, an IngressClass). A
// List error is logged and enqueues nothing; the next event brings them.
func All(c client.Reader, newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := newList()
		if err := c.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "List every object to enqueue them", "kind", fmt.Sprintf("%T", list))
			return nil
		}
		out := make([]reconcile.Request, 0, meta.LenList(list))
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			if obj, ok := o.(client.Object); ok {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
			}
			return nil
		})
		return out
	}
}
