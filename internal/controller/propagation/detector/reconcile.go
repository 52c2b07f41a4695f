package detector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

// claimKeys are every label and annotation a claim may leave on a template.
var claimLabelKeys = []string{policymatch.PropagationPolicyPermanentIDLabel, policymatch.ClusterPropagationPolicyPermanentIDLabel}
var claimAnnotationKeys = []string{policymatch.PropagationPolicyNameAnnotation, policymatch.PropagationPolicyNamespaceAnnotation, policymatch.ClusterPropagationPolicyNameAnnotation}

// policy is a claiming policy of either kind.
type policy struct {
	claim policymatch.Claim
	obj   client.Object
	spec  *policyv1alpha1.PropagationSpec
	// schedulePriority is spec.schedulePriority resolved (schedulePriority),
	// for the binding.
	schedulePriority *workv1alpha2.SchedulePriority
	// workloadAffinityGroups are the template's groups under the policy's
	// placement.workloadAffinity (with the WorkloadAffinity gate), for the
	// binding.
	workloadAffinityGroups *workv1alpha2.WorkloadAffinityGroups
}

func (d *Detector) reconcile(ctx context.Context, key templateKey) error {
	obj, w, ok := d.template(key)
	if !ok && w != nil {
		// The binding's owner reference lets the garbage collector remove
		// it too, but that can lag by the collector's discovery period;
		// deleting it here makes removal from members immediate.
		return d.deleteBinding(ctx, key, w)
	}
	if !ok || obj.GetDeletionTimestamp() != nil || template.SkipNamespace(obj.GetNamespace()) {
		return nil
	}
	if obj.GetKind() == "" {
		obj = obj.DeepCopy()
		obj.SetGroupVersionKind(w.gvk)
	}
	start := time.Now()
	pps, cpps, err := d.policies(ctx, obj.GetNamespace(), w.namespaced)
	if err != nil {
		return err
	}
	dec, err := d.choose(ctx, obj, pps, cpps)
	if err != nil || dec == nil {
		return err
	}
	matched := time.Now()
	metrics.ObserveMatchPolicy(matched.Sub(start))
	if len(dec.policy.spec.DependentOverrides) > 0 {
		missing, err := d.missingOverrides(ctx, dec.policy)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			// Karmada's dependentOverrides: the policy is not applied
			// (no claim written here, no binding) until every named
			// override exists; its creation wakes this template.
			d.Events.Outcome(applyPolicy, errWaitingForOverrides(dec.policy, missing), "", obj)
			return nil
		}
	}
	claimed, err := d.writeClaim(ctx, obj, dec.policy.claim)
	if dec.preempted != nil {
		d.reportPreemption(ctx, obj, dec, err)
	}
	if err != nil {
		observeApplyPolicy(err, matched)
		return err
	}
	if dec.policy.spec.ActivationPreference == policyv1alpha1.LazyActivation && !d.changes.changedSince(key, dec.policy.obj.GetUID()) {
		// Karmada's lazy activation: the claim moves at once, the policy's
		// placement waits until the template itself changes. No binding
		// is created; one that exists takes the new claim (nothing names a
		// policy that no longer holds the template) and the template's
		// version, and keeps its placement and propagation settings.
		klog.FromContext(ctx).V(1).Info("Lazy policy: the binding keeps its placement until the template changes", "template", klog.KObj(obj), "kind", obj.GetKind(), "policy", dec.policy.claim.String())
		err := d.ensureBinding(ctx, claimed, dec.policy, keepPlacement)
		observeApplyPolicy(err, matched)
		return err
	}
	if dec.policy.schedulePriority, err = d.schedulePriority(ctx, dec.policy); err != nil {
		var missing *missingPriorityClassError
		if errors.As(err, &missing) {
			// Reported; the PriorityClass's creation wakes this template.
			d.Events.Outcome(applyPolicy, err, "", claimed)
			return nil
		}
		return err
	}
	if features.Or(d.Features).Enabled(features.WorkloadAffinity) && claimed.GetNamespace() != "" {
		dec.policy.workloadAffinityGroups = binding.WorkloadGroups(claimed.GetLabels(), dec.policy.spec.Placement.WorkloadAffinity)
	}
	err = d.ensureBinding(ctx, claimed, dec.policy, applyPlacement)
	observeApplyPolicy(err, matched)
	if !retried(err) {
		// Karmada's ApplyPolicySucceed/ApplyPolicyFailed on the template,
		// when the outcome changes; races that a retry settles are not
		// outcomes.
		d.Events.Outcome(applyPolicy, err, "Apply policy("+policyRef(dec.policy.obj)+") succeed", claimed)
	}
	return err
}

// retried reports an error that is a race a retry settles (an
// optimistic-lock conflict, a binding cache behind the API server): not an
// outcome to report or count.
func retried(err error) bool {
	return err != nil && (apierrors.IsConflict(err) || errors.Is(err, errBindingCacheLag))
}

// observeApplyPolicy records one application of a policy (the claim and the
// binding), begun at start, in resource_apply_policy_duration_seconds and
// policy_apply_attempts_total; a retried race is not an attempt.
func observeApplyPolicy(err error, start time.Time) {
	if !retried(err) {
		metrics.ObserveApplyPolicy(err, time.Since(start))
	}
}

// applyPolicy is the operation whose outcome the detector reports.
var applyPolicy = eventrecord.Operation{Succeed: events.ApplyPolicySucceed, Failed: events.ApplyPolicyFailed}

// policyRef names a policy in event messages: namespace/name, or name.
func policyRef(p client.Object) string {
	if p.GetNamespace() == "" {
		return p.GetName()
	}
	return p.GetNamespace() + "/" + p.GetName()
}

// policyKindRef is policyRef with the policy's kind in front, for messages that name a
// policy to a user: "PropagationPolicy ns/name" or "ClusterPropagationPolicy name".
func policyKindRef(p client.Object) string {
	if p.GetNamespace() == "" {
		return "ClusterPropagationPolicy " + p.GetName()
	}
	return "PropagationPolicy " + policyRef(p)
}

// errBindingCacheLag means the binding exists although the cache does not
// have it yet; the template is reconciled again once it has, so that what
// this reconcile wanted to write is not dropped.
var errBindingCacheLag = errors.New("the binding cache is behind the API server")

// policies lists the cached policies that may claim a template of
// namespace ns: the PropagationPolicies of ns (none for a cluster-scoped
// kind) and every ClusterPropagationPolicy. The objects are the cache's
// own, not copies: read them, never change them.
func (d *Detector) policies(ctx context.Context, ns string, namespaced bool) ([]*policyv1alpha1.PropagationPolicy, []*policyv1alpha1.ClusterPropagationPolicy, error) {
	var pps []*policyv1alpha1.PropagationPolicy
	if namespaced {
		list := &policyv1alpha1.PropagationPolicyList{}
		if err := d.Client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, fmt.Errorf("list PropagationPolicies: %w", err)
		}
		for i := range list.Items {
			pps = append(pps, &list.Items[i])
		}
	}
	clist := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.Client.List(ctx, clist, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("list ClusterPropagationPolicies: %w", err)
	}
	cpps := make([]*policyv1alpha1.ClusterPropagationPolicy, 0, len(clist.Items))
	for i := range clist.Items {
		cpps = append(cpps, &clist.Items[i])
	}
	return pps, cpps, nil
}

// decision is what the detector decided for a template: the policy that
// claims it and, when that policy takes it from another, the claim it
// preempts.
type decision struct {
	policy    *policy
	preempted *policymatch.Claim
}

// choose returns the policy that claims obj. A claim is sticky: the policy
// recorded on the template keeps it while it exists and still selects it,
// unless, with the PropagationPolicyPreemption gate on, a policy allowed to
// preempt outranks it (policymatch.Preemptor), which then takes it.
// Otherwise the best match claims it. A stale claim with no new match is
// removed from the template and its binding, and nil is returned: what was
// propagated stays in place, as in Karmada.
func (d *Detector) choose(ctx context.Context, obj *unstructured.Unstructured, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) (*decision, error) {
	if holder := holderOf(obj, pps, cpps); holder != nil {
		if !features.Or(d.Features).Enabled(features.PropagationPolicyPreemption) {
			if c, ok := policymatch.Preemptor(obj, holder.claim, pps, cpps); ok {
				d.warnPreemptionOff(ctx, c)
			}
			return &decision{policy: holder}, nil
		}
		c, ok := policymatch.Preemptor(obj, holder.claim, pps, cpps)
		if !ok {
			return &decision{policy: holder}, nil
		}
		dec := &decision{preempted: &holder.claim}
		p, err := d.policyFor(ctx, c, pps, cpps)
		if err != nil {
			dec.policy = &policy{claim: c}
			d.reportPreemption(ctx, obj, dec, err)
			return nil, err
		}
		dec.policy = p
		return dec, nil
	}
	c, ok := policymatch.BestMatch(obj, pps, cpps)
	if !ok {
		if _, err := d.writeClaim(ctx, obj, policymatch.Claim{}); err != nil {
			return nil, err
		}
		return nil, d.unclaimBinding(ctx, obj)
	}
	p, err := d.policyFor(ctx, c, pps, cpps)
	if err != nil {
		return nil, err
	}
	return &decision{policy: p}, nil
}

// holderOf returns the policy whose claim obj carries, while that policy
// exists, is not being deleted and still selects obj; nil otherwise.
func holderOf(obj *unstructured.Unstructured, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) *policy {
	ann := obj.GetAnnotations()
	if name := ann[policymatch.PropagationPolicyNameAnnotation]; name != "" {
		for _, p := range pps {
			if p.Name == name && p.Namespace == ann[policymatch.PropagationPolicyNamespaceAnnotation] && p.DeletionTimestamp == nil {
				if c, ok := policymatch.BestMatch(obj, []*policyv1alpha1.PropagationPolicy{p}, nil); ok {
					return &policy{claim: c, obj: p, spec: &p.Spec}
				}
			}
		}
	} else if name := ann[policymatch.ClusterPropagationPolicyNameAnnotation]; name != "" {
		for _, p := range cpps {
			if p.Name == name && p.DeletionTimestamp == nil {
				if c, ok := policymatch.BestMatch(obj, nil, []*policyv1alpha1.ClusterPropagationPolicy{p}); ok {
					return &policy{claim: c, obj: p, spec: &p.Spec}
				}
			}
		}
	}
	return nil
}

// policyFor returns the listed policy that claim c names, with its
// permanent id.
func (d *Detector) policyFor(ctx context.Context, c policymatch.Claim, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) (*policy, error) {
	if c.Kind == policymatch.KindClusterPropagationPolicy {
		for _, p := range cpps {
			if p.Name == c.Name {
				return d.withPermanentID(ctx, &policy{claim: c, obj: p, spec: &p.Spec}, policymatch.ClusterPropagationPolicyPermanentIDLabel)
			}
		}
	} else {
		for _, p := range pps {
			if p.Name == c.Name && p.Namespace == c.Namespace {
				return d.withPermanentID(ctx, &policy{claim: c, obj: p, spec: &p.Spec}, policymatch.PropagationPolicyPermanentIDLabel)
			}
		}
	}
	return nil, fmt.Errorf("matched policy %s vanished", c)
}

// withPermanentID gives the policy its permanent-id label if it has none
// (Karmada's mutating webhook does this at admission; Flotilla's admission
// plugin does too, so this is for policies created while it was off).
func (d *Detector) withPermanentID(ctx context.Context, p *policy, label string) (*policy, error) {
	if id := p.obj.GetLabels()[label]; id != "" {
		p.claim.PermanentID = id
		return p, nil
	}
	id := uuid.NewString()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, label, id)
	// The listed policy is the cache's own object; the patch writes its
	// answer into a copy.
	obj := p.obj.DeepCopyObject().(client.Object)
	if err := d.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return nil, fmt.Errorf("label policy %s with its permanent id: %w", p.obj.GetName(), err)
	}
	p.claim.PermanentID = id
	return p, nil
}

// writeClaim makes the template's claim labels and annotations exactly those
// of claim (none for a zero claim), with one merge patch when they differ,
// and returns the template as it now is (so the binding records the
// template's new resourceVersion and is not rewritten on the patch's echo).
func (d *Detector) writeClaim(ctx context.Context, obj *unstructured.Unstructured, claim policymatch.Claim) (*unstructured.Unstructured, error) {
	wantL, wantA := claim.TemplateLabels(), claim.TemplateAnnotations()
	if claim.Name == "" {
		wantA = nil
	}
	labels := map[string]any{}
	annotations := map[string]any{}
	for _, k := range claimLabelKeys {
		if v, ok := wantL[k]; ok {
			if obj.GetLabels()[k] != v {
				labels[k] = v
			}
		} else if _, has := obj.GetLabels()[k]; has {
			labels[k] = nil
		}
	}
	for _, k := range claimAnnotationKeys {
		if v, ok := wantA[k]; ok {
			if obj.GetAnnotations()[k] != v {
				annotations[k] = v
			}
		} else if _, has := obj.GetAnnotations()[k]; has {
			annotations[k] = nil
		}
	}
	if len(labels) == 0 && len(annotations) == 0 {
		return obj, nil
	}
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	patch := &unstructured.Unstructured{Object: map[string]any{"metadata": meta}}
	data, err := patch.MarshalJSON()
	if err != nil {
		return nil, err
	}
	gvr := d.gvrFor(obj)
	done := d.Gate.Write()
	updated, err := d.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{})
	done()
	if err != nil {
		return nil, fmt.Errorf("record claim on %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	if d.ReadYourWrites {
		d.claimed.Store(templateKey{GVR: gvr, Namespace: obj.GetNamespace(), Name: obj.GetName()}, updated)
	}
	if claim.Name != "" {
		klog.FromContext(ctx).V(1).Info("Claimed template", "kind", obj.GetKind(), "template", klog.KObj(obj), "policy", claim.Name, "readYourWrites", d.ReadYourWrites)
	}
	return updated, nil
}

// unclaimBinding removes a released policy's claim labels and annotations
// from the template's binding, as Karmada does; the binding itself, its
// Works and the member objects stay.
func (d *Detector) unclaimBinding(ctx context.Context, obj *unstructured.Unstructured) error {
	b := binding.New(obj.GetNamespace(), binding.Name(obj.GetName(), obj.GetKind()))
	if err := d.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
		return client.IgnoreNotFound(err)
	}
	labels, annotations := b.GetLabels(), b.GetAnnotations()
	changed := false
	for _, k := range claimLabelKeys {
		if _, ok := labels[k]; ok {
			delete(labels, k)
			changed = true
		}
	}
	for _, k := range claimAnnotationKeys {
		if _, ok := annotations[k]; ok {
			delete(annotations, k)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	b.SetLabels(labels)
	b.SetAnnotations(annotations)
	if err := d.Client.Update(ctx, b); err != nil {
		return fmt.Errorf("remove the released claim from binding %s: %w", b.GetName(), err)
	}
	return nil
}

func (d *Detector) gvrFor(obj *unstructured.Unstructured) schema.GroupVersionResource {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byGVK[obj.GroupVersionKind()]
}

// bindingWrite says how much of a policy ensureBinding writes.
type bindingWrite bool

const (
	// applyPlacement writes the policy's placement and propagation
	// settings, creating the binding if need be.
	applyPlacement bindingWrite = true
	// keepPlacement leaves a binding's placement and propagation settings
	// as they are and creates none (a Lazy policy before its template
	// changes).
	keepPlacement bindingWrite = false
)

// ensureBinding creates or updates the template's binding so that its spec
// carries the template reference, replicas and requirements, and (with
// applyPlacement) the policy's placement and propagation settings. Fields
// other controllers own (spec.clusters, eviction tasks, status) are left
// alone.
func (d *Detector) ensureBinding(ctx context.Context, obj *unstructured.Unstructured, p *policy, write bindingWrite) error {
	b := binding.New(obj.GetNamespace(), binding.Name(obj.GetName(), obj.GetKind()))
	err := d.Client.Get(ctx, client.ObjectKeyFromObject(b), b)
	notFound := apierrors.IsNotFound(err)
	if err != nil && !notFound {
		return fmt.Errorf("get binding %s: %w", b.GetName(), err)
	}
	if notFound && write == keepPlacement {
		return nil
	}
	var current binding.Object
	if !notFound {
		current = b.DeepCopyObject().(binding.Object)
	}
	shape, err := workloadShapeOf(ctx, interpreter.Or(d.Interpreter), obj)
	for _, o := range shape.asked {
		// Karmada's GetReplicas* and GetComponents* on the template, when
		// the outcome changes.
		d.Events.Outcome(o.op, o.err, o.msg, obj)
	}
	if err != nil {
		return err
	}
	desired := desiredBinding(b, current, obj, p, write, shape)
	if notFound {
		return d.createBinding(ctx, desired)
	}
	if equality.Semantic.DeepEqual(current, desired) {
		return nil
	}
	if d.Preschedule != nil && write == applyPlacement {
		// New replicas or a new placement: the scheduler's decision goes
		// into the same write (Preschedule).
		if err := d.Preschedule(ctx, d.Client, desired); err != nil {
			return fmt.Errorf("preschedule binding %s: %w", desired.GetName(), err)
		}
	}
	done := d.Gate.Write()
	defer done()
	if err := d.Client.Update(ctx, desired); err != nil {
		return fmt.Errorf("update binding %s: %w", desired.GetName(), err)
	}
	klog.FromContext(ctx).V(1).Info("Updated binding", "binding", klog.KObj(desired), "templateResourceVersion", binding.Spec(desired).Resource.ResourceVersion)
	return nil
}

// desiredBinding returns b (modified in place: a new binding, or a copy of
// current, the binding as it is) with the template and the policy written
// into it: spec.resource, replicas and requirements, the policy's placement
// and propagation settings (with applyPlacement only; keepPlacement leaves
// b's), the claim labels and annotations, the template fingerprint and the
// owner reference. It reads and writes nothing else.
func desiredBinding(b, current binding.Object, obj *unstructured.Unstructured, p *policy, write bindingWrite, shape workloadShape) binding.Object {
	spec := binding.Spec(b)
	spec.Resource = workv1alpha2.ObjectReference{
		APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
	}
	if fp := template.Fingerprint(obj); fp != "" && current != nil && current.GetAnnotations()[template.FingerprintAnnotation] == fp {
		// Only the template's status moved on (aggregation writes it):
		// keep the recorded version, so the binding is not rewritten and
		// its Works are not re-rendered for nothing.
		spec.Resource.ResourceVersion = binding.Spec(current).Resource.ResourceVersion
	}
	spec.Replicas, spec.ReplicaRequirements, spec.Components = shape.replicas, shape.requirements, shape.components
	if write == applyPlacement {
		ps := p.spec
		spec.Placement = ps.Placement.DeepCopy()
		spec.PropagateDeps = ps.PropagateDeps
		spec.SchedulerName = ps.SchedulerName
		spec.Failover = ps.Failover.DeepCopy()
		spec.ConflictResolution = ps.ConflictResolution
		spec.PreserveResourcesOnDeletion = ps.PreserveResourcesOnDeletion
		spec.Suspension = binding.MergeSuspension(spec.Suspension, ps.Suspension)
		spec.SchedulePriority = p.schedulePriority
		spec.WorkloadAffinityGroups = p.workloadAffinityGroups
	}
	labels := b.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range claimLabelKeys {
		delete(labels, k)
	}
	for k, v := range p.claim.TemplateLabels() {
		labels[k] = v
	}
	if labels[binding.IDLabel(b)] == "" {
		labels[binding.IDLabel(b)] = uuid.NewString()
	}
	b.SetLabels(labels)
	annotations := b.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, k := range claimAnnotationKeys {
		delete(annotations, k)
	}
	for k, v := range p.claim.TemplateAnnotations() {
		annotations[k] = v
	}
	if fp := template.Fingerprint(obj); fp != "" {
		annotations[template.FingerprintAnnotation] = fp
	} else {
		delete(annotations, template.FingerprintAnnotation)
	}
	// The policy's staged-rollout strategy, in the same write as the
	// template change it stages: the binding controller's gate and the
	// change can never be seen apart.
	if st := rolloutStrategy(p.obj); st != "" {
		annotations[rolloutv1alpha1.StrategyAnnotation] = st
	} else {
		delete(annotations, rolloutv1alpha1.StrategyAnnotation)
	}
	if shape.revision != "" {
		annotations[interpreter.RevisionAnnotation] = shape.revision
	} else {
		delete(annotations, interpreter.RevisionAnnotation)
	}
	b.SetAnnotations(annotations)
	b.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}})
	return b
}

// rolloutStrategy is the strategy a policy names with the annotation
// rollout.flotilla.io/strategy, qualified by kind: "RolloutStrategy/<name>"
// (in the policy's namespace) or "ClusterRolloutStrategy/<name>" (a
// ClusterPropagationPolicy's plain name, or one qualified so); "" for none.
func rolloutStrategy(policy client.Object) string {
	if policy == nil {
		return ""
	}
	v := strings.TrimSpace(policy.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation])
	switch {
	case v == "", strings.Contains(v, "/"):
		return v
	case policy.GetNamespace() == "":
		return "ClusterRolloutStrategy/" + v
	}
	return "RolloutStrategy/" + v
}

// createBinding creates a new binding, born with the binding controller's
// finalizer and, when the scheduler runs in this process, scheduled: fewer
// writes and hops.
func (d *Detector) createBinding(ctx context.Context, b binding.Object) error {
	controllerutil.AddFinalizer(b, binding.Finalizer)
	if d.Preschedule != nil {
		if err := d.Preschedule(ctx, d.Client, b); err != nil {
			return fmt.Errorf("preschedule binding %s: %w", b.GetName(), err)
		}
	}
	done := d.Gate.Write()
	err := d.Client.Create(ctx, b)
	done()
	klog.FromContext(ctx).V(1).Info("Created binding", "binding", klog.KObj(b), "prescheduled", len(binding.Spec(b).Clusters) > 0, "err", err)
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create binding %s: %w", b.GetName(), errBindingCacheLag)
	case err != nil:
		return fmt.Errorf("create binding %s: %w", b.GetName(), err)
	}
	return nil
}

// deleteBinding removes the binding of a template that no longer exists.
func (d *Detector) deleteBinding(ctx context.Context, key templateKey, w *watched) error {
	b := binding.New(key.Namespace, binding.Name(key.Name, w.gvk.Kind))
	if err := d.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
		return client.IgnoreNotFound(err)
	}
	res := binding.Spec(b).Resource
	if res.Name != key.Name || res.Kind != w.gvk.Kind || !b.GetDeletionTimestamp().IsZero() {
		return nil
	}
	uid := b.GetUID()
	err := d.Client.Delete(ctx, b, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// workloadShape is what the interpreter says of a template's replicas: its
// count and per-replica requirements (InterpretReplica), and its components
// (InterpretComponent, for multi-template workloads).
type workloadShape struct {
	replicas     int32
	requirements *workv1alpha2.ReplicaRequirements
	components   []workv1alpha2.Component
	// revision is the interpreter's revision for the kind (see
	// interpreter.RevisionAnnotation).
	revision string
	// asked are the outcomes of the operations the interpreter answers
	// for the kind, in the order asked, for their events.
	asked []interpreted
}

// interpreted is the outcome of one interpreter operation on a template:
// the event reasons, the error, and the message of a success.
type interpreted struct {
	op  eventrecord.Operation
	err error
	msg string
}

// The interpreter operations whose outcomes the detector reports on the
// template.
var (
	getReplicas   = eventrecord.Operation{Succeed: events.GetReplicasSucceed, Failed: events.GetReplicasFailed}
	getComponents = eventrecord.Operation{Succeed: events.GetComponentsSucceed, Failed: events.GetComponentsFailed}
)

// workloadShapeOf asks the interpreter for obj's shape. A failing
// customization fails the reconcile, so the binding keeps its last good
// replicas instead of dropping to none. The shape's asked lists the
// outcome of InterpretReplica when something interprets replicas of obj
// (a built-in workload, a customization) and of InterpretComponent when a
// customization interprets components, failures included; it is filled
// in on error too.
func workloadShapeOf(ctx context.Context, in *interpreter.Interpreter, obj *unstructured.Unstructured) (workloadShape, error) {
	var s workloadShape
	replicas, req, ok, err := in.GetReplicas(ctx, obj)
	if ok || err != nil {
		s.asked = append(s.asked, interpreted{op: getReplicas, err: err, msg: "Interpreted the replicas of the resource template for its binding."})
	}
	if err != nil {
		return s, err
	}
	if ok {
		s.replicas, s.requirements = replicas, req
	}
	components := in.Interprets(obj, configv1alpha1.InterpreterOperationInterpretComponent)
	s.components, err = in.Components(ctx, obj)
	if components || err != nil {
		s.asked = append(s.asked, interpreted{op: getComponents, err: err, msg: "Interpreted the components of the resource template for its binding."})
	}
	if err != nil {
		return s, err
	}
	s.revision = in.Revision(obj.GroupVersionKind())
	return s, nil
}
