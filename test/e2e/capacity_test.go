package e2e

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCapacityAwarePlacement runs the scheduler's capacity estimates as a Karmada user meets
// them, on a stack with the node-level estimator and overcommit protection on. member1 (Push)
// and member3 (Pull, which the control plane does not read nodes from, so that resource models
// estimate it) are fragmented: three nodes of 1.5 CPU each, 4.5 summed. member2 has three
// 4-CPU nodes.
//
//   - The Clusters count their nodes per resource model grade (Karmada's defaults).
//   - A two-component custom kind (MultiplePodTemplatesScheduling) pinned to one cluster goes to
//     the member where a whole set fits, with its components in the binding.
//   - 3 replicas of 2 CPU, dynamic weights: member1 and member3 get none (the summed CPU would
//     give each 2, which would then stay Pending); member2 takes all 3.
//   - Two Aggregated Deployments of 4 one-CPU replicas applied together: the second sees the
//     first's replicas on member2 and spills elsewhere, instead of both landing in the 6 CPUs
//     member2 has left.
//   - flotilla top clusters shows the free room and grades; bad models are refused, naming
//     the field.
//   - A FederatedResourceQuota (FederatedQuotaEnforcement on) puts its ResourceQuota in the
//     member it assigns to, and nowhere else; 3 replicas of 100m against an overall of 200m
//     are refused (QuotaExceeded, nothing in the members) until scaled to 2; assignments over
//     overall are refused at admission.
//   - The descheduler (on, with a 10s threshold): replicas of a dynamic-weight Deployment that
//     stay Pending on member1's cordoned nodes move to member2.
func TestCapacityAwarePlacement(t *testing.T) {
	example := exampleDir(t, "capacity")
	config := filepath.Join(example, "stack.yaml")
	s := newStack(t)
	s.upWith("--config", config, "--feature-gates=SchedulingOvercommitProtection=true,FederatedQuotaEnforcement=true,MultiplePodTemplatesScheduling=true",
		"--controller-manager-arg=--enable-scheduler-estimator=true", "--controller-manager-arg=--controllers=*,agentcsrapproving,descheduler",
		"--controller-manager-arg=--descheduling-interval=5s", "--controller-manager-arg=--unschedulable-threshold=10s")
	s.kubectl("", "create", "namespace", "capacity")

	// 1.5 CPU and 8Gi free: grade 1 of Karmada's defaults (CPU [1,2), memory [4Gi,16Gi)),
	// counted by the cluster controller for member1 and by member3's agent.
	grades := `jsonpath={range .status.resourceSummary.allocatableModelings[?(@.count>0)]}{.grade}:{.count} {end}`
	s.waitFor(t, "1:3", "", "cluster", "member1", "-o", grades)
	s.waitFor(t, "1:3", "", "cluster", "member3", "-o", grades)
	// 4 CPU and 16Gi: grade 3 by CPU, 2 by memory; the lower one counts.
	s.waitFor(t, "2:3", "", "cluster", "member2", "-o", grades)

	t.Run("a two-component workload lands where a whole set fits", func(t *testing.T) {
		// A custom kind taught with Lua: one 4-CPU leader and spec.workers 2-CPU workers.
		for _, m := range []string{"", "member1", "member2", "member3"} {
			s.applyIn(m, crdYAML("Trainer", "trainers"))
		}
		s.mustApply(t, "", `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: trainer}
spec:
  target: {apiVersion: example.io/v1, kind: Trainer}
  customizations:
    componentResource:
      luaScript: |
        function GetComponents(desiredObj)
          return {
            {name = "leader", replicas = 1, replicaRequirements = {resourceRequest = {cpu = "4"}}},
            {name = "worker", replicas = desiredObj.spec.workers, replicaRequirements = {resourceRequest = {cpu = "2"}}},
          }
        end
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: trainer, namespace: capacity}
spec:
  resourceSelectors: [{apiVersion: example.io/v1, kind: Trainer}]
  placement:
    spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]
---
apiVersion: example.io/v1
kind: Trainer
metadata: {name: job, namespace: capacity}
spec: {workers: 4}
`)
		// 12 CPU a set: member2's three 4-CPU nodes hold one (the leader on one
		// node, two workers on each other); 1.5-CPU nodes hold no leader.
		components := `jsonpath={range .spec.clusters[*]}{.name}:{range .components[*]}{.name}={.replicas},{end}{end}`
		s.waitFor(t, "member2:leader=1,worker=4,", "", "rb", "job-trainer", "-n", "capacity", "-o", components)
		s.waitFor(t, "4", "member2", "trainers", "job", "-n", "capacity", "-o", "jsonpath={.spec.workers}")
	})

	t.Run("a fragmented member gets no replica that fits none of its nodes", func(t *testing.T) {
		s.kubectl("", "apply", "-n", "capacity", "-f", filepath.Join(example, "big.yaml"))
		s.waitFor(t, "member2=3", "", "rb", "big-deployment", "-n", "capacity", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
		s.waitFor(t, "3", "member2", "deploy", "big", "-n", "capacity", "-o", "jsonpath={.status.readyReplicas}")
	})

	t.Run("two workloads placed together do not take the same room", func(t *testing.T) {
		// member2 has 12 CPU, 6 of them taken by big: room for 6 one-CPU
		// replicas, so each of east and west fits there alone, but not both.
		s.kubectl("", "apply", "-n", "capacity", "-f", filepath.Join(example, "together.yaml"))
		clusters := `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`
		var east, west string
		eventually(t, 2*time.Minute, "east and west to be scheduled", func() (bool, string) {
			east = s.get("", "rb", "east-deployment", "-n", "capacity", "-o", clusters)
			west = s.get("", "rb", "west-deployment", "-n", "capacity", "-o", clusters)
			return replicasIn(east) == 4 && replicasIn(west) == 4, "east: " + east + "; west: " + west
		})
		onMember2 := replicasIn(east, "member2") + replicasIn(west, "member2")
		if onMember2 > 6 {
			t.Errorf("east (%s) and west (%s) put %d one-CPU replicas on member2, which has room for 6", east, west, onMember2)
		}
		for _, d := range []string{"east", "west"} {
			s.waitFor(t, "4", "", "deploy", d, "-n", "capacity", "-o", "jsonpath={.status.readyReplicas}")
		}
	})

	t.Run("flotilla top clusters shows free room and grades", func(t *testing.T) {
		out := s.flotilla("top", "clusters", "--kubeconfig", filepath.Join(s.dataDir, "karmada.config"))
		for _, want := range []string{"NAME", "CPU(free/allocatable)", "GRADES", "member1", "/4500m", "1:3"} {
			if !strings.Contains(out, want) {
				t.Errorf("flotilla top clusters does not show %q:\n%s", want, out)
			}
		}
	})

	t.Run("a FederatedResourceQuota sets member quotas and refuses placements past overall", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "quota")
		s.kubectl("", "apply", "-n", "quota", "-f", filepath.Join(exampleDir(t, "quota"), "frq.yaml"))
		// One ResourceQuota, in member1 only, through a Work with Karmada's labels.
		s.waitFor(t, "100m", "member1", "resourcequota", "team", "-n", "quota", "-o", "jsonpath={.spec.hard.cpu}")
		if got := s.get("member2", "resourcequota", "-n", "quota", "-o", "name"); got != "" {
			t.Errorf("member2, which has no assignment, has ResourceQuotas: %s", got)
		}
		s.waitFor(t, "team", "", "work", "-A", "-l", "federatedresourcequota.karmada.io/namespace=quota", "-o", "jsonpath={.items[0].metadata.labels.federatedresourcequota\\.karmada\\.io/name}")
		s.waitFor(t, "member1:100m", "", "federatedresourcequota", "team", "-n", "quota", "-o", "jsonpath={range .status.aggregatedStatus[*]}{.clusterName}:{.hard.cpu}{end}")
		s.waitFor(t, "200m", "", "federatedresourcequota", "team", "-n", "quota", "-o", "jsonpath={.status.overall.cpu}")
		// Nothing uses it yet: OVERALL_USED reads zero, as a ResourceQuota's USED.
		s.waitFor(t, "0", "", "federatedresourcequota", "team", "-n", "quota", "-o", "jsonpath={.status.overallUsed.cpu}")

		// 3 replicas of 100m against an overall of 200m: refused, nothing in the members.
		s.kubectl("", "apply", "-n", "quota", "-f", filepath.Join(exampleDir(t, "quota"), "app.yaml"))
		s.waitFor(t, "False/QuotaExceeded", "", "rb", "app-deployment", "-n", "quota", "-o", `jsonpath={.status.conditions[?(@.type=="Scheduled")].status}/{.status.conditions[?(@.type=="Scheduled")].reason}`)
		msg := s.get("", "rb", "app-deployment", "-n", "quota", "-o", `jsonpath={.status.conditions[?(@.type=="Scheduled")].message}`)
		if !strings.Contains(msg, "quota/team") || !strings.Contains(msg, "cpu: 300m requested, 200m allowed") {
			t.Errorf("the QuotaExceeded message does not name the quota and the resource: %q", msg)
		}
		if got := s.get("member2", "deploy", "app", "-n", "quota", "-o", "name"); got != "" {
			t.Errorf("a refused Deployment reached member2: %s", got)
		}
		eventually(t, time.Minute, "a ScheduleBindingFailed event on the Deployment", func() (bool, string) {
			out := s.get("", "events", "-n", "quota", "--field-selector", "reason=ScheduleBindingFailed,involvedObject.name=app", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, "exceeded FederatedResourceQuota"), out
		})

		// Scaling down to what overall allows places it, and overallUsed follows.
		s.kubectl("", "scale", "deployment", "app", "-n", "quota", "--replicas", "2")
		s.waitFor(t, "member2=2", "", "rb", "app-deployment", "-n", "quota", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
		s.waitFor(t, "200m", "", "federatedresourcequota", "team", "-n", "quota", "-o", "jsonpath={.status.overallUsed.cpu}")
		s.waitFor(t, "2", "member2", "deploy", "app", "-n", "quota", "-o", "jsonpath={.status.readyReplicas}")

		// A scale-up past overall of this Duplicated workload is refused too, and the member
		// keeps running the replicas placed: the quota is not run past.
		s.kubectl("", "scale", "deployment", "app", "-n", "quota", "--replicas", "4")
		s.waitFor(t, "False/QuotaExceeded", "", "rb", "app-deployment", "-n", "quota", "-o", `jsonpath={.status.conditions[?(@.type=="Scheduled")].status}/{.status.conditions[?(@.type=="Scheduled")].reason}`)
		time.Sleep(3 * time.Second) // what the member would have got by now, had the Work followed the template
		if got := s.get("member2", "deploy", "app", "-n", "quota", "-o", "jsonpath={.spec.replicas}"); got != "2" {
			t.Errorf("member2 runs app with %q replicas after a refused scale-up to 4, want the 2 placed", got)
		}
		s.kubectl("", "scale", "deployment", "app", "-n", "quota", "--replicas", "2")
		s.waitFor(t, "True", "", "rb", "app-deployment", "-n", "quota", "-o", `jsonpath={.status.conditions[?(@.type=="Scheduled")].status}`)

		// An assignment taken away takes its member quota with it.
		s.kubectl("", "patch", "federatedresourcequota", "team", "-n", "quota", "--type=json", "-p", `[{"op":"remove","path":"/spec/staticAssignments"}]`)
		s.waitFor(t, "", "member1", "resourcequota", "-n", "quota", "-o", "name")

		// Assignments over overall are refused, naming the field.
		kc, ctx := s.kubeconfig("")
		out, err := kubectlAs(kc, "--context", ctx, "patch", "federatedresourcequota", "team", "-n", "quota", "--type=merge", "-p",
			`{"spec":{"staticAssignments":[{"clusterName":"member1","hard":{"cpu":"150m"}},{"clusterName":"member2","hard":{"cpu":"100m"}}]}}`)
		if err == nil || !strings.Contains(out, "spec.overall[cpu]") || !strings.Contains(out, "overall is less than assignments") {
			t.Errorf("assignments over overall: err %v, output %s; want a refusal naming spec.overall[cpu]", err, out)
		}
	})

	t.Run("the descheduler moves replicas a member cannot run", func(t *testing.T) {
		s.kubectl("", "apply", "-n", "capacity", "-f", filepath.Join(exampleDir(t, "capacity"), "mover.yaml"))
		clusters := `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`
		eventually(t, 2*time.Minute, "mover to have replicas in member1 and member2", func() (bool, string) {
			got := s.get("", "rb", "mover-deployment", "-n", "capacity", "-o", clusters)
			return replicasIn(got, "member1") > 0 && replicasIn(got) == 2, got
		})
		s.waitFor(t, "1", "member1", "deploy", "mover", "-n", "capacity", "-o", "jsonpath={.status.readyReplicas}")
		// member1's nodes are cordoned and its mover pods restart: they stay Pending.
		nodes := strings.Fields(s.get("member1", "nodes", "-o", "jsonpath={.items[*].metadata.name}"))
		for _, n := range nodes {
			s.kubectl("member1", "cordon", n)
		}
		defer func() {
			for _, n := range nodes {
				s.kubectl("member1", "uncordon", n)
			}
		}()
		s.kubectl("member1", "delete", "pods", "-n", "capacity", "-l", "app=mover", "--wait=false")
		// After the threshold (10s here, 5m by default) the descheduler takes
		// them back, and the scheduler places them in member2.
		s.waitFor(t, "member2=2", "", "rb", "mover-deployment", "-n", "capacity", "-o", clusters)
		s.waitFor(t, "2", "member2", "deploy", "mover", "-n", "capacity", "-o", "jsonpath={.status.readyReplicas}")
		eventually(t, time.Minute, "a DescheduleBindingSucceed event", func() (bool, string) {
			out := s.get("", "events", "-n", "capacity", "--field-selector", "reason=DescheduleBindingSucceed", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, "unschedulable replica(s) taken from member1"), out
		})
	})

	t.Run("overlapping resource models are refused, naming the field", func(t *testing.T) {
		kc, ctx := s.kubeconfig("")
		out, err := kubectlAs(kc, "--context", ctx, "patch", "cluster", "member2", "--type=merge", "-p",
			`{"spec":{"resourceModels":[{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"2"}]},{"grade":1,"ranges":[{"name":"cpu","min":"1","max":"4"}]}]}}`)
		if err == nil || !strings.Contains(out, "spec.resourceModels[1].ranges[0].min") {
			t.Errorf("overlapping models: err %v, output %s; want a refusal naming spec.resourceModels[1].ranges[0].min", err, out)
		}
	})
}

// replicasIn sums the replicas of "name=replicas " pairs, of the named clusters only if any
// are given.
func replicasIn(placement string, clusters ...string) int {
	sum := 0
	for _, pair := range strings.Fields(placement) {
		name, n, _ := strings.Cut(pair, "=")
		if len(clusters) > 0 && !slices.Contains(clusters, name) {
			continue
		}
		v, _ := strconv.Atoi(n)
		sum += v
	}
	return sum
}
