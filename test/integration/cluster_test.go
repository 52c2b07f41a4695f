package integration

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
)

// clusterCases check the Cluster status the stack's own cluster controller
// keeps (Karmada's cluster status controller): readiness, the member's
// Kubernetes version and the APIs it serves, which the scheduler filters on.
var clusterCases = []integrationCase{
	{
		name: "every member is Ready with its Kubernetes version and API enablements",
		run: func(e *env) {
			for _, name := range memberNames {
				waitFor(e, e.controlPlane, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, "cluster "+name+" status",
					func(c *clusterv1alpha1.Cluster) (bool, string) {
						ready := meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
						complete := meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements)
						return ready && complete && strings.HasPrefix(c.Status.KubernetesVersion, "v1.37") && serves(c, "apps/v1", "deployments") && serves(c, "v1", "configmaps"),
							describe("version", c.Status.KubernetesVersion, "conditions", c.Status.Conditions, "groupVersions", len(c.Status.APIEnablements))
					})
			}
		},
	},
	{
		name: "every member's Cluster has the cluster controller's CreateExecutionSpaceSucceed",
		run: func(e *env) {
			for _, name := range memberNames {
				e.waitEventOn(eventOn{ns: metav1.NamespaceDefault, kind: "Cluster", name: name, reason: events.CreateExecutionSpaceSucceed,
					source: cluster.ControllerName, parts: []string{clusterv1alpha1.ExecutionNamespace(name)}})
			}
		},
	},
}

// serves reports whether the Cluster's apiEnablements list resource in groupVersion.
func serves(c *clusterv1alpha1.Cluster, groupVersion, resource string) bool {
	for _, en := range c.Status.APIEnablements {
		if en.GroupVersion != groupVersion {
			continue
		}
		for _, r := range en.Resources {
			if r.Name == resource {
				return true
			}
		}
	}
	return false
}
