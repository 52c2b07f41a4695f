package controlplane

import (
	"slices"
	"testing"
)

func TestKarmadaGroups(t *testing.T) {
	want := []string{"apps.karmada.io", "autoscaling.karmada.io", "cluster.karmada.io", "config.karmada.io",
		"networking.karmada.io", "policy.karmada.io", "remedy.karmada.io", "work.karmada.io"}
	if got := KarmadaGroups(NewScheme()); !slices.Equal(got, want) {
		t.Errorf("KarmadaGroups = %v, want %v", got, want)
	}
}
