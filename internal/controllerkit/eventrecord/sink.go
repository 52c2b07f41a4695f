package eventrecord

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// Sink is a process's one event broadcaster. It writes core/v1 Events, as
// Karmada's components do (so `kubectl describe`, `kubectl get events` and
// filters on involvedObject or source.component written for Karmada see
// them), through client-go's correlator, which aggregates repeats and drops
// spam. It replaces controller-runtime's Manager.GetEventRecorderFor, which is
// deprecated in favour of the events.k8s.io API Karmada does not write.
//
// Add it to the manager (mgr.Add) so that it shuts down with the process;
// events recorded before the manager starts are delivered too.
type Sink struct {
	broadcaster record.EventBroadcaster
	scheme      *runtime.Scheme
}

// NewSink starts a broadcaster that writes Events through cfg. scheme tells
// the kind of the typed objects events are recorded on. The error is the
// clientset's, for an unusable cfg.
func NewSink(cfg *rest.Config, scheme *runtime.Scheme) (*Sink, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	return &Sink{broadcaster: b, scheme: scheme}, nil
}

// For returns a recorder whose events name component as their source
// (kubectl's FROM column): Karmada's name for the controller, such as
// "execution-controller".
func (s *Sink) For(component string) record.EventRecorder {
	return s.broadcaster.NewRecorder(s.scheme, corev1.EventSource{Component: component})
}

// Start waits for ctx to end, then stops the broadcaster: the manager's
// Runnable.
func (s *Sink) Start(ctx context.Context) error {
	<-ctx.Done()
	s.broadcaster.Shutdown()
	return nil
}
