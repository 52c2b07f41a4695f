package join

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// SystemLabel marks, with the value "true", the objects Karmada's tools
// create for their own use, such as a Cluster's credentials Secrets
// (Karmada's karmada.io/system label).
const SystemLabel = "karmada.io/system"

// ClusterOwner is the owner reference karmadactl join and karmada-agent put
// on what they create for a Cluster: the Cluster as controller, so that
// the control plane's garbage collector deletes the object with the
// Cluster, whichever tool deleted it.
func ClusterOwner(cluster *clusterv1alpha1.Cluster) metav1.OwnerReference {
	return *metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))
}

// OwnedBy reports whether obj's owner references include ClusterOwner of
// cluster (same UID).
func OwnedBy(obj metav1.Object, cluster *clusterv1alpha1.Cluster) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == cluster.UID })
}

// MarkOwned labels obj with SystemLabel and makes cluster its controller
// owner in place, replacing an owner reference to an earlier Cluster of
// the same name (a Cluster deleted and made again has a new UID).
func MarkOwned(obj metav1.Object, cluster *clusterv1alpha1.Cluster) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SystemLabel] = "true"
	obj.SetLabels(labels)
	refs := slices.DeleteFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
		return r.Kind == "Cluster" && r.APIVersion == clusterv1alpha1.SchemeGroupVersion.String()
	})
	obj.SetOwnerReferences(append(refs, ClusterOwner(cluster)))
}

// Own makes cluster the controller owner of the object obj names (read
// from c), with SystemLabel, unless it already is. The error names the
// object that could not be read or written.
func Own(ctx context.Context, c client.Client, cluster *clusterv1alpha1.Cluster, obj client.Object) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return fmt.Errorf("read %s/%s to make Cluster %s its owner: %w", obj.GetNamespace(), obj.GetName(), cluster.Name, err)
	}
	if OwnedBy(obj, cluster) && obj.GetLabels()[SystemLabel] == "true" {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	MarkOwned(obj, cluster)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("make Cluster %s the owner of %s/%s: %w", cluster.Name, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
