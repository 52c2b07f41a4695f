package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
)

// TestPolicyFieldsActAsInKarmada applies, as a Karmada user would, the
// policy fields that act beyond placement: dispatch suspension on one
// cluster (kubectl set image reaches member1 only; member2 converges once
// it is lifted; deleting the template while suspended still cleans
// member2), dependentOverrides (no binding until the override exists, and
// the first member copy carries it), deletion protection (refused,
// naming the label; allowed once the label goes) and overflow affinities
// (replicas fill member1 before they spill to member2, and leave member2
// first).
func TestPolicyFieldsActAsInKarmada(t *testing.T) {
	s := sharedStackOf(t, 2)
	s.kubectl("", "create", "namespace", "fields")

	t.Run("suspension on member2 holds its copy back until lifted", func(t *testing.T) {
		suspended := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: fields}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
  suspension:
    dispatchingOnClusters: {clusterNames: [member2]}
`
		s.mustApply(t, "", suspended+"---\n"+deploymentYAML("fields", "web", 1, "nginx:1.26"))
		image := "jsonpath={.spec.template.spec.containers[0].image}"
		s.waitFor(t, "nginx:1.26", "member1", "deploy", "web", "-n", "fields", "-o", image)
		work := `jsonpath={.items[?(@.metadata.annotations.resourcebinding\.karmada\.io/name=="web-deployment")].status.conditions[?(@.type=="Dispatching")].reason}`
		s.waitFor(t, "SuspendDispatching", "", "work", "-n", "karmada-es-member2", "-o", work)
		if got := s.get("member2", "deploy", "web", "-n", "fields", "-o", "name"); got != "" {
			t.Fatalf("web reached member2 while its dispatching is suspended: %s", got)
		}
		s.waitFor(t, "WorkDispatching", "", "events", "-n", "karmada-es-member2", "--field-selector", "reason=WorkDispatching", "-o", "jsonpath={.items[0].reason}")
		if out := s.flotilla("explain", "deployment", "web", "-n", "fields", "--kubeconfig", filepath.Join(s.dataDir, "karmada.config")); !strings.Contains(out, "Suspended:  dispatching to member2, by spec.suspension of") {
			t.Errorf("flotilla explain does not say what is suspended:\n%s", out)
		}

		s.kubectl("", "set", "image", "deployment/web", "-n", "fields", "app=nginx:1.27")
		s.waitFor(t, "nginx:1.27", "member1", "deploy", "web", "-n", "fields", "-o", image)
		s.mustApply(t, "", strings.Split(suspended, "  suspension:")[0])
		s.waitFor(t, "nginx:1.27", "member2", "deploy", "web", "-n", "fields", "-o", image)
		s.waitFor(t, "Dispatching", "", "work", "-n", "karmada-es-member2", "-o", work)

		// Suspended again, then the template deleted: member2 is cleaned.
		s.mustApply(t, "", suspended)
		s.waitFor(t, "SuspendDispatching", "", "work", "-n", "karmada-es-member2", "-o", work)
		s.kubectl("", "delete", "deployment", "web", "-n", "fields")
		s.waitFor(t, "", "member2", "deploy", "web", "-n", "fields", "-o", "name")
		s.waitFor(t, "", "member1", "deploy", "web", "-n", "fields", "-o", "name")
	})

	t.Run("dependentOverrides: nothing propagates until the override exists", func(t *testing.T) {
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: fields}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  dependentOverrides: [api-op]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
`+deploymentYAML("fields", "api", 1, "nginx:1.26"))
		s.waitFor(t, "ApplyPolicyFailed", "", "events", "-n", "fields", "--field-selector", "involvedObject.name=api,reason=ApplyPolicyFailed", "-o", "jsonpath={.items[0].reason}")
		if msg := s.get("", "events", "-n", "fields", "--field-selector", "involvedObject.name=api,reason=ApplyPolicyFailed", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "OverridePolicy fields/api-op does not exist yet") {
			t.Errorf("the event does not name the missing override: %q", msg)
		}
		if rb := s.get("", "rb", "api-deployment", "-n", "fields", "-o", "name"); rb != "" {
			t.Fatalf("the binding exists while the dependent override is missing: %s", rb)
		}
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: api-op, namespace: fields}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: "1.27"}]
`)
		s.waitFor(t, "nginx:1.27", "member1", "deploy", "api", "-n", "fields", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
		// The first copy already carried the override: the member's
		// Deployment was never rolled out with another template.
		if gen := s.get("member1", "deploy", "api", "-n", "fields", "-o", "jsonpath={.metadata.generation}"); gen != "1" {
			t.Errorf("member1's Deployment is at generation %s: it was created without the override and changed after", gen)
		}
	})

	t.Run("overflowAffinities: member1 fills up first, member2 takes the rest and gives it back first", func(t *testing.T) {
		// Each replica asks for half a node's CPU; member2 takes the 2 that
		// member1 has no room for (its estimate, like member1's, is at least 2).
		nodeCPU := strings.Fields(s.get("member1", "nodes", "-o", "jsonpath={.items[*].status.allocatable.cpu}"))
		if len(nodeCPU) == 0 {
			t.Fatal("member1 reports no nodes")
		}
		q := resource.MustParse(nodeCPU[0])
		milli := q.MilliValue() / 2
		// member1 takes what the scheduler's general estimate gives it: with
		// Karmada's default resource models, whole replicas on nodes of its
		// grades' minimums (an 8-CPU, 32Gi node is a 4-CPU one to them).
		var member1 clusterv1alpha1.Cluster
		if err := json.Unmarshal([]byte(s.get("", "cluster", "member1", "-o", "json")), &member1); err != nil {
			t.Fatal(err)
		}
		fits := int((*capacity.Estimators)(nil).Available(&member1, &workv1alpha2.ReplicaRequirements{
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}}))
		if fits < 1 || fits > 2*len(nodeCPU) {
			t.Fatalf("member1 is estimated to fit %d replicas of %dm CPU on %d nodes of %s CPU", fits, milli, len(nodeCPU), nodeCPU[0])
		}
		// member1 preferred, member2 taking the overflow, replicas divided as division says.
		overflowPolicy := func(name, division string) string {
			return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: fields}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement:
    clusterAffinities:
    - affinityName: idc
      clusterNames: [member1]
      overflowAffinities: [{affinityName: cloud, clusterNames: [member2]}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: %[2]s}
`, name, division)
		}
		s.mustApply(t, "", overflowPolicy("burst", "Aggregated")+fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: burst, namespace: fields}
spec:
  replicas: %d
  selector: {matchLabels: {app: burst}}
  template:
    metadata: {labels: {app: burst}}
    spec: {containers: [{name: app, image: nginx, resources: {requests: {cpu: %dm}}}]}
`, fits+2, milli))
		clusters := `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`
		s.waitFor(t, fmt.Sprintf("member1=%d member2=2", fits), "", "rb", "burst-deployment", "-n", "fields", "-o", clusters)
		s.waitFor(t, "2", "member2", "deploy", "burst", "-n", "fields", "-o", "jsonpath={.spec.replicas}")
		// Once member1's Cluster counts its pods (the estimate reads the
		// Cluster's resourceSummary, refreshed every few seconds), scaling in
		// takes member2's replicas first.
		s.waitFor(t, fmt.Sprint(fits), "member1", "deploy", "burst", "-n", "fields", "-o", "jsonpath={.status.readyReplicas}")
		eventually(t, 2*time.Minute, "member1's Cluster to count burst's pods as allocated", func() (bool, string) {
			got := s.get("", "cluster", "member1", "-o", "jsonpath={.status.resourceSummary.allocated.cpu}")
			q, err := resource.ParseQuantity(got)
			return err == nil && q.MilliValue() >= int64(fits)*milli, got
		})
		s.kubectl("", "scale", "deployment", "burst", "-n", "fields", "--replicas", fmt.Sprint(fits+1))
		s.waitFor(t, fmt.Sprintf("member1=%d member2=1", fits), "", "rb", "burst-deployment", "-n", "fields", "-o", clusters)
		s.kubectl("", "scale", "deployment", "burst", "-n", "fields", "--replicas", fmt.Sprint(fits))
		s.waitFor(t, fmt.Sprintf("member1=%d", fits), "", "rb", "burst-deployment", "-n", "fields", "-o", clusters)
		s.waitFor(t, "", "member2", "deploy", "burst", "-n", "fields", "-o", "name")
		s.waitFor(t, fmt.Sprint(fits), "member1", "deploy", "burst", "-n", "fields", "-o", "jsonpath={.status.readyReplicas}")
		explained := s.flotilla("explain", "deployment", "burst", "-n", "fields", "--kubeconfig", filepath.Join(s.dataDir, "karmada.config"))
		for _, want := range []string{"Groups:     idc (preferred): member1; cloud (overflow): member2",
			"member2: it passes the filters, but it is in overflow group cloud, which takes replicas only once the groups before it are full"} {
			if !strings.Contains(explained, want) {
				t.Errorf("flotilla explain does not say %q:\n%s", want, explained)
			}
		}

		// Static weights cannot overflow: refused, naming the field.
		out, err := s.apply(overflowPolicy("static", "Weighted"))
		if err == nil || !strings.Contains(out, "spec.placement.clusterAffinities[0].overflowAffinities: Forbidden: overflowAffinities can only be used together with dynamic weight or aggregated scheduling") {
			t.Errorf("overflow with static weights: err %v, output %s; want a refusal naming the field", err, out)
		}
	})

	t.Run("a deletion-protected object is refused deletion, naming the label", func(t *testing.T) {
		s.kubectl("", "create", "configmap", "keep", "-n", "fields", "--from-literal=k=v")
		s.kubectl("", "label", "configmap", "keep", "-n", "fields", "resourcetemplate.karmada.io/deletion-protected=Always")
		kc, ctx := s.kubeconfig("")
		out, err := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "delete", "configmap", "keep", "-n", "fields").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected") {
			t.Fatalf("deleting a protected ConfigMap: err %v, output %s; want a refusal naming the label", err, out)
		}
		s.kubectl("", "label", "configmap", "keep", "-n", "fields", "resourcetemplate.karmada.io/deletion-protected-")
		s.kubectl("", "delete", "configmap", "keep", "-n", "fields")
	})
}
