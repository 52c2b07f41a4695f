package controllermanager

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/internal/controller/failover/applicationfailover"
	"github.com/flotilla-io/flotilla/internal/controller/failover/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
)

func TestEnabled(t *testing.T) {
	on, err := Enabled([]string{"*", "-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	if on["scheduler"] || !on["detector"] || !on["execution"] {
		t.Errorf("'*,-scheduler' gave %v", on)
	}
	on, _ = Enabled([]string{"scheduler"})
	if !on["scheduler"] || on["detector"] {
		t.Errorf("'scheduler' gave %v", on)
	}
	on, _ = Enabled([]string{"*"})
	if on["agentcsrapproving"] || !on["cluster"] {
		t.Errorf("'*' must leave agentcsrapproving off, as Karmada does: %v", on)
	}
	on, _ = Enabled([]string{"*", "agentcsrapproving"})
	if !on["agentcsrapproving"] || !on["detector"] {
		t.Errorf("'*,agentcsrapproving' gave %v", on)
	}
	on, _ = Enabled([]string{"agentcsrapproving", "*"})
	if !on["agentcsrapproving"] {
		t.Errorf("'agentcsrapproving,*': a later '*' turned off a named controller: %v", on)
	}
	if _, err := Enabled([]string{"sheduler"}); err == nil || !strings.Contains(err.Error(), `unknown controller "sheduler"`) {
		t.Errorf("typo not reported clearly: %v", err)
	}
}

// TestGatesGovernTheControllersKarmadasDo checks which controllers a
// feature gate switches off, as in Karmada's controller manager: Failover
// governs clusterTaintPolicy (cluster failover) but not
// applicationFailover, which acts with the default gates.
func TestGatesGovernTheControllersKarmadasDo(t *testing.T) {
	sink, err := eventrecord.NewSink(&rest.Config{Host: "https://127.0.0.1:1"}, runtime.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	built := func(gates, name string) bool {
		g := features.New()
		if err := g.Set(gates); err != nil {
			t.Fatal(err)
		}
		s := &shared{opts: Options{Features: g}, recorders: sink}
		for _, b := range builders {
			if b.name == name {
				setups, err := b.build(s)
				if err != nil {
					t.Fatal(err)
				}
				return len(setups) > 0
			}
		}
		t.Fatalf("no controller %q", name)
		return false
	}
	for _, c := range []struct {
		gates, controller string
		runs              bool
	}{
		{"", applicationfailover.ControllerName, true},
		{"Failover=true", applicationfailover.ControllerName, true},
		{"", clustertaintpolicy.ControllerName, false},
		{"Failover=true", clustertaintpolicy.ControllerName, true},
	} {
		if got := built(c.gates, c.controller); got != c.runs {
			t.Errorf("%s with gates %q: runs %v, want %v", c.controller, c.gates, got, c.runs)
		}
	}
}
