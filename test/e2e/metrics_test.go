package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// applyIn applies yaml in a member cluster with kubectl.
func (s *stack) applyIn(member, yaml string) {
	s.t.Helper()
	kc, ctx := s.kubeconfig(member)
	cmd := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(yaml)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("kubectl apply in %s: %v\n%s", member, err, out)
	}
}

// topPods returns `kubectl top pods` in a member as "pod cpu memory" lines,
// sorted, or the error output when metrics are not there yet.
func (s *stack) topPods(member, ns string) string {
	kc, ctx := s.kubeconfig(member)
	out, err := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "top", "pods", "-n", ns, "--no-headers").CombinedOutput()
	if err != nil {
		return "error: " + strings.TrimSpace(string(out))
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func clusterUsage(cpu, memory string) string {
	return fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: shop-usage}
spec:
  selector: {matchNamespaces: [shop]}
  usages:
  - usage:
      cpu: {value: %s}
      memory: {value: %s}
`, cpu, memory)
}

// rawMetric reads a metrics API path in member1 and returns "name=value"
// pairs, sorted, for a custom metrics (describedObject) or external
// metrics (metricName) list.
func (s *stack) rawMetric(path string) string { return s.rawMetricIn("member1", path) }

// rawMetricIn is rawMetric in cluster ("" for the control plane).
func (s *stack) rawMetricIn(cluster, path string) string {
	kc, ctx := s.kubeconfig(cluster)
	out, err := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "get", "--raw", path).CombinedOutput()
	if err != nil {
		return "error: " + strings.TrimSpace(string(out))
	}
	var list struct {
		Items []struct {
			DescribedObject struct{ Name string } `json:"describedObject"`
			MetricName      string                `json:"metricName"`
			Value           string                `json:"value"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return "error: " + err.Error()
	}
	var pairs []string
	for _, it := range list.Items {
		name := it.DescribedObject.Name
		if name == "" {
			name = it.MetricName
		}
		pairs = append(pairs, name+"="+it.Value)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}

// TestMemberMetrics drives a member's metrics the way a user does: kwok's
// ClusterResourceUsage and ResourceUsage set pod usage, `kubectl top pods`
// shows it through metrics-server, and custom and external metrics are read
// from the member's custom.metrics.k8s.io and external.metrics.k8s.io.
func TestMemberMetrics(t *testing.T) {
	s := sharedStackOf(t, 2)
	s.kubectl("member1", "create", "namespace", "shop")
	s.applyIn("member1", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 100m, memory: 64Mi}}
`)
	s.waitFor(t, "Running Running", "member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].status.phase}")
	pods := strings.Fields(s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"))
	sort.Strings(pods)
	if len(pods) != 2 {
		t.Fatalf("want 2 pods, got %v", pods)
	}
	top := func(cpu0, mem0, cpu1, mem1 string) string {
		return fmt.Sprintf("%s %s %s\n%s %s %s", pods[0], cpu0, mem0, pods[1], cpu1, mem1)
	}
	waitTop := func(want string) {
		t.Helper()
		eventually(t, 2*time.Minute, "kubectl top pods -n shop to show\n"+want, func() (bool, string) {
			got := s.topPods("member1", "shop")
			return got == want, got
		})
	}

	s.applyIn("member1", clusterUsage("250m", "100Mi"))
	waitTop(top("250m", "100Mi", "250m", "100Mi"))

	// Changed live: kwok watches the object, metrics-server rescrapes.
	s.applyIn("member1", clusterUsage("600m", "200Mi"))
	waitTop(top("600m", "200Mi", "600m", "200Mi"))

	// A ResourceUsage named like a pod wins over the ClusterResourceUsage.
	s.applyIn("member1", fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ResourceUsage
metadata: {name: %s, namespace: shop}
spec:
  usages:
  - usage:
      cpu: {value: 50m}
      memory: {value: 30Mi}
`, pods[0]))
	waitTop(top("50m", "30Mi", "600m", "200Mi"))

	// Custom metrics per pod, from annotations.
	s.kubectl("member1", "annotate", "pod", "-n", "shop", pods[0], "custom-metrics.flotilla.io/http_requests_per_second=15")
	s.kubectl("member1", "annotate", "pod", "-n", "shop", pods[1], "custom-metrics.flotilla.io/http_requests_per_second=500m")
	custom := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/http_requests_per_second"
	want := fmt.Sprintf("%s=15 %s=500m", pods[0], pods[1])
	eventually(t, time.Minute, custom+" to be "+want, func() (bool, string) {
		got := s.rawMetric(custom)
		return got == want, got
	})
	s.kubectl("member1", "annotate", "--overwrite", "pod", "-n", "shop", pods[1], "custom-metrics.flotilla.io/http_requests_per_second=40")
	want = fmt.Sprintf("%s=15 %s=40", pods[0], pods[1])
	eventually(t, time.Minute, custom+" to be "+want, func() (bool, string) {
		got := s.rawMetric(custom)
		return got == want, got
	})
	// v1beta1 and the by-name form serve the same values.
	byName := "/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/" + pods[0] + "/http_requests_per_second"
	if got := s.rawMetric(byName); got != pods[0]+"=15" {
		t.Errorf("%s = %q, want %s=15", byName, got, pods[0])
	}

	// External metric, from the namespace's external-metrics ConfigMap.
	external := "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/queue_length"
	s.kubectl("member1", "create", "configmap", "external-metrics", "-n", "shop", "--from-literal=queue_length=30")
	eventually(t, time.Minute, external+" to be 30", func() (bool, string) {
		got := s.rawMetric(external)
		return got == "queue_length=30", got
	})
	s.kubectl("member1", "patch", "configmap", "external-metrics", "-n", "shop", "-p", `{"data":{"queue_length":"45"}}`)
	eventually(t, time.Minute, external+" to be 45", func() (bool, string) {
		got := s.rawMetric(external)
		return got == "queue_length=45", got
	})
}
