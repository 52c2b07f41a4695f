package cronfederatedhpa

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// federatedHPAKind is the scale target kind whose bounds a rule sets
// (targetMinReplicas, targetMaxReplicas) instead of its replicas.
var federatedHPAKind = autoscalingv1alpha1.SchemeGroupVersion.WithKind("FederatedHPA").GroupKind()

// targetKind reads obj's scaleTargetRef group, version and kind.
func targetKind(obj *autoscalingv1alpha1.CronFederatedHPA) (schema.GroupVersionKind, error) {
	ref := obj.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("spec.scaleTargetRef.apiVersion %q: %w", ref.APIVersion, err)
	}
	return gv.WithKind(ref.Kind), nil
}

// apply runs one rule against the object's current scaleTargetRef and says
// what it set. A workload target gets its /scale replicas set to
// targetReplicas, the way `kubectl scale` does it; a FederatedHPA gets only
// the bounds the rule sets. Errors explain what is missing or refused.
func (r *Reconciler) apply(ctx context.Context, obj *autoscalingv1alpha1.CronFederatedHPA, rule *autoscalingv1alpha1.CronFederatedHPARule) (*autoscalingv1alpha1.SuccessfulExecution, error) {
	gvk, err := targetKind(obj)
	if err != nil {
		return nil, err
	}
	name := obj.Spec.ScaleTargetRef.Name
	if gvk.GroupKind() == federatedHPAKind {
		return r.setBounds(ctx, obj.Namespace, name, rule)
	}
	if rule.TargetReplicas == nil {
		return nil, fmt.Errorf("rule %q sets no targetReplicas, which a %s target needs", rule.Name, gvk.Kind)
	}
	mapping, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the control plane serves no %s in %s: %w", gvk.Kind, gvk.GroupVersion(), err)
	}
	var res dynamic.ResourceInterface = r.Dynamic.Resource(mapping.Resource)
	where := name
	if mapping.Scope.Name() == "namespace" {
		res, where = r.Dynamic.Resource(mapping.Resource).Namespace(obj.Namespace), obj.Namespace+"/"+name
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": *rule.TargetReplicas}})
	done := r.Gate.Write()
	defer done()
	if _, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
		if apierrors.IsNotFound(err) {
			if _, gerr := res.Get(ctx, name, metav1.GetOptions{}); gerr == nil {
				return nil, fmt.Errorf("%s %s has no scale subresource; scaleTargetRef must name a kind with one, or a FederatedHPA", gvk.Kind, where)
			}
			return nil, fmt.Errorf("scale target %s %s does not exist", gvk.Kind, where)
		}
		return nil, fmt.Errorf("scale %s %s to %d: %w", gvk.Kind, where, *rule.TargetReplicas, err)
	}
	return &autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: rule.TargetReplicas}, nil
}

// setBounds writes the rule's targetMinReplicas and targetMaxReplicas, only
// those it sets, to the FederatedHPA's minReplicas and maxReplicas.
func (r *Reconciler) setBounds(ctx context.Context, ns, name string, rule *autoscalingv1alpha1.CronFederatedHPARule) (*autoscalingv1alpha1.SuccessfulExecution, error) {
	if rule.TargetMinReplicas == nil && rule.TargetMaxReplicas == nil {
		return nil, fmt.Errorf("rule %q sets neither targetMinReplicas nor targetMaxReplicas, which a FederatedHPA target needs", rule.Name)
	}
	spec := map[string]any{}
	applied := &autoscalingv1alpha1.SuccessfulExecution{}
	if rule.TargetMinReplicas != nil {
		spec["minReplicas"] = *rule.TargetMinReplicas
		applied.AppliedMinReplicas = rule.TargetMinReplicas
	}
	if rule.TargetMaxReplicas != nil {
		spec["maxReplicas"] = *rule.TargetMaxReplicas
		applied.AppliedMaxReplicas = rule.TargetMaxReplicas
	}
	patch, _ := json.Marshal(map[string]any{"spec": spec})
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	done := r.Gate.Write()
	defer done()
	if err := r.Client.Patch(ctx, fhpa, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("scale target FederatedHPA %s/%s does not exist", ns, name)
		}
		return nil, fmt.Errorf("set the bounds of FederatedHPA %s/%s: %w", ns, name, err)
	}
	return applied, nil
}
