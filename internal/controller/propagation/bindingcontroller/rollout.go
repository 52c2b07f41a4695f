package bindingcontroller

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/rollout"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// rolloutWorkAnnotations are the Work annotations the staged-rollout gate
// owns: a rendering's rollout map says which are set; the others are
// removed.
var rolloutWorkAnnotations = []string{rollout.StrategyWorkAnnotation, rollout.PendingAnnotation, rollout.PreviousAnnotation, rollout.RevisionAnnotation}

// digestRenderings sets the Digest of every rendering of a binding with a
// strategy and returns their Revision ("" without a strategy).
func digestRenderings(b binding.Object, renderings []rendering) (string, error) {
	if b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation] == "" {
		return "", nil
	}
	var all []string
	for i := range renderings {
		rd := &renderings[i]
		if rd.err != nil {
			continue
		}
		d, err := rollout.Digest(rd.manifest.Object)
		if err != nil {
			return "", err
		}
		rd.digest = d
		all = append(all, d)
	}
	return rollout.Revision(all), nil
}

// stage applies the staged-rollout gate (rollout.Gate) to rd when the
// binding names a strategy (annotation rollout.flotilla.io/strategy, set by
// the detector in the same write as the template change): a cluster whose
// rendering changed keeps the manifest its Work holds, with the new
// replicas, until the rollout controller admits the new rendering in
// status.rollout; an aborted rollout takes admitted clusters back to the
// manifest kept in rollout.flotilla.io/previous. It sets rd.rollout, the
// gate's Work annotations, and may replace rd.manifest. Errors come from
// reading the Work or decoding a manifest.
func (r *Reconciler) stage(ctx context.Context, b binding.Object, revision string, rd *rendering) error {
	strategy := b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation]
	if strategy == "" || rd.err != nil {
		return nil
	}
	rd.rollout = map[string]string{rollout.StrategyWorkAnnotation: strategy, rollout.RevisionAnnotation: revision}
	spec := binding.Spec(b)
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: clusterv1alpha1.ExecutionNamespace(rd.cluster), Name: binding.WorkName(spec.Resource.Kind, spec.Resource.Namespace, spec.Resource.Name)}
	if err := r.Client.Get(ctx, key, w); err != nil {
		return client.IgnoreNotFound(err) // a first placement is not held
	}
	if len(w.Spec.Workload.Manifests) != 1 {
		return nil
	}
	currentRaw := w.Spec.Workload.Manifests[0].Raw
	current := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(currentRaw, &current.Object); err != nil {
		return fmt.Errorf("decode the manifest of Work %s: %w", key, err)
	}
	newDigest := rd.digest
	curDigest, err := rollout.Digest(current.Object)
	if err != nil {
		return err
	}
	st := binding.Status(b).Rollout
	in := rollout.GateInput{Staged: true, HasWork: true, Current: curDigest, New: newDigest}
	previous := w.Annotations[rollout.PreviousAnnotation]
	var previousObj *unstructured.Unstructured
	if st != nil {
		if i := slices.IndexFunc(st.Clusters, func(c workv1alpha2.ClusterRollout) bool { return c.Name == rd.cluster }); i >= 0 {
			in.Admitted = st.Clusters[i].Rendering
		}
		if st.Aborted && previous != "" {
			in.Aborted = true
			if previousObj, in.Previous, err = decodePrevious(previous); err != nil {
				return fmt.Errorf("the previous rendering kept on Work %s: %w", key, err)
			}
		}
	}
	if rolloutSucceeded(b) {
		// The last change reached everywhere: what the clusters run is
		// what an abort of a new one goes back to, so the rendering kept
		// from before is dropped (in the write that holds the new change,
		// not in one of its own when the rollout succeeds).
		previous = ""
	}
	switch rollout.Gate(in) {
	case rollout.Hold:
		rd.manifest = withReplicasOf(current, rd.manifest)
		rd.rollout[rollout.PendingAnnotation] = newDigest
	case rollout.Revert:
		rd.manifest = withReplicasOf(previousObj, rd.manifest)
		rd.rollout[rollout.PendingAnnotation] = newDigest
	case rollout.Write:
		if curDigest != newDigest && previous == "" {
			// Admitted: keep what the cluster ran, for an abort.
			if enc, err := rollout.EncodeManifest(currentRaw); err == nil && len(enc) <= rollout.MaxPrevious {
				previous = enc
			}
		}
	}
	if previous != "" {
		rd.rollout[rollout.PreviousAnnotation] = previous
	}
	return nil
}

// decodePrevious unpacks a previous manifest and its Digest.
func decodePrevious(enc string) (*unstructured.Unstructured, string, error) {
	raw, err := rollout.DecodeManifest(enc)
	if err != nil {
		return nil, "", err
	}
	obj := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(raw, &obj.Object); err != nil {
		return nil, "", fmt.Errorf("decode %s: %w", rollout.PreviousAnnotation, err)
	}
	d, err := rollout.Digest(obj.Object)
	return obj, d, err
}

// withReplicasOf returns held with the replicas of fresh: scaling is never
// staged, so a held cluster still gets its new share.
func withReplicasOf(held, fresh *unstructured.Unstructured) *unstructured.Unstructured {
	out := held.DeepCopy()
	if v, found, _ := unstructured.NestedFieldNoCopy(fresh.Object, "spec", "replicas"); found {
		_ = unstructured.SetNestedField(out.Object, v, "spec", "replicas")
	}
	return out
}

// rolloutSucceeded says the binding's rollout reached every cluster.
func rolloutSucceeded(b binding.Object) bool {
	c := meta.FindStatusCondition(binding.Status(b).Conditions, workv1alpha2.Progressing)
	return c != nil && c.Reason == workv1alpha2.RolloutSucceeded
}

// sameRolloutAnnotations says the Work carries exactly the gate's
// annotations of want.
func sameRolloutAnnotations(have, want map[string]string) bool {
	for _, k := range rolloutWorkAnnotations {
		h, hok := have[k]
		w, wok := want[k]
		if hok != wok || h != w {
			return false
		}
	}
	return true
}

// setRolloutAnnotations writes the gate's annotations of want into
// annotations, removing those it does not set.
func setRolloutAnnotations(annotations, want map[string]string) {
	for _, k := range rolloutWorkAnnotations {
		if v, ok := want[k]; ok {
			annotations[k] = v
		} else {
			delete(annotations, k)
		}
	}
}

// rolloutChanged passes binding updates that change what the gate reads:
// the admissions and abort in status.rollout.
var rolloutChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(binding.Object)
		n, ok2 := e.ObjectNew.(binding.Object)
		if !ok1 || !ok2 {
			return false
		}
		return gateView(o) != gateView(n)
	},
}

// gateView is what the gate reads of a binding's status, as a string.
func gateView(b binding.Object) string {
	st := binding.Status(b).Rollout
	if st == nil {
		return ""
	}
	s := fmt.Sprint(st.Aborted)
	for _, c := range st.Clusters {
		s += "|" + c.Name + "=" + c.Rendering
	}
	return s
}
