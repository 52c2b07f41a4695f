package controllermanager

import (
	"strings"
	"testing"
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
