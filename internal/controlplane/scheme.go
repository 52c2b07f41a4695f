package controlplane

import (
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	inventoryv1alpha1 "github.com/flotilla-io/flotilla/api/clusterinventory/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// NewScheme returns a scheme with the Kubernetes built-in types, CRDs and
// every Karmada API group Flotilla serves.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1alpha1.AddToScheme,
		policyv1alpha1.AddToScheme,
		workv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme,
		autoscalingv1alpha1.AddToScheme,
		networkingv1alpha1.AddToScheme,
		configv1alpha1.AddToScheme,
		appsv1alpha1.AddToScheme,
		remedyv1alpha1.AddToScheme,
		inventoryv1alpha1.AddToScheme,
		rolloutv1alpha1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// KarmadaGroups is every Karmada API group (*.karmada.io) in scheme, sorted.
func KarmadaGroups(scheme *runtime.Scheme) []string {
	var groups []string
	for gvk := range scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Group, ".karmada.io") && !slices.Contains(groups, gvk.Group) {
			groups = append(groups, gvk.Group)
		}
	}
	slices.Sort(groups)
	return groups
}
