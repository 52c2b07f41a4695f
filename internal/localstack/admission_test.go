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

func TestAdmissionClaimFastPathOffDisablesTheClaimPlugin(t *testing.T) {
	c := &Config{DataDir: "/data", Members: []MemberConfig{DefaultMember(1, defaults)}, NoAdmissionClaim: true}
	c.Complete(defaults)
	p, err := BuildPlan(c, &SequentialPorts{Next: 31000})
	if err != nil {
		t.Fatal(err)
	}
	want := "--disable-admission-plugins=" + strings.Join(append(ControlPlaneDisabledAdmissionPlugins(), AdmissionClaimPlugin), ",")
	found := false
	for _, a := range p.ControlPlane().Components[0].Args {
		found = found || a == want
	}
	if !found {
		t.Errorf("control plane kube-apiserver args lack %s:\n%v", want, p.ControlPlane().Components[0].Args)
	}
}

func TestFeatureGatesGoToTheControllerManager(t *testing.T) {
	c := &Config{DataDir: "/data", Members: []MemberConfig{DefaultMember(1, defaults)},
		FeatureGates: "PropagationPolicyPreemption=true", ControllerManagerArgs: []string{"--feature-gates=PropagateDeps=false"}}
	c.Complete(defaults)
	p, err := BuildPlan(c, &SequentialPorts{Next: 31000})
	if err != nil {
		t.Fatal(err)
	}
	args := p.ControllerManager.Args
	gates := -1
	for i, a := range args {
		if a == "--feature-gates=MultiClusterService=true,PropagationPolicyPreemption=true" {
			gates = i
		}
	}
	if gates < 0 || args[len(args)-1] != "--feature-gates=PropagateDeps=false" {
		t.Errorf("controller manager args %v: want the stack's --feature-gates (MultiClusterService on, then the user's), then the extra flags last", args)
	}
	if !slices.Contains(args, "--mcs-lb-pool="+MCSLoadBalancerPool) {
		t.Errorf("controller manager args %v lack the local load balancer's pool", args)
	}
	for _, comp := range p.Components() {
		cbor := false
		for _, a := range comp.Args {
			if a == "--feature-gates="+APIServerFeatureGates && strings.HasSuffix(comp.Name, KindAPIServer) {
				cbor = true
			} else if strings.HasPrefix(a, "--feature-gates") {
				t.Errorf("%s gets %s: Flotilla's gates are not Kubernetes'", comp.Name, a)
			}
		}
		if strings.HasSuffix(comp.Name, KindAPIServer) && !cbor {
			t.Errorf("%s lacks --feature-gates=%s: Flotilla's clients read in CBOR", comp.Name, APIServerFeatureGates)
		}
	}
}
