// Package clusterprofile publishes every member cluster in sig-multicluster's
// Cluster Inventory API: one multicluster.x-k8s.io/v1alpha1 ClusterProfile per
// Cluster, named after it, in one namespace (--cluster-profile-namespace),
// labelled x-k8s.io/cluster-manager: flotilla. Its status follows the Cluster:
// the Kubernetes version, properties (region, zones, provider, sync mode),
// condition ControlPlaneHealthy mirrored from the Cluster's Ready (status,
// reason, message), Joined, and an access provider "flotilla-proxy" whose
// server is the Cluster proxy URL on the control plane, so a consumer (Kueue's
// MultiKueue, Argo CD, multicluster-runtime) reaches the member through the
// control plane with its own control-plane identity. The profile is owned by
// the Cluster and deleted with it (the controller also deletes it when the
// Cluster is gone). Karmada has no counterpart; turn it off with
// --controllers=-clusterProfile.
package clusterprofile

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	inventoryv1alpha1 "github.com/flotilla-io/flotilla/api/clusterinventory/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
)

// ControllerName is the controller's name in --controllers.
const ControllerName = "clusterProfile"

// DefaultNamespace is where profiles go unless --cluster-profile-namespace
// says otherwise.
const DefaultNamespace = "karmada-cluster"

// Manager is the cluster manager's name in spec.clusterManager.name and the
// x-k8s.io/cluster-manager label.
const Manager = "flotilla"

// ProxyProvider names the access provider whose server is the Cluster proxy.
const ProxyProvider = "flotilla-proxy"

// Reconciler keeps one Cluster's ClusterProfile.
type Reconciler struct {
	// Client reads Clusters (cached) and writes ClusterProfiles.
	Client client.Client
	// Namespace holds the profiles.
	Namespace string
	// Server is the control plane's URL as consumers reach it, and CAData
	// its CA (PEM, may be empty): the proxy provider's cluster.
	Server string
	CAData []byte
	// Clock stamps the properties' lastObservedTime (nil: the real clock).
	Clock clock.PassiveClock
}

var _ reconcile.Reconciler = &Reconciler{}

// SetupWithManager reconciles a Cluster on every change, and when its
// profile changes (someone edited or deleted it).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}).
		Watches(&inventoryv1alpha1.ClusterProfile{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if o.GetNamespace() != r.Namespace || o.GetLabels()[inventoryv1alpha1.LabelClusterManagerKey] != Manager {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetName()}}}
		})).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// Reconcile creates or updates the profile of the Cluster req names, or
// deletes it when the Cluster is gone or being deleted. A profile of that
// name written by another manager is left alone. Errors are retried.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := client.ObjectKey{Namespace: r.Namespace, Name: req.Name}
	cluster := &clusterv1alpha1.Cluster{}
	err := r.Client.Get(ctx, req.NamespacedName, cluster)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	existing := &inventoryv1alpha1.ClusterProfile{}
	found := true
	if err := r.Client.Get(ctx, key, existing); apierrors.IsNotFound(err) {
		found = false
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if found && existing.Labels[inventoryv1alpha1.LabelClusterManagerKey] != Manager {
		return ctrl.Result{}, nil
	}
	if apierrors.IsNotFound(err) || !cluster.DeletionTimestamp.IsZero() {
		if found {
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, existing))
		}
		return ctrl.Result{}, nil
	}
	want := r.Profile(cluster, existing)
	if !found {
		status := want.Status
		if err := r.Client.Create(ctx, want); err != nil {
			return reconciler.Result(ctrl.Result{}, err)
		}
		want.Status = status
		return reconciler.Result(ctrl.Result{}, r.Client.Status().Update(ctx, want))
	}
	if !reflect.DeepEqual(existing.Labels, want.Labels) || !reflect.DeepEqual(existing.Spec, want.Spec) || !reflect.DeepEqual(existing.OwnerReferences, want.OwnerReferences) {
		status := want.Status
		if err := r.Client.Update(ctx, want); err != nil {
			return reconciler.Result(ctrl.Result{}, err)
		}
		want.Status = status
	}
	if !reflect.DeepEqual(existing.Status, want.Status) {
		return reconciler.Result(ctrl.Result{}, r.Client.Status().Update(ctx, want))
	}
	return ctrl.Result{}, nil
}

// Profile is the ClusterProfile of cluster, built over existing (the
// profile now, empty when there is none): its resourceVersion, and the
// observed times of properties and conditions that did not change, are kept.
func (r *Reconciler) Profile(cluster *clusterv1alpha1.Cluster, existing *inventoryv1alpha1.ClusterProfile) *inventoryv1alpha1.ClusterProfile {
	p := existing.DeepCopy()
	p.Namespace, p.Name = r.Namespace, cluster.Name
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[inventoryv1alpha1.LabelClusterManagerKey] = Manager
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))}
	p.Spec.DisplayName = cluster.Name
	p.Spec.ClusterManager.Name = Manager

	p.Status.Version.Kubernetes = cluster.Status.KubernetesVersion
	now := metav1.NewTime(reconciler.Now(r.Clock))
	var props []inventoryv1alpha1.Property
	add := func(name, value string) {
		if value == "" {
			return
		}
		at := now
		for _, old := range existing.Status.Properties {
			if old.Name == name && old.Value == value {
				at = old.LastObservedTime
			}
		}
		props = append(props, inventoryv1alpha1.Property{Name: name, Value: value, LastObservedTime: at})
	}
	add("provider", cluster.Spec.Provider)
	add("region", cluster.Spec.Region)
	zones := cluster.Spec.Zones
	if len(zones) == 0 && cluster.Spec.Zone != "" {
		zones = []string{cluster.Spec.Zone}
	}
	add("zones", strings.Join(zones, ","))
	add("syncMode", string(cluster.Spec.SyncMode))
	p.Status.Properties = props

	healthy := metav1.Condition{Type: inventoryv1alpha1.ConditionControlPlaneHealthy, Status: metav1.ConditionUnknown,
		Reason: "ClusterStatusUnknown", Message: "the cluster's health has not been observed yet", ObservedGeneration: p.Generation}
	if ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready != nil {
		healthy.Status, healthy.Reason, healthy.Message = ready.Status, ready.Reason, ready.Message
	}
	meta.SetStatusCondition(&p.Status.Conditions, healthy)
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: inventoryv1alpha1.ConditionJoined, Status: metav1.ConditionTrue,
		Reason: "Joined", Message: fmt.Sprintf("cluster %s is a member of the Flotilla fleet (%s mode)", cluster.Name, syncMode(cluster)), ObservedGeneration: p.Generation})

	access := []inventoryv1alpha1.AccessProvider{{Name: ProxyProvider, Cluster: clientcmdv1.Cluster{
		Server:                   strings.TrimSuffix(r.Server, "/") + "/apis/cluster.karmada.io/v1alpha1/clusters/" + cluster.Name + "/proxy",
		CertificateAuthorityData: r.CAData,
	}}}
	p.Status.AccessProviders = access
	p.Status.CredentialProviders = access
	return p
}

func syncMode(c *clusterv1alpha1.Cluster) string {
	if c.Spec.SyncMode == "" {
		return string(clusterv1alpha1.Push)
	}
	return string(c.Spec.SyncMode)
}
