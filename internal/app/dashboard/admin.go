package dashboard

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AdminServiceAccount is the account `flotilla dashboard token` mints
// tokens for by default: karmada-system/flotilla-dashboard-admin, bound to
// cluster-admin by the ClusterRoleBinding of the same name.
const (
	AdminNamespace      = "karmada-system"
	AdminServiceAccount = "flotilla-dashboard-admin"
)

// Token returns a bearer token of the ServiceAccount namespace/name valid
// for ttl (the API server may shorten it), made by a TokenRequest. With
// ensureAdmin the account is first created, with a ClusterRoleBinding to
// cluster-admin, when missing. Errors: the control plane's, wrapped with
// what was being done.
func Token(ctx context.Context, kc kubernetes.Interface, namespace, name string, ttl time.Duration, ensureAdmin bool) (string, time.Time, error) {
	if ensureAdmin {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{"app.kubernetes.io/part-of": "flotilla-dashboard"}}}
		if _, err := kc.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", time.Time{}, fmt.Errorf("create ServiceAccount %s/%s: %w", namespace, name, err)
		}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: sa.Labels},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}}}
		if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", time.Time{}, fmt.Errorf("bind ServiceAccount %s/%s to cluster-admin: %w", namespace, name, err)
		}
	}
	seconds := int64(ttl.Seconds())
	tr, err := kc.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		return "", time.Time{}, fmt.Errorf("ServiceAccount %s/%s does not exist: create it with 'kubectl create serviceaccount %s -n %s' and give it RBAC (a RoleBinding or ClusterRoleBinding)", namespace, name, name, namespace)
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("request a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}
