package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const notReadyNoExecutePolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: not-ready-evicts}
spec:
  addOnConditions:
  - {conditionType: Ready, operator: In, statusValues: ["False", "Unknown"]}
  removeOnConditions:
  - {conditionType: Ready, operator: In, statusValues: ["True"]}
  taints:
  - {key: cluster.karmada.io/not-ready, effect: NoExecute}
`

// TestFailover runs a stack with Failover on (the taint manager evicting on
// NoExecute, graceful eviction with a 90 s timeout, a 10 s failure
// threshold): a NoExecute taint by hand moves a ClusterRole and a ConfigMap
// off a cluster and the taint's removal brings them back; a failed member,
// tainted NoExecute by a ClusterTaintPolicy, loses its Deployment replicas
// to the others, the graceful eviction task ends once they are ready, and
// the stale copy goes when the member comes back.
func TestFailover(t *testing.T) {
	extended(t)
	s := startStack(t, 3, "--feature-gates=Failover=true",
		"--controller-manager-arg=--enable-no-execute-taint-eviction=true",
		"--controller-manager-arg=--resource-eviction-rate=4",
		"--controller-manager-arg=--graceful-eviction-timeout=90s",
		"--controller-manager-arg=--cluster-failure-threshold=10s")
	s.kubectl("", "create", "namespace", "fo")

	t.Run("a NoExecute taint by hand evicts, and its removal brings the resources back", func(t *testing.T) {
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: fo}
data: {mode: fast}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: fo-reader}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: fo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member2, member3]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: fo-reader}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: fo-reader}]
  placement: {clusterAffinity: {clusterNames: [member2, member3]}}
`)
		s.waitFor(t, "fast", "member2", "configmap", "settings", "-n", "fo", "-o", "jsonpath={.data.mode}")
		s.waitFor(t, "fo-reader", "member2", "clusterrole", "fo-reader", "-o", "jsonpath={.metadata.name}")

		s.kubectl("", "patch", "cluster", "member2", "--type=merge", "-p", `{"spec":{"taints":[{"key":"maintenance","value":"now","effect":"NoExecute"}]}}`)
		eventually(t, 2*time.Minute, "the ConfigMap and ClusterRole to leave member2", func() (bool, string) {
			cm := s.get("member2", "configmap", "settings", "-n", "fo", "-o", "name")
			cr := s.get("member2", "clusterrole", "fo-reader", "-o", "name")
			return cm == "" && cr == "", cm + " " + cr
		})
		for _, b := range [][]string{{"rb", "settings-configmap", "-n", "fo"}, {"crb", "fo-reader-clusterrole"}} {
			s.waitFor(t, "member3", "", append(b, "-o", "jsonpath={.spec.clusters[*].name}")...)
			s.waitFor(t, "", "", append(b, "-o", "jsonpath={.spec.gracefulEvictionTasks}")...)
		}
		if got := s.get("member3", "configmap", "settings", "-n", "fo", "-o", "jsonpath={.data.mode}"); got != "fast" {
			t.Errorf("member3 lost the ConfigMap: %q", got)
		}
		events := s.get("", "events", "-n", "fo", "--field-selector", "reason=EvictWorkloadFromClusterSucceed", "-o", "jsonpath={.items[*].message}")
		if !strings.Contains(events, "Evict from cluster member2 succeed.") {
			t.Errorf("no EvictWorkloadFromClusterSucceed event: %q", events)
		}

		s.kubectl("", "patch", "cluster", "member2", "--type=json", "-p", `[{"op":"remove","path":"/spec/taints"}]`)
		s.waitFor(t, "fast", "member2", "configmap", "settings", "-n", "fo", "-o", "jsonpath={.data.mode}")
		s.waitFor(t, "fo-reader", "member2", "clusterrole", "fo-reader", "-o", "jsonpath={.metadata.name}")
	})

	t.Run("evictions are paced by --resource-eviction-rate", func(t *testing.T) {
		const n = 20
		var docs []string
		for i := range n {
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: paced-%d, namespace: fo, labels: {set: paced}}\ndata: {i: \"%d\"}\n", i, i))
		}
		docs = append(docs, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: paced, namespace: fo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {set: paced}}}]
  placement: {clusterAffinity: {clusterNames: [member2, member3]}}
  failover: {cluster: {purgeMode: Directly}}
`)
		s.mustApply(t, "", strings.Join(docs, "---\n"))
		placed := func() int {
			out := s.get("", "rb", "-n", "fo", "-o", `jsonpath={range .items[?(@.spec.resource.name)]}{.spec.resource.name}={.spec.clusters[*].name}{"\n"}{end}`)
			count := 0
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "paced-") && strings.Contains(line, "member2") {
					count++
				}
			}
			return count
		}
		eventually(t, 2*time.Minute, "the paced ConfigMaps placed on member2", func() (bool, string) { return placed() == n, fmt.Sprint(placed()) })
		start := time.Now()
		s.kubectl("", "patch", "cluster", "member2", "--type=merge", "-p", `{"spec":{"taints":[{"key":"maintenance","value":"pace","effect":"NoExecute"}]}}`)
		eventually(t, 2*time.Minute, "every paced binding evicted from member2", func() (bool, string) { return placed() == 0, fmt.Sprint(placed()) })
		// 4 a second with a burst of one: 20 evictions take at least 4.75 s.
		if took := time.Since(start); took < 4750*time.Millisecond {
			t.Errorf("%d evictions at --resource-eviction-rate=4 took %s; want at least 4.75s", n, took)
		}
		s.kubectl("", "patch", "cluster", "member2", "--type=json", "-p", `[{"op":"remove","path":"/spec/taints"}]`)
		s.kubectl("", "delete", "pp", "paced", "-n", "fo")
		s.kubectl("", "delete", "configmap", "-n", "fo", "-l", "set=paced")
	})

	t.Run("a failed cluster's replicas move, and its stale copy goes when it returns", func(t *testing.T) {
		s.mustApply(t, "", notReadyNoExecutePolicy)
		// Dynamic weights keep existing assignments (only a WorkloadRebalancer
		// spreads them afresh, below).
		s.mustApply(t, "", deploymentYAML("fo", "web", 6, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: fo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`)
		placement := func() string {
			return s.get("", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
		}
		s.waitFor(t, "member1=2 member2=2 member3=2", "", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
		s.waitFor(t, "2", "member1", "deployment", "web", "-n", "fo", "-o", "jsonpath={.status.readyReplicas}")

		pid := s.apiServerPID("member1")
		if pid == 0 {
			t.Fatal("no member1 API server")
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := true
		defer func() {
			if stopped {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}()
		down := time.Now()
		eventually(t, 3*time.Minute, "member1 to be tainted not-ready:NoExecute", func() (bool, string) {
			got := s.get("", "cluster", "member1", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect} {end}`)
			return strings.Contains(got, "cluster.karmada.io/not-ready:NoExecute"), got
		})
		t.Logf("NoExecute after %s", time.Since(down).Round(time.Second))
		eventually(t, 2*time.Minute, "the replicas to leave member1", func() (bool, string) {
			got := placement()
			return got == "member2=3 member3=3", got
		})
		t.Logf("rescheduled after %s", time.Since(down).Round(time.Second))
		tasks := s.get("", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.gracefulEvictionTasks[*]}{.fromCluster}/{.reason}/{.producer}/{.purgeMode} {end}`)
		if tasks != "member1/TaintUntolerated/TaintManager/Gracefully" && tasks != "" {
			t.Errorf("graceful eviction tasks = %q", tasks)
		}
		s.waitFor(t, "3", "member2", "deployment", "web", "-n", "fo", "-o", "jsonpath={.status.readyReplicas}")
		s.waitFor(t, "3", "member3", "deployment", "web", "-n", "fo", "-o", "jsonpath={.status.readyReplicas}")
		// The replacement is ready: the task ends well before its 90 s timeout.
		eventually(t, 80*time.Second, "the graceful eviction task to end", func() (bool, string) {
			got := s.get("", "rb", "web-deployment", "-n", "fo", "-o", "jsonpath={.spec.gracefulEvictionTasks}")
			return got == "", got
		})
		t.Logf("task cleared after %s", time.Since(down).Round(time.Second))

		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		stopped = false
		eventually(t, 3*time.Minute, "the stale copy to leave member1", func() (bool, string) {
			got := s.get("member1", "deployment", "web", "-n", "fo", "-o", "name")
			return got == "", got
		})
		eventually(t, 2*time.Minute, "the NoExecute taint to go once member1 is Ready", func() (bool, string) {
			got := s.get("", "cluster", "member1", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect} {end}`)
			return !strings.Contains(got, "NoExecute"), got
		})
	})

	t.Run("application failover, once per purge mode", func(t *testing.T) {
		// In member1 the pods cannot be scheduled: the application is Unhealthy
		// there. The override comes first, so no healthy copy ever runs there.
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: stuck-in-member1, namespace: fo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: app-directly}
  - {apiVersion: apps/v1, kind: Deployment, name: app-gracefully}
  - {apiVersion: apps/v1, kind: Deployment, name: app-never}
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      plaintext:
      - {path: /spec/template/spec/nodeSelector, operator: add, value: {nowhere: "true"}}
`)
		var yaml strings.Builder
		modes := []string{"Directly", "Gracefully", "Never"}
		for _, mode := range modes {
			name := "app-" + strings.ToLower(mode)
			yaml.WriteString(deploymentYAML("fo", name, 1, "nginx") + "---\n")
			yaml.WriteString(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ` + name + `, namespace: fo}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: ` + name + `}]
  propagateDeps: true
  placement:
    clusterAffinities:
    - {affinityName: primary, clusterNames: [member1]}
    - {affinityName: backup, clusterNames: [member2]}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 10}
      purgeMode: ` + mode + `
---
`)
		}
		s.mustApply(t, "", yaml.String())
		for _, mode := range modes {
			name := "app-" + strings.ToLower(mode)
			eventually(t, 3*time.Minute, name+" to move to member2", func() (bool, string) {
				got := s.get("", "rb", name+"-deployment", "-n", "fo", "-o", "jsonpath={.spec.clusters[*].name}")
				return got == "member2", got
			})
			s.waitFor(t, "1", "member2", "deployment", name, "-n", "fo", "-o", "jsonpath={.status.readyReplicas}")
		}
		for _, mode := range []string{"Directly", "Gracefully"} {
			name := "app-" + strings.ToLower(mode)
			eventually(t, 2*time.Minute, name+"'s old copy to leave member1", func() (bool, string) {
				got := s.get("member1", "deployment", name, "-n", "fo", "-o", "name")
				return got == "", got
			})
			s.waitFor(t, "", "", "rb", name+"-deployment", "-n", "fo", "-o", "jsonpath={.spec.gracefulEvictionTasks}")
		}
		// Never: the old copy stays, and so does its task.
		s.waitFor(t, "member1/ApplicationFailure/Never/true", "", "rb", "app-never-deployment", "-n", "fo", "-o",
			`jsonpath={range .spec.gracefulEvictionTasks[*]}{.fromCluster}/{.reason}/{.purgeMode}/{.suppressDeletion}{end}`)
		if got := s.get("member1", "deployment", "app-never", "-n", "fo", "-o", "name"); got == "" {
			t.Error("purge mode Never removed the old copy")
		}
	})

	t.Run("a WorkloadRebalancer schedules afresh", func(t *testing.T) {
		// After the failover above, web runs 3+3 on member2 and member3;
		// member1 is back.
		s.waitFor(t, "member2=3 member3=3", "", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
		s.mustApply(t, "", `apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata: {name: spread-again}
spec:
  ttlSecondsAfterFinished: 20
  workloads:
  - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: fo}
  - {apiVersion: apps/v1, kind: Deployment, name: ghost, namespace: fo}
`)
		eventually(t, 2*time.Minute, "web spread afresh, member1 included", func() (bool, string) {
			got := s.get("", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.clusters[*]}{.name} {end}`)
			return got == "member1 member2 member3", got
		})
		s.waitFor(t, "ghost=Failed/ReferencedBindingNotFound web=Successful/", "", "workloadrebalancer", "spread-again", "-o",
			`jsonpath={range .status.observedWorkloads[*]}{.workload.name}={.result}/{.reason} {end}`)
		eventually(t, time.Minute, "the finished rebalancer to be deleted after its TTL", func() (bool, string) {
			got := s.get("", "workloadrebalancer", "spread-again", "-o", "name")
			return got == "", got
		})
	})

	t.Run("a cluster that starts or stops matching a placement gains or loses the resource", func(t *testing.T) {
		s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: gold-only, namespace: fo}
data: {tier: gold}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gold-only, namespace: fo}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: gold-only}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {tier: gold}}}
`)
		s.kubectl("", "label", "cluster", "member3", "tier=gold")
		s.waitFor(t, "gold", "member3", "configmap", "gold-only", "-n", "fo", "-o", "jsonpath={.data.tier}")
		s.kubectl("", "label", "cluster", "member2", "tier=gold")
		s.waitFor(t, "gold", "member2", "configmap", "gold-only", "-n", "fo", "-o", "jsonpath={.data.tier}")
		s.kubectl("", "label", "cluster", "member3", "tier-")
		eventually(t, time.Minute, "the ConfigMap to leave member3", func() (bool, string) {
			got := s.get("member3", "configmap", "gold-only", "-n", "fo", "-o", "name")
			return got == "", got
		})
		if got := s.get("member2", "configmap", "gold-only", "-n", "fo", "-o", "name"); got == "" {
			t.Error("member2 lost the ConfigMap")
		}
	})

	t.Run("unjoin with Failover on drops the cluster from every binding and status", func(t *testing.T) {
		s.waitFor(t, "member1 member2 member3", "", "rb", "web-deployment", "-n", "fo", "-o", `jsonpath={range .spec.clusters[*]}{.name} {end}`)
		if out, ok := s.flotillaCmd("unjoin", "member3", "--kubeconfig", filepath.Join(s.dataDir, "karmada.config"),
			"--cluster-kubeconfig", filepath.Join(s.dataDir, "members.config"), "--cluster-context", "member3"); !ok {
			t.Fatalf("unjoin: %s", out)
		}
		for _, b := range [][]string{{"rb", "web-deployment", "-n", "fo"}, {"rb", "settings-configmap", "-n", "fo"}, {"crb", "fo-reader-clusterrole"}} {
			eventually(t, 2*time.Minute, strings.Join(b, " ")+" to forget member3", func() (bool, string) {
				got := s.get("", append(b, "-o", `jsonpath={.spec.clusters[*].name}|{.status.aggregatedStatus[*].clusterName}|{.spec.gracefulEvictionTasks[*].fromCluster}`)...)
				return !strings.Contains(got, "member3"), got
			})
		}
		s.waitFor(t, "6", "", "deployment", "web", "-n", "fo", "-o", "jsonpath={.status.readyReplicas}")
		s.waitFor(t, "", "member3", "deployment", "web", "-n", "fo", "-o", "name")
	})
}
