package register

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnsureControlPlane prepares the control plane reached by cs for
// Pull-mode registration; it is idempotent (create or update):
//
//   - ConfigMap kube-public/cluster-info, key kubeconfig: a kubeconfig with
//     only server (an https URL) and caPEM (PEM certificates), as kubeadm
//     writes it. kube-controller-manager's bootstrapsigner controller adds
//     the jws-kubeconfig-<token-id> signatures that Register checks; those
//     keys are kept on update.
//   - Role+RoleBinding ClusterInfoRoleName: system:anonymous may get it.
//   - ClusterRoleBinding BootstrapBindingName: BootstrapGroup gets the
//     built-in system:node-bootstrapper (create and watch CSRs).
//   - ClusterRole+Binding AgentClientRoleName/AgentClientBindingName:
//     BootstrapGroup may create certificatesigningrequests/agentclient, so
//     the agentcsrapproving controller approves its agent CSRs.
//   - ClusterRole+Binding AgentsRoleName for AgentGroup: CSRs for renewal
//     (certificatesigningrequests/selfagentclient) and reading the resource
//     interpreter configuration.
//
// Errors: an empty server or CA, or the first object that could not be
// written.
func EnsureControlPlane(ctx context.Context, cs kubernetes.Interface, server string, caPEM []byte) error {
	if server == "" {
		return fmt.Errorf("prepare the control plane for registration: the server URL is empty")
	}
	if len(caPEM) == 0 {
		return fmt.Errorf("prepare the control plane for registration: the CA certificate is empty")
	}
	if _, err := CACertHash(caPEM); err != nil {
		return fmt.Errorf("prepare the control plane for registration: %w", err)
	}
	kubeconfig, err := clusterInfoKubeconfig(server, caPEM)
	if err != nil {
		return err
	}
	if err := ensureClusterInfo(ctx, cs, kubeconfig); err != nil {
		return err
	}
	for _, obj := range controlPlaneRBAC() {
		if err := ensure(ctx, cs, obj); err != nil {
			return err
		}
	}
	return nil
}

// ControlPlaneObjects are the objects EnsureControlPlane writes, as they
// would be applied: the cluster-info ConfigMap (without the signatures the
// bootstrapsigner adds) and the bootstrap RBAC. Errors as EnsureControlPlane's.
func ControlPlaneObjects(server string, caPEM []byte) ([]client.Object, error) {
	if server == "" || len(caPEM) == 0 {
		return nil, fmt.Errorf("prepare the control plane for registration: the server URL and the CA certificate are both needed")
	}
	if _, err := CACertHash(caPEM); err != nil {
		return nil, fmt.Errorf("prepare the control plane for registration: %w", err)
	}
	kubeconfig, err := clusterInfoKubeconfig(server, caPEM)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo},
		Data: map[string]string{bootstrapapi.KubeConfigKey: string(kubeconfig)}}
	return append([]client.Object{cm}, controlPlaneRBAC()...), nil
}

// clusterInfoKubeconfig is kubeadm's cluster-info content: one unnamed
// cluster with the server and CA, no users or contexts.
func clusterInfoKubeconfig(server string, caPEM []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the cluster-info kubeconfig: %w", err)
	}
	return out, nil
}

func ensureClusterInfo(ctx context.Context, cs kubernetes.Interface, kubeconfig []byte) error {
	cms := cs.CoreV1().ConfigMaps(metav1.NamespacePublic)
	cm, err := cms.Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo},
			Data: map[string]string{bootstrapapi.KubeConfigKey: string(kubeconfig)}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ConfigMap kube-public/cluster-info: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read ConfigMap kube-public/cluster-info: %w", err)
	case cm.Data[bootstrapapi.KubeConfigKey] == string(kubeconfig):
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	// The jws-kubeconfig-* signatures stay: the bootstrapsigner re-signs
	// the new content.
	cm.Data[bootstrapapi.KubeConfigKey] = string(kubeconfig)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update ConfigMap kube-public/cluster-info: %w", err)
	}
	return nil
}

// ensure creates obj (a Role, RoleBinding, ClusterRole or
// ClusterRoleBinding) or brings the existing one's rules, subjects and role
// reference in line. A binding whose roleRef differs is deleted and made
// again, as roleRef cannot change.
func ensure(ctx context.Context, cs kubernetes.Interface, obj client.Object) error {
	rbac := cs.RbacV1()
	var err error
	switch want := obj.(type) {
	case *rbacv1.ClusterRole:
		err = upsert(ctx, rbac.ClusterRoles(), want, func(have *rbacv1.ClusterRole) bool {
			same := equality.Semantic.DeepEqual(have.Rules, want.Rules)
			have.Rules = want.Rules
			return !same
		}, nil)
	case *rbacv1.Role:
		err = upsert(ctx, rbac.Roles(want.Namespace), want, func(have *rbacv1.Role) bool {
			same := equality.Semantic.DeepEqual(have.Rules, want.Rules)
			have.Rules = want.Rules
			return !same
		}, nil)
	case *rbacv1.ClusterRoleBinding:
		err = upsert(ctx, rbac.ClusterRoleBindings(), want, func(have *rbacv1.ClusterRoleBinding) bool {
			same := equality.Semantic.DeepEqual(have.Subjects, want.Subjects)
			have.Subjects = want.Subjects
			return !same
		}, func(have *rbacv1.ClusterRoleBinding) bool { return have.RoleRef != want.RoleRef })
	case *rbacv1.RoleBinding:
		err = upsert(ctx, rbac.RoleBindings(want.Namespace), want, func(have *rbacv1.RoleBinding) bool {
			same := equality.Semantic.DeepEqual(have.Subjects, want.Subjects)
			have.Subjects = want.Subjects
			return !same
		}, func(have *rbacv1.RoleBinding) bool { return have.RoleRef != want.RoleRef })
	default:
		return fmt.Errorf("internal error: cannot write a %T", obj)
	}
	if err != nil {
		return fmt.Errorf("write %T %s: %w", obj, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// typedClient is the part of a client-go typed client upsert uses.
type typedClient[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// upsert creates want, or, when it exists, lets mutate bring the existing
// object in line and updates it if mutate reports a change. When recreate
// reports that an immutable field differs, the object is deleted and made
// again.
func upsert[T client.Object](ctx context.Context, c typedClient[T], want T, mutate func(T) bool, recreate func(T) bool) error {
	have, err := c.Get(ctx, want.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = c.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if recreate != nil && recreate(have) {
		if err := c.Delete(ctx, want.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err = c.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if !mutate(have) {
		return nil
	}
	_, err = c.Update(ctx, have, metav1.UpdateOptions{})
	return err
}

// EnsureRBAC creates, or brings in line, each of objs: Roles,
// RoleBindings, ClusterRoles and ClusterRoleBindings such as ClusterRBAC
// returns. Rules and subjects are overwritten; a binding whose roleRef
// differs is made again. Errors name the first object that could not be
// written, or an object of another kind.
func EnsureRBAC(ctx context.Context, cs kubernetes.Interface, objs []client.Object) error {
	for _, obj := range objs {
		if err := ensure(ctx, cs, obj); err != nil {
			return err
		}
	}
	return nil
}
