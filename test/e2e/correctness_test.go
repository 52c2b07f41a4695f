package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCorrectness checks, on one stack of three bare members, behaviours
// Karmada users rely on that once differed: a placement that no longer fits
// is emptied, a policy seen late still applies, a namespace that stops
// syncing keeps its member copies, ClusterOverridePolicies reach
// namespaces, FullyApplied is honest about an override that cannot apply,
// success events are raised, and a deleted cluster leaves every binding.
// The subtests share the stack and run in order; the last one deletes a
// cluster.
func TestCorrectness(t *testing.T) {
	s := startStack(t, 3, "--bare-members")

	t.Run("a placement that no longer fits is emptied", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t1")
		s.kubectl("", "label", "cluster", "member1", "zone-ok=yes")
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: phase-config, namespace: t1}
data: {key: value}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: by-label, namespace: t1}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: phase-config}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {zone-ok: "yes"}}}}
`)
		s.waitFor(t, "value", "member1", "configmap", "phase-config", "-n", "t1", "-o", "jsonpath={.data.key}")
		s.kubectl("", "label", "cluster", "member1", "zone-ok-")
		s.waitFor(t, "", "member1", "configmap", "phase-config", "-n", "t1", "-o", "jsonpath={.data.key}")
		s.waitFor(t, "", "", "rb", "phase-config-configmap", "-n", "t1", "-o", "jsonpath={.spec.clusters}")
		s.waitFor(t, "False/NoClusterFit", "", "rb", "phase-config-configmap", "-n", "t1", "-o",
			"jsonpath={.status.conditions[?(@.type=='Scheduled')].status}/{.status.conditions[?(@.type=='Scheduled')].reason}")
		// Karmada raises ScheduleBindingFailed on the template too.
		s.waitFor(t, "ScheduleBindingFailed", "", "events", "-n", "t1", "--field-selector",
			"involvedObject.kind=ConfigMap,involvedObject.name=phase-config,reason=ScheduleBindingFailed", "-o", "jsonpath={.items[0].reason}")
	})

	t.Run("an OverridePolicy applied with its template always takes effect", func(t *testing.T) {
		for i := range 5 {
			ns := fmt.Sprintf("late-%d", i)
			s.kubectl("", "create", "namespace", ns)
			s.mustApply(t, "", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: %[1]s}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: plain, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: plain}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: project, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: plain}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      labelsOverrider: [{operator: add, value: {example.com/project: p-123}}]
`, ns))
		}
		for i := range 5 {
			s.waitFor(t, "p-123", "member1", "configmap", "plain", "-n", fmt.Sprintf("late-%d", i), "-o", `jsonpath={.metadata.labels.example\.com/project}`)
		}
	})

	t.Run("a cluster's new labels re-render the overrides that select it", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t2")
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: tiered, namespace: t2}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: tiered, namespace: t2}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: tiered}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: gold, namespace: t2}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: tiered}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {tier: gold}}}
    overriders:
      labelsOverrider: [{operator: add, value: {tier: gold}}]
`)
		s.waitFor(t, "tiered", "member2", "configmap", "tiered", "-n", "t2", "-o", "jsonpath={.metadata.name}")
		s.kubectl("", "label", "cluster", "member2", "tier=gold")
		s.waitFor(t, "gold", "member2", "configmap", "tiered", "-n", "t2", "-o", "jsonpath={.metadata.labels.tier}")
		s.kubectl("", "label", "cluster", "member2", "tier-")
		s.waitFor(t, "", "member2", "configmap", "tiered", "-n", "t2", "-o", "jsonpath={.metadata.labels.tier}")
	})

	t.Run("skip-auto-propagation keeps the namespace and its workloads in members", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t3")
		s.mustApply(t, "", deploymentYAML("t3", "web", 2, "nginx:1.25")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: t3}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "web", m, "deploy", "web", "-n", "t3", "-o", "jsonpath={.metadata.name}")
		}
		work := s.get("member1", "namespace", "t3", "-o", `jsonpath={.metadata.annotations.work\.karmada\.io/name}`)
		if work == "" {
			t.Fatal("member1's namespace t3 does not name its Work")
		}
		s.kubectl("", "label", "namespace", "t3", "namespace.karmada.io/skip-auto-propagation=true")
		// Syncing stops: the namespace's Works go ...
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "", "", "work", work, "-n", "karmada-es-"+m, "-o", "jsonpath={.metadata.name}")
		}
		// ... and what users run stays.
		for _, m := range []string{"member1", "member2"} {
			if got := s.get(m, "namespace", "t3", "-o", "jsonpath={.status.phase}"); got != "Active" {
				t.Errorf("%s: namespace t3 is %q, want Active", m, got)
			}
			if got := s.get(m, "deploy", "web", "-n", "t3", "-o", "jsonpath={.metadata.name}"); got != "web" {
				t.Errorf("%s: Deployment t3/web is gone", m)
			}
		}
	})

	t.Run("a ClusterOverridePolicy selecting a Namespace changes its member copies", func(t *testing.T) {
		cop := func(name string) string {
			return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: mesh-%[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: %[1]s}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      labelsOverrider: [{operator: add, value: {mesh-injection: enabled}}]
`, name)
		}
		// Policy after the namespace, and before it.
		s.kubectl("", "create", "namespace", "mesh-after")
		s.waitFor(t, "Active", "member1", "namespace", "mesh-after", "-o", "jsonpath={.status.phase}")
		s.mustApply(t, "", cop("mesh-after"))
		s.mustApply(t, "", cop("mesh-before"))
		s.kubectl("", "create", "namespace", "mesh-before")
		for _, ns := range []string{"mesh-after", "mesh-before"} {
			s.waitFor(t, "enabled", "member1", "namespace", ns, "-o", "jsonpath={.metadata.labels.mesh-injection}")
			s.waitFor(t, "Active", "member2", "namespace", ns, "-o", "jsonpath={.status.phase}")
			if got := s.get("member2", "namespace", ns, "-o", "jsonpath={.metadata.labels.mesh-injection}"); got != "" {
				t.Errorf("member2's %s got the label meant for member1: %q", ns, got)
			}
		}
	})

	t.Run("FullyApplied is false while a cluster's Work holds an earlier rendering", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t4")
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: t4}
data: {v: "1"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: app, namespace: t4}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`)
		s.waitFor(t, "True", "", "rb", "app-configmap", "-n", "t4", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		for _, reason := range []string{"ApplyPolicySucceed", "ScheduleBindingSucceed", "SyncWorkSucceed", "SyncSucceed", "AggregateStatusSucceed"} {
			s.waitFor(t, reason, "", "events", "-n", "t4", "--field-selector",
				"involvedObject.kind=ConfigMap,involvedObject.name=app,reason="+reason, "-o", "jsonpath={.items[0].reason}")
		}
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: broken, namespace: t4}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: app}]
  overrideRules:
  - targetCluster: {clusterNames: [member3]}
    overriders:
      plaintext: [{path: /spec/nosuch, operator: replace, value: x}]
`)
		s.kubectl("", "-n", "t4", "patch", "configmap", "app", "--type=merge", "-p", `{"data":{"v":"2"}}`)
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "2", m, "configmap", "app", "-n", "t4", "-o", "jsonpath={.data.v}")
		}
		s.waitFor(t, "False", "", "rb", "app-configmap", "-n", "t4", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		msg := s.get("", "rb", "app-configmap", "-n", "t4", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].message}")
		if !strings.Contains(msg, "member3") {
			t.Errorf("FullyApplied message does not name member3: %q", msg)
		}
		if got := s.get("member3", "configmap", "app", "-n", "t4", "-o", "jsonpath={.data.v}"); got != "1" {
			t.Errorf("member3 should keep its last good copy (v=1), has v=%q", got)
		}
		s.waitFor(t, "SyncWorkFailed", "", "events", "-n", "t4", "--field-selector",
			"involvedObject.kind=ConfigMap,involvedObject.name=app,reason=SyncWorkFailed", "-o", "jsonpath={.items[0].reason}")
		s.kubectl("", "-n", "t4", "delete", "overridepolicy", "broken")
		s.waitFor(t, "2", "member3", "configmap", "app", "-n", "t4", "-o", "jsonpath={.data.v}")
		s.waitFor(t, "True", "", "rb", "app-configmap", "-n", "t4", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
	})

	t.Run("a Divided Job divides parallelism and completions", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t6")
		s.mustApply(t, "", `apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: t6}
spec:
  parallelism: 10
  completions: 10
  template:
    spec:
      restartPolicy: Never
      containers: [{name: w, image: busybox:1.36}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: batch, namespace: t6}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: batch}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member2]}, weight: 6}
        - {targetCluster: {clusterNames: [member1]}, weight: 4}
`)
		s.waitFor(t, "6/6", "member2", "job", "batch", "-n", "t6", "-o", "jsonpath={.spec.parallelism}/{.spec.completions}")
		s.waitFor(t, "4/4", "member1", "job", "batch", "-n", "t6", "-o", "jsonpath={.spec.parallelism}/{.spec.completions}")
	})

	t.Run("a LoadBalancer Service aggregates its members' ingress as Karmada does", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t7")
		s.mustApply(t, "", `apiVersion: v1
kind: Service
metadata: {name: lb, namespace: t7}
spec:
  type: LoadBalancer
  selector: {app: lb}
  ports: [{port: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: lb, namespace: t7}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: lb}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
		setIngress := func(member, ip string) {
			s.waitFor(t, "lb", member, "service", "lb", "-n", "t7", "-o", "jsonpath={.metadata.name}")
			s.kubectl(member, "-n", "t7", "patch", "service", "lb", "--subresource=status", "--type=merge",
				"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"`+ip+`"}]}}}`)
		}
		setIngress("member1", "192.0.2.20")
		setIngress("member2", "192.0.2.10")
		s.waitFor(t, "192.0.2.10 192.0.2.20", "", "service", "lb", "-n", "t7", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
		if h := s.get("", "service", "lb", "-n", "t7", "-o", "jsonpath={.status.loadBalancer.ingress[*].hostname}"); h != "" {
			t.Errorf("the template's ingress carries hostnames %q; Karmada lists the members' entries as they are", h)
		}
		setIngress("member2", "192.0.2.20")
		s.waitFor(t, "192.0.2.20", "", "service", "lb", "-n", "t7", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
	})

	t.Run("an OverridePolicy that fails validation is refused and takes effect nowhere", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t8")
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: t8}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: cfg, namespace: t8}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cfg}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		out, err := s.apply(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bad-labels, namespace: t8}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: cfg}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      labelsOverrider: [{operator: add, value: {"bad key!": x, good: "yes"}}]
`)
		if err == nil || !strings.Contains(out, "spec.overrideRules[0].overriders.labelsOverrider[0].value") {
			t.Errorf("want the OverridePolicy refused, naming the bad label; got err=%v:\n%s", err, out)
		}
		s.waitFor(t, "True", "", "rb", "cfg-configmap", "-n", "t8", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		if got := s.get("member1", "configmap", "cfg", "-n", "t8", "-o", "jsonpath={.metadata.labels.good}"); got != "" {
			t.Errorf("the invalid OverridePolicy took effect: member1's copy has good=%q", got)
		}
	})

	t.Run("a deleted cluster leaves every binding", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "t5")
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: only3, namespace: t5}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: only3, namespace: t5}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: only3}]
  placement: {clusterAffinity: {clusterNames: [member3]}}
`)
		s.waitFor(t, "True", "", "rb", "only3-configmap", "-n", "t5", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		s.kubectl("", "delete", "cluster", "member3", "--wait=false")
		s.waitFor(t, "", "", "cluster", "member3", "-o", "jsonpath={.metadata.name}")
		for _, rb := range []string{"only3-configmap", "app-configmap"} {
			ns := map[string]string{"only3-configmap": "t5", "app-configmap": "t4"}[rb]
			eventually(t, 2*time.Minute, rb+" to leave member3", func() (bool, string) {
				got := s.get("", "rb", rb, "-n", ns, "-o", "jsonpath={.spec.clusters[*].name} {.status.aggregatedStatus[*].clusterName}")
				return !strings.Contains(got, "member3"), got
			})
		}
	})
}
