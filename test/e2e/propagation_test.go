package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// get runs kubectl get (with kubectl's own code, in this process: inProcessGet) on the
// control plane ("") or a member and returns its output, or "" when kubectl fails, as when
// the object does not exist.
func (s *stack) get(member string, args ...string) string {
	kc, ctx := s.kubeconfig(member)
	out, ok := inProcessGet(kc, ctx, args...)
	if !ok {
		return ""
	}
	return strings.TrimSpace(out)
}

// waitFor polls a kubectl get until its output equals want.
func (s *stack) waitFor(t *testing.T, want, member string, args ...string) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%q on %q to be %q", strings.Join(args, " "), member, want), func() (bool, string) {
		got := s.get(member, args...)
		return got == want, got
	})
}

func weightedPolicy(name, selectName string, w1, w2 int) string {
	return staticWeightPolicy("default", name, "apps/v1", "Deployment", selectName, w1, w2)
}

// staticWeightPolicy divides the replicas of one template between member1
// and member2 by static weights w1:w2.
func staticWeightPolicy(ns, name, apiVersion, kind, selectName string, w1, w2 int) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: %s, kind: %s, name: %s}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: %d}
        - {targetCluster: {clusterNames: [member2]}, weight: %d}
`, name, ns, apiVersion, kind, selectName, w1, w2)
}

func deploymentYAML(namespace, name string, replicas int, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers: [{name: app, image: %[4]s}]
`, namespace, name, replicas, image)
}

func (s *stack) mustApply(t *testing.T, member, yaml string) {
	t.Helper()
	kc, ctx := s.kubeconfig(member)
	cmd := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(yaml)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apply on %q: %v\n%s\n%s", member, err, out, yaml)
	}
}

func TestPropagation(t *testing.T) {
	s := sharedStackOf(t, 2)

	t.Run("members are registered and Ready", func(t *testing.T) {
		s.waitFor(t, "True True", "", "clusters", "-o", "jsonpath={.items[*].status.conditions[?(@.type=='Ready')].status}")
		out := s.kubectl("", "get", "cluster", "member1", "-o", "jsonpath={.spec.syncMode} {.spec.region} {.status.kubernetesVersion} {.status.nodeSummary.readyNum}")
		if !strings.HasPrefix(out, "Push region-1 v1.37") || !strings.HasSuffix(out, " 3") {
			t.Errorf("cluster member1: %q", out)
		}
		if s.get("", "ns", "karmada-es-member1", "-o", "name") == "" {
			t.Errorf("execution namespace karmada-es-member1 missing")
		}
	})

	t.Run("the nginx example runs in member1 and member2 and reports aggregated status", func(t *testing.T) {
		s.kubectl("", "apply", "-f", exampleDir(t, "nginx"))
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "1", m, "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}")
		}
		s.waitFor(t, "2 2", "", "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas} {.status.availableReplicas}")
		gen := s.get("", "deploy", "nginx", "-o", "jsonpath={.metadata.generation}")
		s.waitFor(t, gen, "", "deploy", "nginx", "-o", "jsonpath={.status.observedGeneration}")
		s.waitFor(t, "True", "", "rb", "nginx-deployment", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		// The example's OverridePolicy labels the member2 copy and changes its registry, only there.
		s.waitFor(t, "staging", "member2", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.env}")
		if got := s.get("member2", "deploy", "nginx", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "mirror.example.com/nginx:1.27" {
			t.Errorf("member2's nginx image = %q, want the override's mirror.example.com/nginx:1.27", got)
		}
		if got := s.get("member1", "deploy", "nginx", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1.27" {
			t.Errorf("member1's nginx image = %q, want the template's nginx:1.27", got)
		}
		if got := s.get("member1", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.env}"); got != "" {
			t.Errorf("member1's nginx got the member2 override: env=%q", got)
		}
		if got := s.get("", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.propagationpolicy\\.karmada\\.io/permanent-id}"); got == "" {
			t.Errorf("template has no permanent-id claim label")
		}
	})

	t.Run("templates are born claimed, policies born with their permanent id", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "born")
		id, err := s.apply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: born, namespace: born}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, "-o", "jsonpath={.metadata.labels.propagationpolicy\\.karmada\\.io/permanent-id}")
		if err != nil || id == "" {
			t.Fatalf("the policy was not created with its permanent-id label: %q %v", id, err)
		}
		s.waitUntilClaimable(t, deploymentYAML("born", "first", 1, "nginx"), "born")
		// Server-side apply, twice: the claim written at admission belongs to
		// no field manager, so re-applying without it keeps it.
		for range 2 {
			got, err := s.apply(deploymentYAML("born", "first", 1, "nginx"), "--server-side",
				"-o", `jsonpath={.metadata.generation} {.metadata.labels.propagationpolicy\.karmada\.io/permanent-id} {.metadata.annotations.propagationpolicy\.karmada\.io/name}`)
			if err != nil || got != "1 "+id+" born" {
				t.Fatalf("template as stored: %q (%v), want generation 1 claimed by policy born (%s)", got, err, id)
			}
		}
		s.waitFor(t, "1", "member1", "deploy", "first", "-n", "born", "-o", "jsonpath={.metadata.annotations.resourcetemplate\\.karmada\\.io/generation}")
		s.waitFor(t, "True", "", "rb", "first-deployment", "-n", "born", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
	})

	t.Run("an override that cannot apply holds back its cluster only, with a SyncWorkFailed event", func(t *testing.T) {
		// The policy comes first: a template is claimed as it is created,
		// and were it created before the claim plugin saw this policy,
		// namespace born's catch-all policy would claim it for good.
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: overridden, namespace: born}
spec:
  priority: 10
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: overridden}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
		s.waitUntilClaimable(t, deploymentYAML("born", "overridden", 1, "nginx"), "overridden")
		s.mustApply(t, "", deploymentYAML("born", "overridden", 1, "nginx"))
		s.waitFor(t, "1", "member2", "deploy", "overridden", "-n", "born", "-o", "jsonpath={.spec.replicas}")
		s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bad-path, namespace: born}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: overridden}]
  overrideRules:
  - targetCluster: {clusterNames: [member1]}
    overriders:
      plaintext: [{path: /spec/nosuch/field, operator: replace, value: 3}]
`)
		s.kubectl("", "scale", "deploy", "overridden", "-n", "born", "--replicas=2")
		s.waitFor(t, "2", "member2", "deploy", "overridden", "-n", "born", "-o", "jsonpath={.spec.replicas}")
		eventually(t, time.Minute, "a SyncWorkFailed event naming the override", func() (bool, string) {
			out := s.get("", "events", "-n", "born", "--field-selector", "involvedObject.name=overridden-deployment,reason=SyncWorkFailed", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, "/spec/nosuch"), out
		})
		if got := s.get("member1", "deploy", "overridden", "-n", "born", "-o", "jsonpath={.spec.replicas}"); got != "1" {
			t.Errorf("member1 (bad override) replicas = %q, want the last good 1", got)
		}
		s.kubectl("", "delete", "overridepolicy", "bad-path", "-n", "born")
		s.waitFor(t, "2", "member1", "deploy", "overridden", "-n", "born", "-o", "jsonpath={.spec.replicas}")
	})

	t.Run("Divided static weights 2:1 give 2 and 1, then 4 and 2 after scaling", func(t *testing.T) {
		s.mustApply(t, "", deploymentYAML("default", "weighted", 3, "nginx:1.24")+"---\n"+weightedPolicy("weighted", "weighted", 2, 1))
		s.waitFor(t, "2", "member1", "deploy", "weighted", "-o", "jsonpath={.spec.replicas}")
		s.waitFor(t, "1", "member2", "deploy", "weighted", "-o", "jsonpath={.spec.replicas}")
		s.kubectl("", "scale", "deploy", "weighted", "--replicas=6")
		s.waitFor(t, "4", "member1", "deploy", "weighted", "-o", "jsonpath={.spec.replicas}")
		s.waitFor(t, "2", "member2", "deploy", "weighted", "-o", "jsonpath={.spec.replicas}")
		s.waitFor(t, "6", "", "deploy", "weighted", "-o", "jsonpath={.status.readyReplicas}")
		// The reschedule is recorded: tools wait for
		// schedulerObservedGeneration == generation.
		eventually(t, time.Minute, "schedulerObservedGeneration to reach the binding's generation", func() (bool, string) {
			got := s.get("", "rb", "weighted-deployment", "-o", `jsonpath={.metadata.generation} {.status.schedulerObservedGeneration} {.status.conditions[?(@.type=="Scheduled")].observedGeneration}`)
			f := strings.Fields(got)
			return len(f) == 3 && f[0] != "1" && f[0] == f[1] && f[1] == f[2], got
		})
	})

	t.Run("a template change reaches the members, and deleting it removes them", func(t *testing.T) {
		s.kubectl("", "set", "image", "deploy/weighted", "app=nginx:1.25")
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "nginx:1.25", m, "deploy", "weighted", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
		}
		s.kubectl("", "delete", "deploy", "weighted")
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "", m, "deploy", "weighted", "-o", "name")
		}
		s.waitFor(t, "", "", "rb", "weighted-deployment", "-o", "name")
		s.waitFor(t, "", "", "works", "-A", "-l", "resourcebinding.karmada.io/permanent-id", "-o", "jsonpath={.items[?(@.metadata.name=='weighted')].metadata.name}")
	})

	t.Run("a new namespace appears in every member, except skipped ones", func(t *testing.T) {
		s.kubectl("", "create", "namespace", "team-a")
		s.kubectl("", "create", "namespace", "kube-private")
		s.mustApply(t, "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: quiet, labels: {namespace.karmada.io/skip-auto-propagation: \"true\"}}\n")
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "namespace/team-a", m, "ns", "team-a", "-o", "name")
		}
		if s.get("member1", "ns", "kube-private", "-o", "name") != "" || s.get("member1", "ns", "quiet", "-o", "name") != "" {
			t.Errorf("a skipped namespace reached member1")
		}
	})

	t.Run("the divided and cluster-wide examples", func(t *testing.T) {
		s.kubectl("", "apply", "-f", exampleDir(t, "divided"))
		s.waitFor(t, "4", "member1", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
		s.waitFor(t, "2", "member2", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
		s.kubectl("", "scale", "deploy", "web", "--replicas", "9")
		s.waitFor(t, "6", "member1", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
		s.waitFor(t, "3", "member2", "deploy", "web", "-o", "jsonpath={.spec.replicas}")
		s.kubectl("", "apply", "-f", exampleDir(t, "cluster-wide"))
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "clusterrole.rbac.authorization.k8s.io/app-settings-reader", m, "clusterrole", "app-settings-reader", "-o", "name")
			s.waitFor(t, "info", m, "configmap", "app-settings", "-o", "jsonpath={.data.log-level}")
		}
	})

	t.Run("the guestbook sample propagates a CRD and its instances", func(t *testing.T) {
		base := filepath.Join(sharedDir(t), "reference", "karmada-samples", "guestbook")
		s.kubectl("", "apply", "-f", filepath.Join(base, "guestbooks-crd.yaml"))
		s.kubectl("", "wait", "--for=condition=Established", "--timeout=60s", "crd/guestbooks.webapp.my.domain")
		for _, f := range []string{"guestbooks-clusterpropagationpolicy.yaml", "guestbooks-propagationpolicy.yaml", "guestbooks-overridepolicy.yaml", "guestbook.yaml"} {
			s.kubectl("", "apply", "-f", filepath.Join(base, f))
		}
		s.waitFor(t, "customresourcedefinition.apiextensions.k8s.io/guestbooks.webapp.my.domain", "member1", "crd", "guestbooks.webapp.my.domain", "-o", "name")
		// The sample's OverridePolicy sets size 4 in member1 and replaces
		// the annotations; Flotilla's own bookkeeping must survive that.
		s.waitFor(t, "4", "member1", "guestbooks.webapp.my.domain", "guestbook-sample", "-o", "jsonpath={.spec.size}")
		s.waitFor(t, "True", "", "rb", "guestbook-sample-guestbook", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
		if s.get("member2", "crd", "guestbooks.webapp.my.domain", "-o", "name") != "" {
			t.Errorf("the CRD reached member2, which the policy does not select")
		}
	})

	t.Run("a Job's completion is aggregated back to its template", func(t *testing.T) {
		s.mustApply(t, "", `apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pi, namespace: default}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: pi}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		s.waitFor(t, "1", "member1", "job", "pi", "-o", "jsonpath={.status.succeeded}")
		s.waitFor(t, "1 True", "", "job", "pi", "-o", "jsonpath={.status.succeeded} {.status.conditions[?(@.type=='Complete')].status}")
	})

	t.Run("labels removed from the template are removed from the members", func(t *testing.T) {
		s.kubectl("", "label", "deploy", "nginx", "color=blue")
		s.waitFor(t, "blue", "member1", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.color}")
		s.kubectl("", "label", "deploy", "nginx", "color-")
		s.waitFor(t, "", "member1", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.color}")
	})

	t.Run("batch migration adopts existing Deployments with Overwrite and refuses with Abort", func(t *testing.T) {
		s.kubectl("member1", "create", "namespace", "foo")
		s.kubectl("member1", "create", "namespace", "bar")
		legacy := deploymentYAML("foo", "legacy-a", 2, "nginx:1.24") + "---\n" + deploymentYAML("foo", "legacy-b", 1, "nginx:1.24")
		s.mustApply(t, "member1", legacy)
		s.mustApply(t, "member1", deploymentYAML("bar", "legacy-c", 1, "nginx:1.24"))
		s.waitFor(t, "2", "member1", "deploy", "legacy-a", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
		uidA := s.get("member1", "deploy", "legacy-a", "-n", "foo", "-o", "jsonpath={.metadata.uid}")
		podsBefore := s.get("member1", "pods", "-n", "foo", "-o", "jsonpath={.items[*].metadata.uid}")

		// The seed's batch-migration policy, re-indented under spec.
		blocks := seedYAMLBlocks(t)
		s.kubectl("", "create", "namespace", "foo")
		s.kubectl("", "create", "namespace", "bar")
		s.mustApply(t, "", legacy)
		s.mustApply(t, "", reindentUnderSpec(blocks[4]))
		for _, d := range []string{"legacy-a", "legacy-b"} {
			s.waitFor(t, "true", "member1", "deploy", d, "-n", "foo", "-o", "jsonpath={.metadata.labels.karmada\\.io/managed}")
		}
		if got := s.get("member1", "deploy", "legacy-a", "-n", "foo", "-o", "jsonpath={.metadata.uid}"); got != uidA {
			t.Errorf("legacy-a was recreated: uid %s, was %s", got, uidA)
		}
		s.waitFor(t, "2 1", "", "deploy", "-n", "foo", "-o", "jsonpath={.items[*].status.readyReplicas}")
		if got := s.get("member1", "pods", "-n", "foo", "-o", "jsonpath={.items[*].metadata.uid}"); got != podsBefore {
			t.Errorf("pods were replaced during adoption:\nbefore %s\nafter  %s", podsBefore, got)
		}

		s.mustApply(t, "", deploymentYAML("bar", "legacy-c", 1, "nginx:1.25")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bar-pp, namespace: bar}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		s.waitFor(t, "False", "", "works", "-n", "karmada-es-member1", "-o", "jsonpath={.items[?(@.spec.workload.manifests[0].metadata.name=='legacy-c')].status.conditions[?(@.type=='Applied')].status}")
		msg := s.get("", "works", "-n", "karmada-es-member1", "-o", "jsonpath={.items[?(@.spec.workload.manifests[0].metadata.name=='legacy-c')].status.conditions[?(@.type=='Applied')].message}")
		if !strings.Contains(msg, "already exists") || !strings.Contains(msg, "conflictResolution") {
			t.Errorf("conflict message does not explain itself: %q", msg)
		}
		if got := s.get("member1", "deploy", "legacy-c", "-n", "bar", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1.24" {
			t.Errorf("the Abort policy changed the member object: image %q", got)
		}
	})

	t.Run("a claim sticks until its policy is deleted, and deleting policies keeps what was propagated", func(t *testing.T) {
		// Only "second" selects the probe: were "first" to select it too,
		// the probe could be claimed by "first" whenever the detector saw
		// the probe before the policy applied with it, and that claim
		// would stick just like the one under test.
		pp := func(name string, priority int, names ...string) string {
			selectors := ""
			for _, n := range names {
				selectors += "  - {apiVersion: apps/v1, kind: Deployment, name: " + n + "}\n"
			}
			return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: default}
spec:
  priority: %d
  resourceSelectors:
%s  placement: {clusterAffinity: {clusterNames: [member1]}}
`, name, priority, selectors)
		}
		claim := func() string {
			return s.get("", "deploy", "sticky", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		}
		s.mustApply(t, "", deploymentYAML("default", "sticky", 1, "nginx")+"---\n"+pp("first", 0, "sticky"))
		s.waitFor(t, "first", "", "deploy", "sticky", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		s.waitFor(t, "1", "member1", "deploy", "sticky", "-o", "jsonpath={.status.readyReplicas}")
		s.mustApply(t, "", pp("second", 10, "sticky", "sticky-probe")+"---\n"+deploymentYAML("default", "sticky-probe", 1, "nginx"))
		// Once the probe is claimed by "second", the detector has seen that
		// policy and re-evaluated "sticky" too.
		s.waitFor(t, "second", "", "deploy", "sticky-probe", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		if got := claim(); got != "first" {
			t.Errorf("a later policy took the template over: claimed by %q", got)
		}
		s.kubectl("", "delete", "pp", "first")
		s.waitFor(t, "second", "", "deploy", "sticky", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		s.kubectl("", "delete", "pp", "second")
		s.waitFor(t, "", "", "deploy", "sticky", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		// The binding stays, without the released claim (as in Karmada).
		s.waitFor(t, "sticky-deployment", "", "rb", "sticky-deployment", "-o",
			"jsonpath={.metadata.name} {.metadata.labels.propagationpolicy\\.karmada\\.io/permanent-id}{.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		if got := s.get("member1", "deploy", "sticky", "-o", "name"); got != "deployment.apps/sticky" {
			t.Errorf("deleting the policies removed the member copy: %q", got)
		}
	})

	t.Run("when nothing fits, Scheduled=False says why for each cluster", func(t *testing.T) {
		s.mustApply(t, "", deploymentYAML("default", "nowhere", 1, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nowhere, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nowhere}]
  placement: {clusterAffinity: {clusterNames: [member9]}}
`)
		s.waitFor(t, "False/NoClusterFit", "", "rb", "nowhere-deployment", "-o", "jsonpath={.status.conditions[?(@.type=='Scheduled')].status}/{.status.conditions[?(@.type=='Scheduled')].reason}")
		msg := s.get("", "rb", "nowhere-deployment", "-o", "jsonpath={.status.conditions[?(@.type=='Scheduled')].message}")
		for _, want := range []string{"0/2 clusters are available", "member1", "member2"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Scheduled message %q lacks %q", msg, want)
			}
		}
		s.waitFor(t, "ScheduleBindingFailed", "", "events", "--field-selector", "involvedObject.name=nowhere-deployment", "-o", "jsonpath={.items[0].reason}")
	})

	t.Run("a manual edit in a member is reverted", func(t *testing.T) {
		s.kubectl("member1", "scale", "deploy", "nginx", "--replicas=5")
		s.kubectl("member1", "set", "image", "deploy/nginx", "nginx=busybox")
		s.waitFor(t, "1 nginx:1.27", "member1", "deploy", "nginx", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}")
	})

	t.Run("unregistering a cluster removes its Works and what Flotilla created there", func(t *testing.T) {
		s.markBroken()
		s.kubectl("", "delete", "cluster", "member2", "--wait=false")
		s.waitFor(t, "", "member2", "deploy", "nginx", "-o", "name")
		s.waitFor(t, "", "", "ns", "karmada-es-member2", "-o", "name")
		s.waitFor(t, "", "", "cluster", "member2", "-o", "name")
		s.waitFor(t, "2", "member1", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}")
	})
}

// controllerManagerPID finds the running flotilla controller-manager of the stack.
func (s *stack) controllerManagerPID() int {
	return s.pidOf(func(args []string) bool { return len(args) > 2 && args[1] == "controller-manager" })
}

// apiServerPID finds the kube-apiserver process of one cluster of the stack
// ("control-plane" or a member's name); 0 if none runs.
func (s *stack) apiServerPID(cluster string) int {
	return s.pidOf(func(args []string) bool {
		return len(args) > 2 && args[1] == "component" && args[2] == "kube-apiserver" && slices.Contains(args, "--etcd-name="+cluster)
	})
}

// pidOf returns the pid of the first of the stack's processes (those whose
// command line names its data dir) whose arguments match, or 0.
func (s *stack) pidOf(match func(args []string) bool) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), s.dataDir) {
			continue
		}
		if match(strings.Split(string(cmdline), "\x00")) {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	return 0
}

// killControllerManager SIGKILLs the stack's controller manager and,
// until 15 s after `flotilla up` has restarted it, calls check every
// 200 ms: a non-empty answer fails the test with it (what must hold
// throughout the restart).
func (s *stack) killControllerManager(t *testing.T, check func() string) {
	t.Helper()
	pid := s.controllerManagerPID()
	if pid == 0 {
		t.Fatal("no controller-manager process found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarted := time.Time{}
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if msg := check(); msg != "" {
			t.Fatalf("during the controller-manager restart: %s", msg)
		}
		if restarted.IsZero() {
			if p := s.controllerManagerPID(); p != 0 && p != pid {
				restarted = time.Now()
			}
		} else if time.Since(restarted) > 15*time.Second {
			return // the new controller manager has had time to sync and act
		}
	}
	if restarted.IsZero() {
		t.Fatal("flotilla up did not restart the controller manager")
	}
}

func TestKillDuringPropagation(t *testing.T) {
	extended(t)
	s := startStack(t, 2)
	const n = 200
	var b strings.Builder
	for i := range n {
		b.WriteString(deploymentYAML("load", fmt.Sprintf("app-%03d", i), 1, "nginx"))
		b.WriteString("---\n")
	}
	s.kubectl("", "create", "namespace", "load")
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: load}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`)
	s.mustApply(t, "", b.String())
	// Kill the controller manager once propagation is under way but not done.
	eventually(t, 2*time.Minute, "some Works to exist", func() (bool, string) {
		got := s.get("", "works", "-n", "karmada-es-member1", "-o", "name")
		c := strings.Count(got, "\n") + 1
		return got != "" && c >= 10, fmt.Sprint(c)
	})
	pid := s.controllerManagerPID()
	if pid == 0 {
		t.Fatal("no controller-manager process found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// flotilla up restarts it; propagation must complete exactly once.
	eventually(t, 5*time.Minute, "every Deployment in both members", func() (bool, string) {
		a := len(strings.Fields(s.get("member1", "deploy", "-n", "load", "-o", "jsonpath={.items[*].metadata.name}")))
		c := len(strings.Fields(s.get("member2", "deploy", "-n", "load", "-o", "jsonpath={.items[*].metadata.name}")))
		return a == n && c == n, fmt.Sprintf("member1 %d, member2 %d", a, c)
	})
	eventually(t, time.Minute, "flotilla up to restart the controller manager", func() (bool, string) {
		newPID := s.controllerManagerPID()
		return newPID != 0 && newPID != pid, fmt.Sprintf("pid %d, killed %d", newPID, pid)
	})
	for _, m := range []string{"member1", "member2"} {
		works := len(strings.Fields(s.get("", "works", "-n", "karmada-es-"+m, "-l", "resourcebinding.karmada.io/permanent-id", "-o", "jsonpath={.items[*].metadata.name}")))
		if works != n {
			t.Errorf("%s has %d Works, want %d (one per template)", m, works, n)
		}
	}
	if rbs := len(strings.Fields(s.get("", "rb", "-n", "load", "-o", "jsonpath={.items[*].metadata.name}"))); rbs != n {
		t.Errorf("%d ResourceBindings, want %d", rbs, n)
	}
	// Status reports wait while propagation is busy (propagation first),
	// then catch up: every binding ends FullyApplied.
	eventually(t, 2*time.Minute, "every binding FullyApplied", func() (bool, string) {
		out := s.get("", "rb", "-n", "load", "-o", `jsonpath={range .items[*]}{.status.conditions[?(@.type=="FullyApplied")].status}{" "}{end}`)
		applied := strings.Count(out, "True")
		return applied == n, fmt.Sprintf("%d of %d", applied, n)
	})
}

// waitUntilClaimable waits until a server-side dry run of template comes
// back claimed by the PropagationPolicy named policy. The claim plugin reads
// policies from its own informer in the API server, a moment behind their
// create, and a dry run goes through admission too: so a template created
// right after its policy may be claimed by an older policy, for good.
func (s *stack) waitUntilClaimable(t *testing.T, template, policy string) {
	t.Helper()
	eventually(t, 30*time.Second, "a dry run of the template claimed by policy "+policy, func() (bool, string) {
		got, err := s.apply(template, "--server-side", "--dry-run=server",
			"-o", `jsonpath={.metadata.annotations.propagationpolicy\.karmada\.io/name}`)
		return err == nil && got == policy, got
	})
}
