package localstack

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryAdmissionDecisionIsUniqueAndExplained(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range ControlPlaneAdmission {
		if seen[p.Name] {
			t.Errorf("%s is decided twice", p.Name)
		}
		seen[p.Name] = true
		if strings.TrimSpace(p.Reason) == "" {
			t.Errorf("%s has no reason", p.Name)
		}
	}
}

func TestControlPlaneDisablesWhatKarmadaDisablesAndKeepsClaimAdmission(t *testing.T) {
	off := ControlPlaneDisabledAdmissionPlugins()
	// karmada-apiserver runs with
	// --disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount.
	for _, name := range []string{"ServiceAccount", "StorageObjectInUseProtection"} {
		if !slices.Contains(off, name) {
			t.Errorf("%s is on; Karmada turns it off", name)
		}
	}
	for _, name := range []string{"FlotillaPolicyClaim", "NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"} {
		if slices.Contains(off, name) {
			t.Errorf("%s is off; the control plane needs it", name)
		}
	}
}

func TestOnlyTheControlPlaneAPIServerDisablesAdmissionPlugins(t *testing.T) {
	want := "--disable-admission-plugins=" + strings.Join(ControlPlaneDisabledAdmissionPlugins(), ",")
	for _, c := range goldenPlan(t).Clusters {
		var got []string
		for _, a := range c.Components[0].Args {
			if strings.HasPrefix(a, "--disable-admission-plugins=") || strings.HasPrefix(a, "--enable-admission-plugins=") {
				got = append(got, a)
			}
		}
		var expect []string
		if c.Name == ControlPlaneName {
			expect = []string{want}
		}
		if diff := cmp.Diff(expect, got); diff != "" {
			t.Errorf("%s kube-apiserver admission flags (-want +got):\n%s", c.Name, diff)
		}
	}
}
