package component_test

import (
	"slices"
	"testing"

	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// TestControlPlaneControllersAreKnownToKubeControllerManager keeps the
// stack's --controllers list in line with the kube-controller-manager it
// embeds, which refuses unknown names at start-up.
func TestControlPlaneControllersAreKnownToKubeControllerManager(t *testing.T) {
	known := kcmapp.KnownControllers()
	for _, c := range localstack.ControlPlaneControllers {
		if !slices.Contains(known, c) {
			t.Errorf("kube-controller-manager does not know controller %q", c)
		}
	}
}
