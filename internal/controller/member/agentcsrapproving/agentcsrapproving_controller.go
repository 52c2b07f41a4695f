// Package agentcsrapproving is Karmada's agentcsrapproving controller (in
// karmada-controller-manager, off by default): it approves the client
// certificate requests of Pull-mode agents, as kube-controller-manager's
// csrapproving approves kubelets'. A recognized request (see Recognize)
// whose requester may create certificatesigningrequests/agentclient (a
// bootstrap token) or /selfagentclient (the agent renewing its own
// certificate) is approved after the controller has made the member's
// Pull-mode Cluster, its execution namespace and its RBAC
// (bootstrap.ClusterRBAC). A name held by a Push-mode Cluster, or newly
// requested for a Pull-mode Cluster whose agent reports it Ready, is denied.
package agentcsrapproving

import (
	"context"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/member/register"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "agentcsrapproving"

// Condition reasons this controller writes on CertificateSigningRequests
// (and its event reasons).
const (
	// ReasonAutoApproved is kube's csrapproving reason, kept by Karmada.
	ReasonAutoApproved = "AutoApproved"
	// ReasonClusterNameTaken denies a request for a Push-mode cluster's name.
	ReasonClusterNameTaken = "ClusterNameTaken"
)

// deletingRetry is how soon a request for a Cluster that is being deleted
// is looked at again.
const deletingRetry = 5 * time.Second

// Reconciler approves agent certificate requests.
type Reconciler struct {
	// Client reads CSRs and Clusters (cached) and creates Clusters and
	// namespaces.
	Client client.Client
	// Kube makes the SubjectAccessReviews, writes the RBAC and the
	// /approval subresource.
	Kube kubernetes.Interface
	// Recorder, when set, records Approved and Denied events on the CSR.
	Recorder record.EventRecorder
	// Clock stamps the decision's condition; nil is the real clock.
	Clock clock.PassiveClock
}

var _ reconcile.Reconciler = &Reconciler{}

// SetupWithManager reconciles every CertificateSigningRequest.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&certificatesv1.CertificateSigningRequest{}).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// Reconcile decides one CSR. CSRs already approved or denied, not agent
// requests (Recognize), or whose requester lacks the permission are left
// alone, as kube's approver does. Otherwise: a Push-mode Cluster of the
// name gets the CSR denied; else the Cluster is created in Pull mode if
// absent (an existing one is not modified), the execution namespace
// karmada-es-<cluster> and bootstrap.ClusterRBAC are ensured, and the CSR
// is approved with reason AutoApproved. Every step is idempotent; errors
// requeue.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if decided(csr) || len(csr.Status.Certificate) > 0 {
		return ctrl.Result{}, nil
	}
	agent, err := Recognize(csr)
	if err != nil {
		log.V(2).Info("Not an agent certificate request", "csr", klog.KObj(csr), "reason", err.Error())
		return ctrl.Result{}, nil
	}
	allowed, err := r.authorized(ctx, csr, agent.Subresource)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !allowed {
		log.V(1).Info("Requester may not ask for an agent certificate; leaving the request", "csr", klog.KObj(csr),
			"user", csr.Spec.Username, "subresource", agent.Subresource)
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	err = r.Client.Get(ctx, client.ObjectKey{Name: agent.Cluster}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		cluster = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read Cluster %s: %w", agent.Cluster, err)
	case cluster.Spec.SyncMode == clusterv1alpha1.Push:
		msg := fmt.Sprintf("cluster name %q is taken by a Push-mode cluster: register with another --cluster-name, or unjoin that cluster first", agent.Cluster)
		return ctrl.Result{}, r.decide(ctx, csr, certificatesv1.CertificateDenied, ReasonClusterNameTaken, msg)
	case agent.Subresource == register.AgentClientSubresource && meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady):
		// A new registration (not a renewal) of a name whose agent is
		// reporting: another cluster must not take it over.
		msg := fmt.Sprintf("cluster name %q is registered and its agent is reporting it Ready: register with another --cluster-name, or delete Cluster %s first", agent.Cluster, agent.Cluster)
		return ctrl.Result{}, r.decide(ctx, csr, certificatesv1.CertificateDenied, ReasonClusterNameTaken, msg)
	case !cluster.DeletionTimestamp.IsZero():
		log.Info("Cluster is being deleted; approving once it is gone", "csr", klog.KObj(csr), "cluster", agent.Cluster)
		return ctrl.Result{RequeueAfter: deletingRetry}, nil
	}
	if err := r.prepareCluster(ctx, agent.Cluster, cluster == nil); err != nil {
		return ctrl.Result{}, err
	}
	msg := fmt.Sprintf("Auto approving agent certificate of cluster %s after SubjectAccessReview.", agent.Cluster)
	return ctrl.Result{}, r.decide(ctx, csr, certificatesv1.CertificateApproved, ReasonAutoApproved, msg)
}

// authorized asks the control plane whether the CSR's requester may create
// certificatesigningrequests/<subresource>.
func (r *Reconciler) authorized(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: subresource, Verb: "create"},
	}}
	out, err := r.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview for %s: %w", csr.Spec.Username, err)
	}
	return out.Status.Allowed, nil
}

// prepareCluster makes what the agent of cluster needs on the control
// plane before it gets its certificate: the Pull-mode Cluster (when
// create), the execution namespace and the credentials namespace, and
// the agent's RBAC.
func (r *Reconciler) prepareCluster(ctx context.Context, name string, create bool) error {
	if create {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
		if err := r.Client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Pull-mode Cluster %s: %w", name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Created Pull-mode Cluster for an agent certificate request", "cluster", name)
	}
	for _, ns := range []string{clusterv1alpha1.ExecutionNamespace(name), register.ClusterSecretNamespace} {
		if err := r.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	if err := register.EnsureRBAC(ctx, r.Kube, register.ClusterRBAC(name)); err != nil {
		return fmt.Errorf("RBAC of cluster %s's agent: %w", name, err)
	}
	return nil
}

// decide writes an Approved or Denied condition through the /approval
// subresource; a conflict is retried by the next reconcile.
func (r *Reconciler) decide(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, kind certificatesv1.RequestConditionType, reason, msg string) error {
	csr = csr.DeepCopy()
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: kind, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastUpdateTime: metav1.NewTime(reconciler.Now(r.Clock))})
	if _, err := r.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("%s CertificateSigningRequest %s: %w", kind, csr.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Agent certificate request decided", "csr", klog.KObj(csr), "decision", kind, "reason", reason)
	if r.Recorder != nil {
		eventType := corev1.EventTypeNormal
		if kind == certificatesv1.CertificateDenied {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Event(csr, eventType, reason, msg)
	}
	return nil
}
