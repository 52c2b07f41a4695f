package binding

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// ErrWorkLeaving is EnsureWork's error for a Work that is being deleted: it is written again
// once it is gone.
var ErrWorkLeaving = errors.New("the previous Work is still being deleted")

// EnsureWork writes the Work w names (namespace and name) as set makes it: it reads the Work,
// leaves it alone when it exists and current reports that it already holds what set would
// write, and otherwise lets set write its labels, annotations and spec and creates or updates
// it. It is how the controllers that write Works of their own (namespace sync, a
// FederatedResourceQuota's ResourceQuotas) keep one. Errors: ErrWorkLeaving (wrapped), or the
// read or write failed (an AlreadyExists too: the cache is behind a create, and the Work must
// still be brought up to date on the retry).
func EnsureWork(ctx context.Context, c client.Client, w *workv1alpha1.Work, current func(*workv1alpha1.Work) bool, set func(*workv1alpha1.Work)) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(w), w)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	exists := err == nil
	if exists && !w.DeletionTimestamp.IsZero() {
		return fmt.Errorf("write Work %s/%s: %w", w.Namespace, w.Name, ErrWorkLeaving)
	}
	if exists && current(w) {
		return nil
	}
	set(w)
	if exists {
		if err := c.Update(ctx, w); err != nil {
			return fmt.Errorf("update Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		return nil
	}
	if err := c.Create(ctx, w); err != nil {
		return fmt.Errorf("create Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}
