package crds_test

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// TestAllServesEveryKarmadaKind pins the inventory: one CRD per Karmada kind Flotilla serves,
// plus the two mcs-api CRDs and the Cluster Inventory API's ClusterProfile.
func TestAllServesEveryKarmadaKind(t *testing.T) {
	want := []string{
		"clusteroverridepolicies.policy.karmada.io",
		"clusterprofiles.multicluster.x-k8s.io",
		"clusterpropagationpolicies.policy.karmada.io",
		"clusterresourcebindings.work.karmada.io",
		"clusters.cluster.karmada.io",
		"clustertaintpolicies.policy.karmada.io",
		"cronfederatedhpas.autoscaling.karmada.io",
		"federatedhpas.autoscaling.karmada.io",
		"federatedresourcequotas.policy.karmada.io",
		"multiclusteringresses.networking.karmada.io",
		"multiclusterservices.networking.karmada.io",
		"overridepolicies.policy.karmada.io",
		"propagationpolicies.policy.karmada.io",
		"remedies.remedy.karmada.io",
		"resourcebindings.work.karmada.io",
		"rolloutstrategies.rollout.flotilla.io",
		"clusterrolloutstrategies.rollout.flotilla.io",
		"resourceinterpretercustomizations.config.karmada.io",
		"resourceinterpreterwebhookconfigurations.config.karmada.io",
		"serviceexports.multicluster.x-k8s.io",
		"serviceimports.multicluster.x-k8s.io",
		"workloadrebalancers.apps.karmada.io",
		"works.work.karmada.io",
	}
	var got []string
	for _, crd := range ourCRDs(t) {
		got = append(got, crd.Name)
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("embedded CRDs differ from the expected set (-want +got):\n%s", diff)
	}
}

// TestAllReturnsFreshObjects checks that callers may modify what All returns.
func TestAllReturnsFreshObjects(t *testing.T) {
	first := ourCRDs(t)
	first[0].Spec.Group = "changed.example.com"
	second := ourCRDs(t)
	if second[0].Spec.Group == "changed.example.com" {
		t.Fatal("All returned a shared object: a caller's change leaked into the next call")
	}
}

// TestCRDsPassAPIServerValidation runs every embedded CRD through the API server's own CRD
// validation: structural schema rules, defaults that validate against their schema, CEL rules
// that compile, and CEL cost estimates under the per-rule and per-CRD limits. A CRD failing
// here would be refused when Flotilla installs it.
func TestCRDsPassAPIServerValidation(t *testing.T) {
	for _, crd := range ourCRDs(t) {
		t.Run(crd.Name, func(t *testing.T) {
			internal := toInternal(t, crd)
			if errs := apiextensionsvalidation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
				for _, err := range errs {
					t.Errorf("%v", err)
				}
			}
		})
	}
}
