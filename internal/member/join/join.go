// Package join registers a member cluster with the control plane in Push
// mode, as `karmadactl join` does: it gives the control plane a service
// account token for the member, stores it in a Secret in karmada-cluster,
// creates the Cluster object that points at it, and makes the Cluster the
// Secret's owner (karmadactl's owner reference and karmada.io/system label).
package join

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
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
	// Provider, Region and Zone fill the Cluster's topology fields; Zones
	// spec.zones. Empty ones leave what the Cluster has.
	Provider, Region, Zone string
	Zones                  []string
	// Labels are added to the Cluster object.
	Labels map[string]string
}

// Join registers o.ClusterName on the control plane reached by cp. It is
// idempotent: running it again refreshes the token Secret and the Cluster's
// endpoint and topology, and keeps everything else. Errors name the object
// that could not be written; waiting for the member to issue the token is
// bounded by ctx.
func Join(ctx context.Context, cp client.Client, o Options) error {
	if errs := validation.IsDNS1123Label(o.ClusterName); len(errs) > 0 || len(o.ClusterName) > 48 {
		return fmt.Errorf("join %s: a cluster name must be a DNS label of at most 48 characters (lower case letters, digits and '-')", o.ClusterName)
	}
	if err := reachable(o.Member); err != nil {
		return fmt.Errorf("join %s: cannot reach the cluster at %s: %w (check --cluster-kubeconfig and --cluster-context)", o.ClusterName, o.Member.Host, err)
	}
	id, err := ClusterID(ctx, o.Member)
	if err != nil {
		return fmt.Errorf("join %s: read the cluster's kube-system namespace: %w", o.ClusterName, err)
	}
	if err := checkName(ctx, cp, o, id); err != nil {
		return err
	}
	if err := checkID(ctx, cp, o.ClusterName, id); err != nil {
		return err
	}
	self := &corev1.Namespace{}
	if err := cp.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, self); err == nil && id != "" && string(self.UID) == id {
		return fmt.Errorf("join %s: the cluster at %s is the control plane itself: give the member cluster's kubeconfig with --cluster-kubeconfig and --cluster-context", o.ClusterName, o.Member.Host)
	}
	if o.Region == "" || o.Zone == "" || o.Provider == "" {
		fillTopology(ctx, &o)
	}
	token, err := MemberToken(ctx, o.Member, o.ClusterName)
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
	impersonatorToken, err := ImpersonatorToken(ctx, o.Member)
	if err != nil {
		return fmt.Errorf("join %s: %w", o.ClusterName, err)
	}
	impersonator := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterSecretNamespace, Name: o.ClusterName + ImpersonatorSecretSuffix}}
	if err := upsert(ctx, cp, impersonator, func() {
		impersonator.Data = map[string][]byte{clusterv1alpha1.SecretTokenKey: impersonatorToken}
	}); err != nil {
		return fmt.Errorf("join %s: write impersonator Secret: %w", o.ClusterName, err)
	}
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: o.ClusterName}}
	if err := upsert(ctx, cp, cluster, func() {
		cluster.Spec.SyncMode = clusterv1alpha1.Push
		cluster.Spec.APIEndpoint = o.Member.Host
		cluster.Spec.SecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: ClusterSecretNamespace, Name: o.ClusterName}
		cluster.Spec.ImpersonatorSecretRef = &clusterv1alpha1.LocalSecretReference{Namespace: ClusterSecretNamespace, Name: impersonator.Name}
		for dst, v := range map[*string]string{&cluster.Spec.Provider: o.Provider, &cluster.Spec.Region: o.Region, &cluster.Spec.Zone: o.Zone} {
			if v != "" {
				*dst = v
			}
		}
		if len(o.Zones) > 0 {
			cluster.Spec.Zones = o.Zones
		}
		if id != "" {
			cluster.Spec.ID = id
		}
		for k, v := range o.Labels {
			if cluster.Labels == nil {
				cluster.Labels = map[string]string{}
			}
			cluster.Labels[k] = v
		}
	}); err != nil {
		return fmt.Errorf("join %s: write Cluster: %w", o.ClusterName, err)
	}
	// As karmadactl join: the Secret goes with the Cluster, so that a Cluster
	// deleted by any tool leaves no stale credentials for a later join.
	for _, s := range []*corev1.Secret{secret, impersonator} {
		if err := Own(ctx, cp, cluster, s); err != nil {
			return fmt.Errorf("join %s: %w", o.ClusterName, err)
		}
	}
	return nil
}

// checkName refuses a name another cluster already holds: an existing
// Cluster of that name in Pull mode, or with another API endpoint and not
// the same cluster. A Cluster whose spec.id is id (the member's kube-system
// namespace UID, non-empty) is this member at a new address, and joining
// again moves it there.
func checkName(ctx context.Context, cp client.Client, o Options, id string) error {
	existing := &clusterv1alpha1.Cluster{}
	err := cp.Get(ctx, client.ObjectKey{Name: o.ClusterName}, existing)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("join %s: read the control plane's Clusters: %w", o.ClusterName, err)
	case !existing.DeletionTimestamp.IsZero():
		return fmt.Errorf("join %s: cluster %s is being unjoined; wait until it is gone", o.ClusterName, o.ClusterName)
	case existing.Spec.SyncMode == clusterv1alpha1.Pull:
		return fmt.Errorf("join %s: the name is taken by a Pull-mode cluster (registered with 'flotilla register'); delete that Cluster first or choose another name", o.ClusterName)
	case existing.Spec.APIEndpoint != "" && existing.Spec.APIEndpoint != o.Member.Host && (id == "" || existing.Spec.ID != id):
		return fmt.Errorf("join %s: the name is taken by the cluster at %s; unjoin it first or choose another name", o.ClusterName, existing.Spec.APIEndpoint)
	}
	return nil
}

// ClusterID is the UID of the member's kube-system namespace (Karmada's
// Cluster spec.id).
func ClusterID(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(ns.UID), nil
}

// checkID refuses to join a cluster already registered under another name.
func checkID(ctx context.Context, cp client.Client, name, id string) error {
	list := &clusterv1alpha1.ClusterList{}
	if err := cp.List(ctx, list); err != nil {
		return fmt.Errorf("join %s: read the control plane's Clusters: %w", name, err)
	}
	if other := HeldAs(list.Items, name, id); other != nil {
		return &JoinedAsError{Name: name, As: other.Name, Mode: other.Spec.SyncMode}
	}
	return nil
}

// HeldAs returns the Cluster among clusters, other than name, that holds
// the member whose kube-system namespace UID is id (its spec.id); nil when
// none does or id is empty.
func HeldAs(clusters []clusterv1alpha1.Cluster, name, id string) *clusterv1alpha1.Cluster {
	for i := range clusters {
		if c := &clusters[i]; c.Name != name && c.Spec.ID == id && id != "" {
			return c
		}
	}
	return nil
}

// JoinedAsError is Join's refusal of a member that is already a Cluster of
// the control plane under another name.
type JoinedAsError struct {
	// Name is the name asked for; As the Cluster that holds the member,
	// in Mode (Push, or Pull when it was registered).
	Name, As string
	Mode     clusterv1alpha1.ClusterSyncMode
}

func (e *JoinedAsError) Error() string {
	how := "unjoin " + e.As
	if e.Mode == clusterv1alpha1.Pull {
		how = "unregister " + e.As
	}
	return fmt.Sprintf("join %s: this cluster is already a member as %s (%s mode, same kube-system namespace UID); %s first", e.Name, e.As, e.Mode, how)
}

// reachable asks the member's API server for its version, with a short timeout.
func reachable(cfg *rest.Config) error {
	c := rest.CopyConfig(cfg)
	c.Timeout = 10 * time.Second
	d, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return err
	}
	_, err = d.ServerVersion()
	return err
}

// fillTopology completes o's empty provider, region and zone from the
// member's nodes: the first node's topology.kubernetes.io/region and
// topology.kubernetes.io/zone labels, and the scheme of its
// spec.providerID ("aws:///..." is aws). Nothing is filled when the member
// has no nodes or cannot list them.
func fillTopology(ctx context.Context, o *Options) {
	provider, region, zone := NodeTopology(ctx, o.Member)
	if o.Region == "" {
		o.Region = region
	}
	if o.Zone == "" {
		o.Zone = zone
	}
	if o.Provider == "" {
		o.Provider = provider
	}
}

// NodeTopology reads a member's provider, region and zone from one of its
// nodes: the scheme of spec.providerID ("aws" of "aws:///eu-west-1a/i-1")
// and the topology.kubernetes.io/region and zone labels. Empty strings when
// the member has no nodes, cannot be listed, or the node says nothing.
func NodeTopology(ctx context.Context, member *rest.Config) (provider, region, zone string) {
	cs, err := kubernetes.NewForConfig(member)
	if err != nil {
		return "", "", ""
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(nodes.Items) == 0 {
		return "", "", ""
	}
	n := nodes.Items[0]
	if scheme, _, ok := strings.Cut(n.Spec.ProviderID, "://"); ok {
		provider = scheme
	}
	return provider, n.Labels[corev1.LabelTopologyRegion], n.Labels[corev1.LabelTopologyZone]
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

// MemberServiceAccountPrefix starts the name of the service account that
// MemberToken makes in a member for the control plane (karmada-<cluster>,
// in ClusterSecretNamespace), as karmadactl join names it.
const MemberServiceAccountPrefix = "karmada-"

// MemberToken makes a service account with cluster-admin rights in the
// member reached by member (namespace karmada-cluster, name
// karmada-<clusterName>) and returns a long-lived token for it, issued by
// the member's token controller; waiting for it is bounded by ctx. Errors
// name the object that could not be created.
func MemberToken(ctx context.Context, member *rest.Config, clusterName string) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(member)
	if err != nil {
		return nil, err
	}
	sa := MemberServiceAccountPrefix + clusterName
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager:" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ClusterSecretNamespace, Name: sa}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create cluster role binding in the member: %w", err)
	}
	return serviceAccountToken(ctx, cs, sa)
}

// ImpersonatorServiceAccount is the member's service account of Karmada's
// unified authentication (karmada-cluster/karmada-impersonator): the
// Cluster proxy authenticates to the member with its token
// (spec.impersonatorSecretRef) and impersonates the caller. It has no
// rights of its own: the control plane's unifiedAuth controller sends the
// member a ClusterRole of that name letting it impersonate exactly the
// subjects control-plane RBAC allows on the cluster's proxy.
const ImpersonatorServiceAccount = "karmada-impersonator"

// ImpersonatorSecretSuffix ends the name of the control-plane Secret
// holding the impersonator's token: karmada-cluster/<cluster>-impersonator,
// as karmadactl join and karmada-agent name it.
const ImpersonatorSecretSuffix = "-impersonator"

// ImpersonatorToken makes the member's ImpersonatorServiceAccount and
// returns a long-lived token for it, issued by the member's token
// controller; waiting for it is bounded by ctx. Errors name the object
// that could not be created.
func ImpersonatorToken(ctx context.Context, member *rest.Config) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(member)
	if err != nil {
		return nil, err
	}
	return serviceAccountToken(ctx, cs, ImpersonatorServiceAccount)
}

// serviceAccountToken makes service account sa in ClusterSecretNamespace of
// the member (and the namespace) if missing, and returns a long-lived token
// for it from a token Secret <sa>-token.
func serviceAccountToken(ctx context.Context, cs kubernetes.Interface, sa string) ([]byte, error) {
	ns := ClusterSecretNamespace
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

// UnjoinOptions describe one unjoin.
type UnjoinOptions struct {
	ClusterName string
	// Orphan leaves the propagated objects in the member (clusterv1alpha1.OrphanResourcesAnnotation).
	Orphan bool
	// Member, when set, is an admin config of the member: the service
	// account, its token and its role binding that Join created there are
	// removed once the Cluster is gone.
	Member *rest.Config
	// Wait bounds how long Unjoin waits for the Cluster (and with it the
	// member's objects, unless Orphan) to be gone, then removes the
	// credentials (the control plane's Secret, and with Member the member's
	// service account). 0 does not wait and leaves the credentials, which
	// the controllers need until the Cluster is gone.
	Wait time.Duration
	// Force, when the wait runs out, releases the Cluster anyway, as
	// karmadactl's --force does: the finalizers of its Works, its execution
	// namespace and the Cluster are removed, so it goes without its
	// controllers (or a Pull cluster's agent) cleaning the member. What may
	// be left there is reported in UnjoinResult.Left.
	Force bool
}

// UnjoinResult says how Unjoin ended.
type UnjoinResult struct {
	// Forced is true when the Cluster was released by Force after the
	// wait ran out.
	Forced bool
	// Left lists, as "<kind> <namespace>/<name>", the objects the released
	// Works had put in the member, which may still be there.
	Left []string
}

// release removes the finalizers of the Works in the cluster's execution
// namespace, of that namespace and of the Cluster, and returns what the
// Works had put in the member ("<kind> <namespace>/<name>", sorted).
func release(ctx context.Context, cp client.Client, name string) ([]string, error) {
	es := clusterv1alpha1.ExecutionNamespace(name)
	works := &workv1alpha1.WorkList{}
	if err := cp.List(ctx, works, client.InNamespace(es)); err != nil {
		return nil, fmt.Errorf("list the Works of %s: %w", es, err)
	}
	var left []string
	for i := range works.Items {
		w := &works.Items[i]
		for _, m := range w.Spec.Workload.Manifests {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if json.Unmarshal(m.Raw, &obj) == nil {
				left = append(left, fmt.Sprintf("%s %s/%s", obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name))
			}
		}
		if err := dropFinalizers(ctx, cp, w); err != nil {
			return nil, fmt.Errorf("release Work %s/%s: %w", w.Namespace, w.Name, err)
		}
	}
	ns := &corev1.Namespace{}
	if err := cp.Get(ctx, client.ObjectKey{Name: es}, ns); err == nil {
		if err := dropFinalizers(ctx, cp, ns); err != nil {
			return nil, fmt.Errorf("release namespace %s: %w", es, err)
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	cl := &clusterv1alpha1.Cluster{}
	if err := cp.Get(ctx, client.ObjectKey{Name: name}, cl); err == nil {
		if err := dropFinalizers(ctx, cp, cl); err != nil {
			return nil, fmt.Errorf("release Cluster %s: %w", name, err)
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	sort.Strings(left)
	return left, nil
}

// dropFinalizers removes every finalizer of obj (gone already is fine).
func dropFinalizers(ctx context.Context, cp client.Client, obj client.Object) error {
	if len(obj.GetFinalizers()) == 0 {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	obj.SetFinalizers(nil)
	return client.IgnoreNotFound(cp.Patch(ctx, obj, patch))
}

// ErrNoSuchCluster is Unjoin's error for a name no Cluster has.
var ErrNoSuchCluster = errors.New("no such cluster")

// Unjoin deletes the Cluster o.ClusterName, which makes the controllers
// remove its Works and (unless o.Orphan) their objects in the member, and
// its credentials Secret. With o.Wait it waits until the Cluster is gone;
// with o.Force too, a wait that runs out releases the Cluster (see
// UnjoinOptions.Force). Errors: no such cluster (ErrNoSuchCluster), the
// wait timed out without Force (saying what still holds it).
func Unjoin(ctx context.Context, cp client.Client, o UnjoinOptions) (UnjoinResult, error) {
	var res UnjoinResult
	err := unjoin(ctx, cp, o, &res)
	return res, err
}

func unjoin(ctx context.Context, cp client.Client, o UnjoinOptions, res *UnjoinResult) error {
	// What the errors call it: unregister for a Pull-mode cluster.
	verb, log := "unjoin", "the controller manager's log"
	cluster := &clusterv1alpha1.Cluster{}
	if err := cp.Get(ctx, client.ObjectKey{Name: o.ClusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s: %w (kubectl get clusters lists them)", verb, o.ClusterName, ErrNoSuchCluster)
		}
		return fmt.Errorf("%s %s: %w", verb, o.ClusterName, err)
	}
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		verb, log = "unregister", "the log of the cluster's agent"
	}
	if o.Orphan && cluster.Annotations[clusterv1alpha1.OrphanResourcesAnnotation] != "true" {
		if cluster.Annotations == nil {
			cluster.Annotations = map[string]string{}
		}
		cluster.Annotations[clusterv1alpha1.OrphanResourcesAnnotation] = "true"
		if err := cp.Update(ctx, cluster); err != nil {
			return fmt.Errorf("%s %s: mark the cluster's objects to be left in place: %w", verb, o.ClusterName, err)
		}
	}
	if err := cp.Delete(ctx, cluster); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("%s %s: delete the Cluster: %w", verb, o.ClusterName, err)
	}
	if o.Wait <= 0 {
		// The credentials stay until the Cluster is gone: the controllers
		// need them to remove the member's objects.
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, o.Wait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cp.Get(wctx, client.ObjectKey{Name: o.ClusterName}, &clusterv1alpha1.Cluster{})
		if apierrors.IsNotFound(err) {
			break
		}
		select {
		case <-wctx.Done():
			if o.Force && !res.Forced {
				var err error
				if res.Left, err = release(ctx, cp, o.ClusterName); err != nil {
					return fmt.Errorf("%s %s --force: %w", verb, o.ClusterName, err)
				}
				res.Forced = true
				wctx, cancel = context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				continue
			}
			return fmt.Errorf("%s %s: the Cluster is still being removed after %s (its Works wait for their objects to be deleted in the member; see %s, or add --force to release it and leave what is in the member)", verb, o.ClusterName, o.Wait, log)
		case <-tick.C:
		}
	}
	for _, ref := range []*clusterv1alpha1.LocalSecretReference{cluster.Spec.SecretRef, cluster.Spec.ImpersonatorSecretRef} {
		if ref == nil {
			continue
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
		if err := cp.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: delete credentials Secret %s/%s: %w", verb, o.ClusterName, ref.Namespace, ref.Name, err)
		}
	}
	if o.Member != nil {
		cs, err := kubernetes.NewForConfig(o.Member)
		if err != nil {
			return err
		}
		sa := MemberServiceAccountPrefix + o.ClusterName
		if err := cs.RbacV1().ClusterRoleBindings().Delete(ctx, "karmada-controller-manager:"+sa, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: remove the role binding in the member: %w", verb, o.ClusterName, err)
		}
		if err := cs.CoreV1().ServiceAccounts(ClusterSecretNamespace).Delete(ctx, sa, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: remove service account %s/%s in the member: %w", verb, o.ClusterName, ClusterSecretNamespace, sa, err)
		}
		if err := cs.CoreV1().Secrets(ClusterSecretNamespace).Delete(ctx, sa+"-token", metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: remove the token Secret in the member: %w", verb, o.ClusterName, err)
		}
		// The impersonator's ClusterRole and binding went with their Works.
		if err := cs.CoreV1().ServiceAccounts(ClusterSecretNamespace).Delete(ctx, ImpersonatorServiceAccount, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: remove service account %s/%s in the member: %w", verb, o.ClusterName, ClusterSecretNamespace, ImpersonatorServiceAccount, err)
		}
		if err := cs.CoreV1().Secrets(ClusterSecretNamespace).Delete(ctx, ImpersonatorServiceAccount+"-token", metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("%s %s: remove the impersonator's token Secret in the member: %w", verb, o.ClusterName, err)
		}
	}
	return nil
}
