package scheduling

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// optionsFor gives the scheduler a few parallel workers: decisions are pure
// computation plus at most one write.
func optionsFor(ctrl.Manager) controller.Options {
	return controller.Options{MaxConcurrentReconciles: 4}
}
