// Package validation runs the checks Karmada's validating webhooks make that
// CEL in the CRDs cannot express (a CronFederatedHPA's cron schedules and
// IANA time zones, OverridePolicy patch values, label and annotation
// syntax). An object that fails gets a Warning event with reason
// ValidationFailed naming every bad field, and a Normal event with reason
// ValidationSucceeded once it is fixed; `kubectl describe` shows both.
package validation

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/admission/validation"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// Reconciler validates objects of one kind.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// New returns an empty object of the kind; Validate checks one.
	New      func() client.Object
	Validate func(client.Object) field.ErrorList
	Name     string

	// reported remembers the last verdict per object so an event is sent
	// only on a change of verdict (the process restarts with a clean slate
	// and reports again, which is harmless).
	// It is safe for parallel reconciles.
	reported sync.Map // client.ObjectKey -> string
}

// Kinds returns the validation controllers Flotilla runs: one per kind
// the FlotillaValidation admission plugin checks
// (validation.Kinds), with the same check.
func Kinds(c client.Client, rec record.EventRecorder) []*Reconciler {
	var out []*Reconciler
	for _, k := range validation.Kinds {
		out = append(out, &Reconciler{Client: c, Recorder: rec, Name: "validate-" + strings.ToLower(reflect.TypeOf(k.New()).Elem().Name()),
			New: k.New, Validate: k.Check})
	}
	return out
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(r.Name).For(r.New()).WithOptions(queue.Options(mgr, 1)).Complete(r)
}

// Reconcile validates one object and reports a changed verdict as an event.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		r.reported.Delete(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	verdict := ""
	if errs := r.Validate(obj); len(errs) > 0 {
		verdict = errs.ToAggregate().Error()
	}
	last, seen := r.reported.Swap(req.NamespacedName, verdict)
	if seen && last.(string) == verdict {
		return ctrl.Result{}, nil
	}
	switch {
	case verdict != "":
		r.Recorder.Event(obj, "Warning", events.ValidationFailed, verdict+"; fix the spec: as written it cannot take effect")
	case seen:
		r.Recorder.Event(obj, "Normal", events.ValidationSucceeded, "the spec is valid")
	}
	return ctrl.Result{}, nil
}
