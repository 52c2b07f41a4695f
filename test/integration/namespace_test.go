package integration

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/namespace"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// namespaceCases check namespace sync: every user namespace of the control
// plane follows to every member through one Work per cluster, until it is
// labelled namespace.karmada.io/skip-auto-propagation=true.
var namespaceCases = []integrationCase{
	{
		name: "a new namespace is in every member, managed through a Work per cluster, and follows its labels",
		run: func(e *env) {
			for _, c := range memberNames {
				waitFor(e, e.controlPlane, e.namespaceWork(c), "the namespace's Work in "+c, func(w *workv1alpha1.Work) (bool, string) {
					return w.Labels[namespace.SyncLabel] == "true", describe(w.Labels)
				})
			}
			update(e, e.controlPlane, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, func(ns *corev1.Namespace) {
				ns.Labels["team"] = "blue"
			})
			for _, c := range memberNames {
				waitFor(e, e.members[c], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, "the namespace in "+c+", managed and labelled",
					func(ns *corev1.Namespace) (bool, string) {
						return ns.Labels[registry.ManagedLabel] == "true" && ns.Labels["team"] == "blue", describe(ns.Labels)
					})
			}
		},
	},
	{
		name: "labelled skip-auto-propagation, a namespace stops syncing and stays in the members",
		run: func(e *env) {
			for _, c := range memberNames {
				waitFor(e, e.controlPlane, e.namespaceWork(c), "the namespace's Work in "+c, exists)
			}
			update(e, e.controlPlane, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, func(ns *corev1.Namespace) {
				ns.Labels[namespace.SkipAutoPropagationLabel] = "true"
			})
			for _, c := range memberNames {
				// Without its Work nothing syncs the namespace any more.
				e.waitGone(e.controlPlane, e.namespaceWork(c), "the namespace's Work in "+c+" deleted")
				waitFor(e, e.members[c], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, "the namespace kept in "+c,
					func(ns *corev1.Namespace) (bool, string) {
						return ns.DeletionTimestamp.IsZero() && ns.Status.Phase == corev1.NamespaceActive, describe(ns.Status, ns.DeletionTimestamp)
					})
			}
		},
	},
}

// namespaceWork is the key of the Work that syncs the case's namespace to cluster.
func (e *env) namespaceWork(cluster string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(cluster), binding.WorkName("Namespace", "", e.ns)
	return w
}
