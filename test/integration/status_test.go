package integration

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/execution"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// statusCases check status reporting: the execution controller's Applied
// condition on each Work, and the status controller's aggregatedStatus
// (one item per target cluster) and FullyApplied condition on the binding.
var statusCases = []integrationCase{
	{
		name: "a template applied in both members has Applied Works and a FullyApplied binding listing both",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			e.create(e.controlPlane, e.deployment("web", 1))
			for _, c := range memberNames {
				waitFor(e, e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c+" Applied", func(w *workv1alpha1.Work) (bool, string) {
					cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
					return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == workv1alpha1.WorkAppliedSuccessfulReason &&
						len(w.Status.ManifestStatuses) == 1, describe(cond, w.Status.ManifestStatuses)
				})
			}
			// Karmada's work status controller's events on the Work, for
			// the Deployment it reads (whose health the built-in rules judge).
			w := e.workOf("member1", "Deployment", "web")
			for _, reason := range []string{events.ReflectStatusSucceed, events.InterpretHealthSucceed} {
				e.waitEventOn(eventOn{ns: w.Namespace, kind: "Work", name: w.Name, reason: reason, source: execution.WorkStatusEventSource,
					parts: []string{"Deployment " + e.ns + "/web", "cluster member1"}})
			}
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"web-deployment FullyApplied", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied)
					var applied []string
					for _, item := range b.Status.AggregatedStatus {
						if item.Applied {
							applied = append(applied, item.ClusterName)
						}
					}
					return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == workv1alpha2.FullyAppliedSuccessReason &&
							len(b.Status.AggregatedStatus) == 2 && strings.Join(applied, ",") == "member1,member2",
						describe(cond, b.Status.AggregatedStatus)
				})
		},
	},
	{
		name: "a cluster-scoped template applied in both members has a FullyApplied ClusterResourceBinding",
		run: func(e *env) {
			role := e.clusterRole()
			e.createClusterScoped(&policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
					Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: memberNames}},
				},
			})
			e.createClusterScoped(role)
			waitFor(e, e.controlPlane, &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name(role.Name, "ClusterRole")}},
				"the ClusterResourceBinding FullyApplied", func(b *workv1alpha2.ClusterResourceBinding) (bool, string) {
					cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied)
					return cond != nil && cond.Status == metav1.ConditionTrue && len(b.Status.AggregatedStatus) == 2 &&
						b.Status.AggregatedStatus[0].Applied && b.Status.AggregatedStatus[1].Applied, describe(cond, b.Status.AggregatedStatus)
				})
		},
	},
	{
		name: "an object the member already has and Flotilla does not manage leaves the Work not Applied and the binding not FullyApplied",
		run: func(e *env) {
			e.create(e.members["member1"], e.configMap("settings", map[string]string{"owner": "someone else"}))
			e.create(e.controlPlane, e.policy("settings").selecting("ConfigMap", "settings").to("member1").obj())
			e.create(e.controlPlane, e.configMap("settings", map[string]string{"owner": "flotilla"}))
			waitFor(e, e.controlPlane, e.workOf("member1", "ConfigMap", "settings"), "the Work not Applied", func(w *workv1alpha1.Work) (bool, string) {
				cond := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
				return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == workv1alpha1.WorkAppliedFailedReason, describe(cond)
			})
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "settings-configmap"}},
				"settings-configmap not FullyApplied", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					cond := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied)
					return cond != nil && cond.Status == metav1.ConditionFalse && cond.Reason == workv1alpha2.FullyAppliedFailedReason &&
							len(b.Status.AggregatedStatus) == 1 && !b.Status.AggregatedStatus[0].Applied &&
							strings.Contains(b.Status.AggregatedStatus[0].AppliedMessage, "not managed by Flotilla"),
						describe(cond, b.Status.AggregatedStatus)
				})
			waitFor(e, e.members["member1"], e.configMap("settings", nil), "member1's own settings untouched", func(cm *corev1.ConfigMap) (bool, string) {
				return cm.Data["owner"] == "someone else", describe(cm.Data)
			})
		},
	},
}
