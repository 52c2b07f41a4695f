// Package join registers a member cluster with the control plane in Push
// mode, as `karmadactl join` does: it gives the control plane a service
// account token for the member, stores it in a Secret in karmada-cluster,
// and creates the Cluster object that points at it.
package join

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// ClusterSecretNamespace is where member credentials live on the control
// plane; Cluster.spec.secretRef points into it.
const ClusterSecretNamespace = "karmada-cluster"

// Options describe one member to register.
type Options struct {
	// ClusterName is the Cluster object's name, a DNS label of at most 48
	// characters.
	ClusterName string
	// Member is an admin config for the member's API server. Its Host
	// becomes spec.apiEndpoint and its CA data spec's caBundle.
	Member *rest.Config
	// Provider, Region and Zone fill the Cluster's topology fields.
	Provider, Region, Zone string
	// Labels are added to the Cluster object.
	Labels map[string]string
}

// Join registers o.ClusterName on the control plane reached by cp. It is
// idempotent: running it again refreshes the token Secret and the Cluster's
// endpoint and topology, and keeps everything else. Errors name the object
// that could not be written; waiting for the member to issue the token is
// bounded by ctx.
func Join(ctx context.Context, cp client.Client, o Options) error {
	token, err := memberToken(ctx, o)
	if err != nil {
		return fmt.Errorf("join %s: %w", o.ClusterName, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterSecretNamespace, Name: o.ClusterName}}
	if err := upsert(ctx, cp, secret, func() {
		secret.Data = map[string][]byte{
			clusterv1alpha1.SecretCADataKey: o.Member.CAData,
			clusterv1alpha1.SecretTokenKey:  token,
		}
	}); err != nil {
		return fmt.Errorf("join %s: write credentials Secret: %w", o.ClusterName, err)
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName}}
	if err := upsert(ctx, cp, cluster, func() {
		cluster.Spec.SyncMode = clusterv1alpha1.Push
		cluster.Spec.APIEndpoint = o.Member.Host
		cluster.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: ClusterSecretNamespace, Name: o.ClusterName}
		cluster.Spec.Provider, cluster.Spec.Region, cluster.Spec.Zone = o.Provider, o.Region, o.Zone
		for k, v := range o.Labels {
			if cluster.Labels == nil {
				cluster.Labels = map[string]string{}
			}
			cluster.Labels[k] = v
		}
	}); err != nil {
		return fmt.Errorf("join %s: write Cluster: %w", o.ClusterName, err)
	}
	return nil
}

// upsert creates obj after mutate, or gets it, mutates and updates it.
func upsert(ctx context.Context, c client.Client, obj client.Object, mutate func()) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		mutate()
		return c.Create(ctx, obj)
	}
	if err != nil {
		return err
	}
	mutate()
	return c.Update(ctx, obj)
}

// memberToken makes a service account with cluster-admin rights in the
// member (namespace karmada-cluster, name karmada-<cluster>) and returns a
// long-lived token for it, issued by the member's token controller.
func memberToken(ctx context.Context, o Options) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(o.Member)
	if err != nil {
		return nil, err
	}
	ns, sa := ClusterSecretNamespace, "karmada-"+o.ClusterName
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s in the member: %w", what, err)
		}
		return nil
	}
	if err := create("namespace "+ns, ignoreResult(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := create("service account "+sa, ignoreResult(cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager:" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}
	if err := create("cluster role binding", ignoreResult(cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	secretName := sa + "-token"
	tokenSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	if err := create("token Secret", ignoreResult(cs.CoreV1().Secrets(ns).Create(ctx, tokenSecret, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		if err == nil && len(s.Data[corev1.ServiceAccountTokenKey]) > 0 {
			return s.Data[corev1.ServiceAccountTokenKey], nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the member did not issue a token for %s/%s (is its kube-controller-manager running?): %w", ns, sa, ctx.Err())
		case <-tick.C:
		}
	}
}

func ignoreResult[T any](_ T, err error) error { return err }
