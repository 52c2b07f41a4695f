package component

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	kubeoptions "k8s.io/kubernetes/pkg/kubeapiserver/options"

	"github.com/flotilla-io/flotilla/internal/admission/claim"
	"github.com/flotilla-io/flotilla/internal/admission/defaulting"
	"github.com/flotilla-io/flotilla/internal/admission/validation"
	"github.com/flotilla-io/flotilla/internal/localstack"
)

// defaultOnPlugins is what the linked kube-apiserver turns on when no
// admission flag is given.
func defaultOnPlugins() sets.Set[string] {
	return sets.New(kubeoptions.AllOrderedPlugins...).Difference(kubeoptions.DefaultOffAdmissionPlugins())
}

func TestEveryDefaultOnAdmissionPluginHasAControlPlaneDecision(t *testing.T) {
	decided := sets.New[string]()
	for _, p := range localstack.ControlPlaneAdmission {
		decided.Insert(p.Name)
	}
	if missing := sets.List(defaultOnPlugins().Difference(decided)); len(missing) != 0 {
		t.Errorf("kube-apiserver turns on %v by default and localstack.ControlPlaneAdmission does not say whether templates want them", missing)
	}
	if extra := sets.List(decided.Difference(defaultOnPlugins())); len(extra) != 0 {
		t.Errorf("localstack.ControlPlaneAdmission decides %v, which kube-apiserver does not turn on by default", extra)
	}
}

func TestControlPlaneAdmissionFlagLeavesClaimAdmissionOn(t *testing.T) {
	s := newRunOptionsWithPlugins(controlPlanePlugins...)
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	flag := "--disable-admission-plugins=" + strings.Join(localstack.ControlPlaneDisabledAdmissionPlugins(), ",")
	if err := fs.Parse([]string{flag}); err != nil {
		t.Fatalf("parse %s: %v", flag, err)
	}
	if errs := s.Admission.Validate(); len(errs) != 0 {
		t.Fatalf("kube-apiserver refuses %s: %v", flag, errs)
	}
	// kube-apiserver's rule: in recommended order, every plugin not off by
	// default or explicitly enabled, minus the disabled ones.
	ga := s.Admission.GenericAdmission
	var enabled []string
	for _, p := range ga.RecommendedPluginOrder {
		if (!ga.DefaultOffPlugins.Has(p) || slices.Contains(ga.EnablePlugins, p)) && !slices.Contains(ga.DisablePlugins, p) {
			enabled = append(enabled, p)
		}
	}
	for _, p := range localstack.ControlPlaneAdmission {
		if on := slices.Contains(enabled, p.Name); on == p.Off {
			t.Errorf("%s: enabled=%t, want %t", p.Name, on, !p.Off)
		}
	}
	i := slices.Index(enabled, claim.PluginName)
	if i < 0 || i+3 >= len(enabled) || enabled[i+1] != defaulting.PluginName || enabled[i+2] != validation.PluginName || enabled[i+3] != "MutatingAdmissionWebhook" {
		t.Errorf("want %s, %s and %s on, just before the mutating webhooks; enabled: %v", claim.PluginName, defaulting.PluginName, validation.PluginName, enabled)
	}
}
