package execution

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// WorkStatusEventSource is the source of the events on reading member
// objects' status into Works: Karmada's work status controller, which
// Flotilla folds into the execution controller.
const WorkStatusEventSource = "work-status-controller"

// The interpretations of a member object whose outcomes are raised on its
// Work, one outcome per object (Operation.Instance).
var (
	reflectStatus   = eventrecord.Operation{Succeed: events.ReflectStatusSucceed, Failed: events.ReflectStatusFailed}
	interpretHealth = eventrecord.Operation{Succeed: events.InterpretHealthSucceed, Failed: events.InterpretHealthFailed}
)

// reflected is a manifest's entry in Work.status.manifestStatuses and the
// outcomes of the interpretations that made it.
type reflected struct {
	workv1alpha1.ManifestStatus
	outcomes []interpretation
}

// interpretation is the outcome of one interpreter operation on a member
// object, for its event on the Work.
type interpretation struct {
	op  eventrecord.Operation
	err error
	msg string
}

// reflectManifest reads the member object observed (the manifest identified by id,
// in cluster) into its manifestStatuses entry: its status as the
// interpreter reflects it (InterpretStatus; none when that fails) and its
// health (InterpretHealth; Unknown when that fails). The outcomes list
// InterpretStatus always and InterpretHealth only for kinds something
// judges the health of (interpreter.Interprets): others are Healthy
// unjudged, as in Karmada.
func reflectManifest(ctx context.Context, in *interpreter.Interpreter, cluster string, id workv1alpha1.ResourceIdentifier, observed *unstructured.Unstructured) reflected {
	in = interpreter.Or(in)
	object := objectRef(id)
	st := reflected{ManifestStatus: workv1alpha1.ManifestStatus{Identifier: id}}
	health, err := in.InterpretHealthErr(ctx, observed)
	st.Health = health
	if err != nil || in.Interprets(observed, configv1alpha1.InterpreterOperationInterpretHealth) {
		if err != nil {
			err = fmt.Errorf("cannot interpret the health of %s in cluster %s: %w", object, cluster, err)
		}
		st.outcomes = append(st.outcomes, interpretation{op: interpretHealth, err: err,
			msg: fmt.Sprintf("Health of %s in cluster %s is interpreted into the Work's status.", object, cluster)})
	}
	raw, err := in.ReflectStatus(ctx, observed)
	if err == nil {
		st.Status = raw
	} else {
		err = fmt.Errorf("cannot reflect the status of %s in cluster %s: %w", object, cluster, err)
	}
	st.outcomes = append(st.outcomes, interpretation{op: reflectStatus, err: err,
		msg: fmt.Sprintf("Status of %s in cluster %s is reflected into the Work's status.", object, cluster)})
	return st
}

// objectRef names a manifest in event messages: Kind namespace/name, or
// Kind name.
func objectRef(id workv1alpha1.ResourceIdentifier) string {
	if id.Namespace == "" {
		return id.Kind + " " + id.Name
	}
	return id.Kind + " " + id.Namespace + "/" + id.Name
}

// reportInterpretations raises Karmada's ReflectStatus* and
// InterpretHealth* events on w, one outcome per member object, when it
// changes (StatusEvents).
func (r *Reconciler) reportInterpretations(w *workv1alpha1.Work, statuses []reflected) {
	for _, st := range statuses {
		instance := st.Identifier.Group + "/" + objectRef(st.Identifier)
		for _, o := range st.outcomes {
			op := o.op
			op.Instance = instance
			r.StatusEvents.Outcome(op, o.err, o.msg, w)
		}
	}
}
