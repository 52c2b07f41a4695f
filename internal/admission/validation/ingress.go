package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/networking"
	networkingapiv1 "k8s.io/kubernetes/pkg/apis/networking/v1"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// validateMultiClusterIngress checks a MultiClusterIngress's spec as Kubernetes checks an
// Ingress's, which is what Karmada's webhook does: rule hosts are DNS names (a wildcard
// only as the first label), paths are absolute with pathType Exact, Prefix or
// ImplementationSpecific, backends name a Service with a port name or a port number from 1
// to 65535 (or a resource), and TLS secret names are object names. Errors carry field paths
// rooted at "spec".
func validateMultiClusterIngress(mci *networkingv1alpha1.MultiClusterIngress) field.ErrorList {
	var spec networking.IngressSpec
	if err := networkingapiv1.Convert_v1_IngressSpec_To_networking_IngressSpec(&mci.Spec, &spec, nil); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	return networkingvalidation.ValidateIngressSpec(&spec, field.NewPath("spec"), networkingvalidation.IngressValidationOptions{})
}
