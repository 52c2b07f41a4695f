// Package reconciler holds the pieces every Flotilla controller's Reconcile shares, so that
// all of them have one shape (docs/architecture.md, "One reconcile shape"): the clock they
// tell the time with, and how what they did becomes controller-runtime's result.
//
// The shape: get the object (gone: forget what is remembered of it and stop); finalizers
// first (added before any effect outside the object, removed last); observe the caches into
// one value; decide in a pure function; act on other objects; write the object's status
// once, at the end and only when it changed, with the conditions this controller owns; and
// return Result(res, err).
package reconciler

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// Clock is the clock a controller tells the time with: c, or the real clock when c is nil.
// Every controller that decides on time has a field `Clock` of the narrowest
// k8s.io/utils/clock interface it needs, set by the controller manager from
// controllermanager.Options.Clock (a fake clock in tests), and reads it through Clock or Now
// only.
// C is the field's interface (clock.PassiveClock, clock.WithDelayedExecution, ...), which the
// real clock implements.
func Clock[C clock.PassiveClock](c C) C {
	if any(c) == nil {
		return any(clock.RealClock{}).(C)
	}
	return c
}

// Now is the time on c (the real clock when c is nil).
func Now(c clock.PassiveClock) time.Time { return Clock(c).Now() }

// Terminal marks err as one only the user can fix (a spec or a script that cannot work, a
// name taken by somebody else's object): controller-runtime logs it once and does not retry
// it; the next change to a watched object reconciles again. The controller reports it first,
// as a condition or an event with a reason. Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return reconcile.TerminalError(err)
}

// IsTerminal says whether err (or an error it wraps) was marked by Terminal: a queue of the
// controller's own (the detector's) forgets such an item instead of backing off.
func IsTerminal(err error) bool {
	return err != nil && errors.Is(err, reconcile.TerminalError(nil))
}

// Result is what Reconcile returns after res and err:
//   - no error: res;
//   - a write that lost an optimistic-lock race (Conflict, see IsConflict): tried again after
//     queue.ConflictRetry on a fresh read, with no back-off and no error logged;
//   - any other error, terminal or not, alone: controller-runtime ignores a result given
//     with an error (and warns), so a timed re-check waits for the back-off instead.
func Result(res ctrl.Result, err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return res, nil
	case !IsTerminal(err) && IsConflict(err):
		return ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil
	default:
		return ctrl.Result{}, err
	}
}

// IsConflict reports whether err is an optimistic-lock conflict; an error joining several
// (errors.Join) is one only when every part is, so that a conflict never hides another
// error from the back-off and the log.
func IsConflict(err error) bool { return Every(err, apierrors.IsConflict) }

// Every reports whether is holds for err or, when err joins several errors (errors.Join,
// also behind %w), for every one of them, recursively. A nil err or an empty join is false.
func Every(err error, is func(error) bool) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		parts := joined.Unwrap()
		for _, e := range parts {
			if !Every(e, is) {
				return false
			}
		}
		return len(parts) > 0
	}
	return err != nil && is(err)
}
