package hpa

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	autoscalingapiv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// SetDefaults fills in, in place, what a FederatedHPA's spec leaves out, exactly as Kubernetes
// defaults an HPA's spec (SetDefaults_HorizontalPodAutoscaler of
// k8s.io/kubernetes/pkg/apis/autoscaling/v2, which it calls) and as Karmada's mutating
// webhook defaults a FederatedHPA:
//
//   - minReplicas: 1;
//   - metrics, when absent or empty: Resource cpu, Utilization 80
//     (autoscalingv1alpha1.DefaultFederatedHPACPUUtilization);
//   - behavior, only when present: a missing scaleUp is stabilizationWindowSeconds 0,
//     policies [Pods 4 per 15s, Percent 100 per 15s], selectPolicy Max; a missing scaleDown is
//     policies [Percent 100 per 15s], selectPolicy Max; within a rule that is present, each
//     missing field (selectPolicy, policies, stabilizationWindowSeconds) takes that value.
//     scaleDown's stabilizationWindowSeconds stays unset: the controller's
//     --horizontal-pod-autoscaler-downscale-stabilization applies.
//
// Fields that are set are kept. It reports whether it changed anything. The control plane's
// FlotillaDefaulting admission plugin runs it at create and update, so the stored object shows
// the defaults; the controller runs it on its own copy, so it never meets a nil where a
// default belongs (Karmada issue 4085: a behavior without selectPolicy crashed the controller).
func SetDefaults(f *autoscalingv1alpha1.FederatedHPA) bool {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		MinReplicas: f.Spec.MinReplicas,
		Metrics:     f.Spec.Metrics,
		Behavior:    f.Spec.Behavior.DeepCopy(),
	}}
	autoscalingapiv2.SetDefaults_HorizontalPodAutoscaler(hpa)
	changed := false
	if f.Spec.MinReplicas == nil {
		f.Spec.MinReplicas, changed = hpa.Spec.MinReplicas, true
	}
	if len(f.Spec.Metrics) == 0 {
		f.Spec.Metrics, changed = hpa.Spec.Metrics, true
	}
	if !equality.Semantic.DeepEqual(f.Spec.Behavior, hpa.Spec.Behavior) {
		f.Spec.Behavior, changed = hpa.Spec.Behavior, true
	}
	return changed
}
