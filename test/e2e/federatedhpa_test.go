package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFederatedHPABoundsAndFailures checks what the FederatedHPA controller
// does before any metric is served: it brings a target outside
// [minReplicas, maxReplicas] within them (the scheduler divides the new
// count), says AbleToScale False for a target without a scale subresource,
// and ScalingActive False with a FailedGetResourceMetric event when the
// metrics cannot be had; nothing panics and the status says why.
func TestFederatedHPABoundsAndFailures(t *testing.T) {
	s := sharedStackOf(t, 2)
	ns := "fhpa"
	s.kubectl("", "create", "namespace", ns)
	s.mustApply(t, "", deploymentYAML(ns, "web", 1, "nginx")+"---\n"+policyTo(ns, "web", "Deployment", "web", "member1", "member2")+"---\n"+federatedHPA(ns, "web", "web", 4, 10))

	// Below minReplicas: scaled to 4 at the first sync, divided by the scheduler.
	s.waitFor(t, "4", "", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
	eventually(t, 2*time.Minute, "the 4 replicas divided between member1 and member2", func() (bool, string) {
		a, b := s.get("member1", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}"), s.get("member2", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
		return (a == "2" && b == "2") || (a == "4" && b == "") || (a == "" && b == "4") || (a == "3" && b == "1") || (a == "1" && b == "3"), a + "+" + b
	})
	s.waitFor(t, "SuccessfulRescale", "", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,involvedObject.name=web,reason=SuccessfulRescale", "-o", "jsonpath={.items[0].reason}")
	if msg := s.get("", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,reason=SuccessfulRescale", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "New size: 4; reason: Current number of replicas below Spec.MinReplicas") {
		t.Errorf("rescale event message %q", msg)
	}
	s.waitFor(t, "4/4", "", "fhpa", "web", "-n", ns, "-o", "jsonpath={.status.currentReplicas}/{.status.desiredReplicas}")
	// The pods have no CPU requests, so no utilization: ScalingActive says so.
	s.waitFor(t, "False/FailedGetResourceMetric", "", "fhpa", "web", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="ScalingActive")].status}/{.status.conditions[?(@.type=="ScalingActive")].reason}`)
	s.waitFor(t, "FailedGetResourceMetric", "", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,reason=FailedGetResourceMetric", "-o", "jsonpath={.items[0].reason}")

	// A target without a scale subresource.
	s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: fhpa}
---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: conf, namespace: fhpa}
spec:
  scaleTargetRef: {apiVersion: v1, kind: ConfigMap, name: conf}
  maxReplicas: 3
`)
	s.waitFor(t, "False/FailedGetScale", "", "fhpa", "conf", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}/{.status.conditions[?(@.type=="AbleToScale")].reason}`)
	if msg := s.get("", "fhpa", "conf", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="AbleToScale")].message}`); !strings.Contains(msg, "no scale subresource") {
		t.Errorf("AbleToScale message %q does not say why", msg)
	}

	// Karmada's reasons for a target that does not exist and one no policy propagates.
	s.mustApply(t, "", federatedHPA(ns, "ghost", "nosuch", 1, 3)+"---\n"+deploymentYAML(ns, "loner", 1, "nginx")+"---\n"+federatedHPA(ns, "loner", "loner", 1, 3))
	s.waitFor(t, "False/FailedGetScaleTargetRef", "", "fhpa", "ghost", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}/{.status.conditions[?(@.type=="AbleToScale")].reason}`)
	s.waitFor(t, "False/FailedGetBinding", "", "fhpa", "loner", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="AbleToScale")].status}/{.status.conditions[?(@.type=="AbleToScale")].reason}`)
	if msg := s.get("", "fhpa", "loner", "-n", ns, "-o", `jsonpath={.status.conditions[?(@.type=="AbleToScale")].message}`); !strings.Contains(msg, "no PropagationPolicy or ClusterPropagationPolicy propagates it") {
		t.Errorf("FailedGetBinding message %q does not say why", msg)
	}
	// Two FederatedHPAs on one target: neither scales it, both say why.
	s.mustApply(t, "", federatedHPA(ns, "web-second", "web", 2, 6))
	for _, f := range []string{"web", "web-second"} {
		s.waitFor(t, "False/AmbiguousSelector", "", "fhpa", f, "-n", ns, "-o",
			`jsonpath={.status.conditions[?(@.type=="ScalingActive")].status}/{.status.conditions[?(@.type=="ScalingActive")].reason}`)
	}
	s.kubectl("", "delete", "fhpa", "web-second", "-n", ns)
	s.waitFor(t, "FailedGetBindings", "", "events", "-n", ns, "--field-selector", "involvedObject.name=loner,involvedObject.kind=FederatedHPA,reason=FailedGetBindings", "-o", "jsonpath={.items[0].reason}")
	if src := s.get("", "events", "-n", ns, "--field-selector", "involvedObject.name=loner,involvedObject.kind=FederatedHPA", "-o", "jsonpath={.items[0].source.component}"); src != "federatedHPA-controller" {
		t.Errorf("event source %q, want Karmada's federatedHPA-controller", src)
	}
}

// TestFederatedHPAScalesOnMetricsFromMembers runs the whole autoscaling
// path: kwok usage in two members, their metrics-server, the control plane's
// metrics adapter, the FederatedHPA controller and the scheduler. CPU
// utilization scales a divided Deployment up to the computed count and,
// after the (shortened) stabilization window, back down; a per-pod custom
// metric and an external metric scale others; `kubectl top pods` on the
// control plane lists the pods of both members with their cluster; and with
// member2's API server stopped the adapter still answers from member1.
func TestFederatedHPAScalesOnMetricsFromMembers(t *testing.T) {
	const window = 20 * time.Second
	s := startStack(t, 2,
		"--controller-manager-arg=--horizontal-pod-autoscaler-sync-period=3s",
		"--controller-manager-arg=--horizontal-pod-autoscaler-downscale-stabilization="+window.String(),
		"--controller-manager-arg=--horizontal-pod-autoscaler-cpu-initialization-period=10s",
		"--controller-manager-arg=--horizontal-pod-autoscaler-initial-readiness-delay=5s")
	ns := "shop"
	s.kubectl("", "create", "namespace", ns)
	workload := func(name string, replicas int, annotations string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: shop}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}, annotations: {%[3]s}}
    spec:
      containers:
      - name: app
        image: nginx
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: %[1]s}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`, name, replicas, annotations)
	}
	replicas := func(name string) func() (bool, string) {
		return func() (bool, string) {
			return false, s.get("", "deploy", name, "-n", ns, "-o", "jsonpath={.spec.replicas}")
		}
	}
	waitReplicas := func(name, want string) {
		t.Helper()
		eventually(t, 3*time.Minute, "Deployment "+name+" to have "+want+" replicas", func() (bool, string) {
			_, got := replicas(name)()
			return got == want, got
		})
	}
	// The seed's CronFederatedHPA on a FederatedHPA, its 09:00 rule made
	// every minute: at the next minute nginx-fhpa's minimum becomes 50 and
	// the FederatedHPA controller scales nginx up to it (checked below).
	var seedCron string
	for _, b := range seedYAMLBlocks(t) {
		if strings.Contains(b, "kind: CronFederatedHPA") && strings.Contains(b, "kind: FederatedHPA") {
			seedCron = strings.Replace(b, `"0 9 * * *"`, `"*/1 * * * *"`, 1)
		}
	}
	if seedCron == "" {
		t.Fatal("the seed's CronFederatedHPA-on-FederatedHPA example was not found")
	}
	// In a namespace of its own, where no usage is simulated: only the
	// bounds move nginx.
	s.kubectl("", "create", "namespace", "cronshop")
	s.mustApply(t, "", strings.ReplaceAll(workload("nginx", 2, ""), "namespace: shop", "namespace: cronshop")+"---\n"+federatedHPA("cronshop", "nginx-fhpa", "nginx", 1, 60))
	if out, err := s.apply(seedCron, "-n", "cronshop"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	for _, m := range []string{"member1", "member2"} {
		s.applyIn(m, clusterUsage("100m", "50Mi"))
	}
	s.mustApply(t, "", workload("web", 4, ""))
	s.waitFor(t, "2 2", "", "rb", "web-deployment", "-n", ns, "-o", "jsonpath={.spec.clusters[*].replicas}")

	// kubectl top on the control plane: the pods of both members, each
	// annotated with its cluster.
	eventually(t, 2*time.Minute, "kubectl top pods on the control plane to list 4 pods", func() (bool, string) {
		got := s.topPods("", ns)
		return !strings.HasPrefix(got, "error") && len(strings.Split(got, "\n")) == 4, got
	})
	if got := s.get("", "podmetrics", "-n", ns, "-o", `jsonpath={range .items[*]}{.metadata.annotations.resource\.karmada\.io/query-from-cluster}{" "}{end}`); strings.Count(got, "member1") != 2 || strings.Count(got, "member2") != 2 {
		t.Errorf("podmetrics query-from-cluster annotations %q, want member1 and member2 twice each", got)
	}

	// CPU at 100% of requests against a 50% target: 4 replicas become 8
	// (the computed count, also maxReplicas), divided by the scheduler.
	s.mustApply(t, "", `apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
`)
	waitReplicas("web", "8")
	s.waitFor(t, "4 4", "", "rb", "web-deployment", "-n", ns, "-o", "jsonpath={.spec.clusters[*].replicas}")
	if msg := s.get("", "events", "-n", ns, "--field-selector", "involvedObject.kind=FederatedHPA,involvedObject.name=web,reason=SuccessfulRescale", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "New size: 8; reason: cpu resource utilization (percentage of request) above target") {
		t.Errorf("rescale event %q", msg)
	}
	s.waitFor(t, "100", "", "fhpa", "web", "-n", ns, "-o", "jsonpath={.status.currentMetrics[0].resource.current.averageUtilization}")

	// Usage lowered to 20%: nothing scales down before the stabilization
	// window has passed; then the replicas come down to minReplicas.
	lowered := time.Now()
	for _, m := range []string{"member1", "member2"} {
		s.applyIn(m, clusterUsage("20m", "50Mi"))
	}
	eventually(t, 3*time.Minute, "web to scale down", func() (bool, string) {
		_, got := replicas("web")()
		return got != "8", got
	})
	if waited := time.Since(lowered); waited < window-3*time.Second {
		t.Errorf("web scaled down %s after the usage dropped, inside the %s stabilization window", waited.Round(time.Second), window)
	}
	waitReplicas("web", "1")

	// A per-pod custom metric: 20 requests/s per pod against a target of
	// 10 doubles the replicas until maxReplicas. The target is a bare
	// number, as Karmada users write it: the API server sends it to the
	// informers as a CBOR integer, which must not stop them.
	s.mustApply(t, "", workload("api", 2, "custom-metrics.flotilla.io/http_requests_per_second: '20'")+`---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: api, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 1
  maxReplicas: 6
  metrics:
  - type: Pods
    pods:
      metric: {name: http_requests_per_second}
      target: {type: AverageValue, averageValue: 10}
`)
	waitReplicas("api", "6")
	s.waitFor(t, "20", "", "fhpa", "api", "-n", ns, "-o", "jsonpath={.status.currentMetrics[0].pods.current.averageValue}")

	// An external metric: a queue of 30 in member1 (member2 has none)
	// against 10 per replica gives 3.
	s.kubectl("member1", "create", "configmap", "external-metrics", "-n", ns, "--from-literal=queue_length=30")
	s.mustApply(t, "", workload("worker", 1, "")+`---
apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: worker, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 6
  metrics:
  - type: External
    external:
      metric: {name: queue_length}
      target: {type: AverageValue, averageValue: "10"}
`)
	waitReplicas("worker", "3")
	if got := s.rawMetricIn("", "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_length"); got != "queue_length=30" {
		t.Errorf("external metric on the control plane = %q, want queue_length=30", got)
	}

	// The seed's cron rule has run: nginx-fhpa's minimum is 50, and the
	// FederatedHPA controller has scaled nginx to it.
	s.waitFor(t, "50/60", "", "fhpa", "nginx-fhpa", "-n", "cronshop", "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
	s.waitFor(t, "50", "", "deploy", "nginx", "-n", "cronshop", "-o", "jsonpath={.spec.replicas}")

	// member2's API server stopped: the adapter leaves it out after its
	// timeout and answers with member1's pods.
	member1Pods := strings.Fields(s.get("member1", "pods", "-n", ns, "-l", "app=api", "-o", "jsonpath={.items[*].metadata.name}"))
	pid := s.apiServerPID("member2")
	if pid == 0 {
		t.Fatal("no member2 API server process")
	}
	adapterLog := filepath.Join(s.dataDir, "logs", "metrics-adapter.log")
	before, _ := os.ReadFile(adapterLog)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	got := s.rawMetricIn("", "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests_per_second?labelSelector=app%3Dapi")
	var want []string
	for _, p := range member1Pods {
		want = append(want, p+"=20")
	}
	sort.Strings(want)
	if got != strings.Join(want, " ") {
		t.Errorf("custom metric with member2 stopped = %q, want member1's pods only: %q", got, strings.Join(want, " "))
	}
	if top := s.topPods("", ns); strings.HasPrefix(top, "error") {
		t.Errorf("kubectl top pods with member2 stopped: %s", top)
	}
	// Said once while member2 is away, not on every query (the answers stand without it).
	log, _ := os.ReadFile(adapterLog)
	if len(log) >= len(before) {
		log = log[len(before):]
	}
	if n := strings.Count(string(log), `"Left a member cluster out of the metrics answers; the other members' answer stands (logged once until it answers again)" cluster="member2"`); n != 1 {
		t.Errorf("the adapter logged %d times that it left member2 out, want once", n)
	}
	_ = syscall.Kill(pid, syscall.SIGCONT)
}
