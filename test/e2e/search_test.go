package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cacheList is what the search cache answers to a list.
type cacheList struct {
	Kind     string `json:"kind"`
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name        string            `json:"name"`
			Namespace   string            `json:"namespace"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"items"`
}

// clusterNames lists "<cluster>/<name>" of each item, sorted.
func (l cacheList) clusterNames() []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Metadata.Annotations["resource.karmada.io/cached-from-cluster"]+"/"+it.Metadata.Name)
	}
	sort.Strings(out)
	return out
}

// rawGet runs kubectl get --raw on the control plane and returns stdout,
// stderr (where kubectl prints the server's warnings) and whether it succeeded.
func (s *stack) rawGet(path string) (string, string, bool) {
	kc, ctx := s.kubeconfig("")
	cmd := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "get", "--raw", path)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err == nil
}

// TestSearchCache uses karmada-search's cache and proxy as a Karmada user
// does: a ResourceRegistry for Deployments and Pods on every member, then
// kubectl get --raw of search/cache paths lists one item per member copy,
// annotated with its cluster; label and field selectors narrow it, limit and
// continue page through it; a registry naming an unknown kind says so; an
// unregistered kind gets a 404 saying what to do. Through the proxy (see
// checkFleetProxy) kubectl sees the fleet as one cluster. A member whose API
// server is frozen drops out of the answer with a warning instead of failing
// it.
func TestSearchCache(t *testing.T) {
	s := sharedStackOf(t, 3)
	s.markBroken() // member3's API server is frozen below
	s.kubectl("", "create", "namespace", "searched")
	s.mustApply(t, "", deploymentYAML("searched", "web", 1, "nginx")+"---\n"+deploymentYAML("searched", "other", 1, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everywhere, namespace: searched}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: workloads}
spec:
  targetCluster: {clusterNames: [member1, member2, member3]}
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: v1, kind: Pod, namespace: searched}
`)
	// Every member is published as a ClusterProfile.
	for _, m := range []string{"member1", "member2", "member3"} {
		s.waitFor(t, "flotilla/flotilla/True/True", "", "clusterprofile", m, "-n", "karmada-cluster", "-o",
			`jsonpath={.metadata.labels.x-k8s\.io/cluster-manager}/{.spec.clusterManager.name}/{.status.conditions[?(@.type=="ControlPlaneHealthy")].status}/{.status.conditions[?(@.type=="Joined")].status}`)
		if server := s.get("", "clusterprofile", m, "-n", "karmada-cluster", "-o", `jsonpath={.status.accessProviders[0].cluster.server}`); !strings.HasSuffix(server, "/apis/cluster.karmada.io/v1alpha1/clusters/"+m+"/proxy") {
			t.Errorf("%s's profile names the server %q, want its Cluster proxy", m, server)
		}
	}
	s.waitFor(t, "True/Cached", "", "resourceregistry", "workloads", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}`)
	if out := s.kubectl("", "get", "resourceregistry", "workloads"); !strings.Contains(out, "READY") || !strings.Contains(out, "Cached") {
		t.Errorf("kubectl get resourceregistry prints READY and REASON: %s", out)
	}

	const base = "/apis/search.karmada.io/v1alpha1/search/cache"
	list := func(path string) cacheList {
		t.Helper()
		out, errOut, ok := s.rawGet(base + path)
		if !ok {
			t.Fatalf("get --raw %s: %s", path, errOut)
		}
		var l cacheList
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("get --raw %s: %v\n%s", path, err, out)
		}
		return l
	}
	want := "member1/other member1/web member2/other member2/web member3/other member3/web"
	eventually(t, 2*time.Minute, "every member's copies in the cache", func() (bool, string) {
		got := strings.Join(list("/apis/apps/v1/namespaces/searched/deployments").clusterNames(), " ")
		return got == want, got
	})
	l := list("/apis/apps/v1/deployments?labelSelector=app%3Dweb")
	if got := strings.Join(l.clusterNames(), " "); got != "member1/web member2/web member3/web" || l.Kind != "DeploymentList" || l.Metadata.ResourceVersion == "" {
		t.Errorf("labelSelector app=web: kind %q, resourceVersion %q, items %s", l.Kind, l.Metadata.ResourceVersion, got)
	}
	if got := strings.Join(list("/apis/apps/v1/namespaces/searched/deployments?fieldSelector=metadata.name%3Dother").clusterNames(), " "); got != "member1/other member2/other member3/other" {
		t.Errorf("fieldSelector metadata.name=other: %s", got)
	}
	// Pages of two follow one another to the same six.
	var paged []string
	next := "/apis/apps/v1/namespaces/searched/deployments?limit=2"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatalf("more than 4 pages of 2 for 6 items: %v", paged)
		}
		l := list(next)
		if len(l.Items) > 2 {
			t.Fatalf("limit=2 gave %d items", len(l.Items))
		}
		paged = append(paged, l.clusterNames()...)
		next = ""
		if l.Metadata.Continue != "" {
			next = "/apis/apps/v1/namespaces/searched/deployments?limit=2&continue=" + l.Metadata.Continue
		}
	}
	sort.Strings(paged)
	if got := strings.Join(paged, " "); got != want {
		t.Errorf("paged with limit=2: %s, want %s", got, want)
	}
	// Pods are cached for the one namespace the registry names.
	eventually(t, 2*time.Minute, "the members' pods of namespace searched", func() (bool, string) {
		l := list("/api/v1/pods")
		clusters := map[string]bool{}
		for _, it := range l.Items {
			if it.Metadata.Namespace != "searched" {
				return false, "a pod of namespace " + it.Metadata.Namespace
			}
			clusters[it.Metadata.Annotations["resource.karmada.io/cached-from-cluster"]] = true
		}
		return len(l.Items) == 6 && len(clusters) == 3, fmt.Sprint(l.clusterNames())
	})
	out, _, _ := s.rawGet(base + "/apis/apps/v1/namespaces/searched/deployments/web")
	if !strings.Contains(out, `"resource.karmada.io/cached-from-cluster":"member1"`) {
		t.Errorf("get of one Deployment: %s", out)
	}

	// Bad input.
	if _, errOut, ok := s.rawGet(base + "/api/v1/services"); ok || !strings.Contains(errOut, "NotFound") || !strings.Contains(errOut, "no ResourceRegistry") {
		t.Errorf("an unregistered kind: ok=%v, %s", ok, errOut)
	}
	s.mustApply(t, "", `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: typo}
spec:
  targetCluster: {clusterNames: [member1]}
  resourceSelectors: [{apiVersion: apps/v1, kind: Deploymnet}]
`)
	s.waitFor(t, "False/UnknownKind", "", "resourceregistry", "typo", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}`)
	if msg := s.get("", "resourceregistry", "typo", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`); !strings.Contains(msg, "Deploymnet apps/v1") {
		t.Errorf("the unknown kind's message: %q", msg)
	}
	kc, ctx := s.kubeconfig("")
	bad := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "-f", "-")
	bad.Stdin = strings.NewReader(`apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: invalid}
spec:
  targetCluster: {}
  resourceSelectors: [{apiVersion: "a/b/c", kind: ""}]
`)
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "spec.resourceSelectors[0].kind: Required value") || !strings.Contains(string(out), "spec.resourceSelectors[0].apiVersion: Invalid value") {
		t.Errorf("an invalid registry: err=%v, %s", err, out)
	}
	// A group without its version is refused, not taken for a version of
	// the core group.
	bad = exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "-f", "-")
	bad.Stdin = strings.NewReader(`apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: invalid}
spec:
  targetCluster: {}
  resourceSelectors: [{apiVersion: apps, kind: Deployment}]
`)
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "must be group/version") {
		t.Errorf("apiVersion apps: err=%v, %s", err, out)
	}
	// A cluster name that no Cluster has is named in the condition.
	s.mustApply(t, "", `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: elsewhere}
spec:
  targetCluster: {clusterNames: [member9]}
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
`)
	s.waitFor(t, "False/NoClusterSelected", "", "resourceregistry", "elsewhere", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}`)
	if msg := s.get("", "resourceregistry", "elsewhere", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].message}`); !strings.Contains(msg, "No cluster is named member9") {
		t.Errorf("a registry naming an unknown cluster: %q", msg)
	}

	s.checkFleetProxy(t)

	// member3 frozen: once it is not Ready, answers come from the others,
	// with a warning that names it.
	pid := s.apiServerPID("member3")
	if pid == 0 {
		t.Fatal("no kube-apiserver process for member3")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	s.waitFor(t, "False", "", "cluster", "member3", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	// Its ClusterProfile follows (sig-multicluster's Cluster Inventory API).
	s.waitFor(t, "False", "", "clusterprofile", "member3", "-n", "karmada-cluster", "-o", `jsonpath={.status.conditions[?(@.type=="ControlPlaneHealthy")].status}`)
	eventually(t, time.Minute, "member3 left out with a warning", func() (bool, string) {
		out, errOut, ok := s.rawGet(base + "/apis/apps/v1/namespaces/searched/deployments")
		var l cacheList
		_ = json.Unmarshal([]byte(out), &l)
		got := strings.Join(l.clusterNames(), " ")
		return ok && got == "member1/other member1/web member2/other member2/web" && strings.Contains(errOut, "member3"),
			fmt.Sprintf("ok=%v items %s, stderr %q", ok, got, errOut)
	})
}

// checkFleetProxy points kubectl at proxying/karmada/proxy: get and watch
// see every member's pods, logs, exec and delete reach the member holding
// the pod, a create of a cached kind is refused (no member to send it to),
// other kinds come from the control plane, and a user granted pods in one
// namespace (and the proxy) sees that namespace only.
func (s *stack) checkFleetProxy(t *testing.T) {
	t.Helper()
	cfg, err := s.restConfig("")
	if err != nil {
		t.Fatal(err)
	}
	proxyURL := cfg.Host + "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
	kc, ctx := s.kubeconfig("")
	viaProxy := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kc, "--context", ctx, "--server", proxyURL}, args...)...).CombinedOutput()
		return string(out), err
	}
	mustProxy := func(args ...string) string {
		t.Helper()
		out, err := viaProxy(args...)
		if err != nil {
			t.Fatalf("kubectl %s through the proxy: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	podsByCluster := func() map[string][]string {
		out := mustProxy("get", "pods", "-A", "-o", `jsonpath={range .items[*]}{.metadata.annotations.resource\.karmada\.io/cached-from-cluster} {.metadata.name}{"\n"}{end}`)
		got := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if c, name, ok := strings.Cut(line, " "); ok {
				got[c] = append(got[c], name)
			}
		}
		return got
	}
	pods := podsByCluster()
	if len(pods) != 3 || len(pods["member2"]) != 2 {
		t.Fatalf("kubectl get pods -A through the proxy: %v, want two pods in each of the 3 members", pods)
	}
	if out := mustProxy("get", "pods", "-n", "searched"); !strings.Contains(out, "READY") || !strings.Contains(out, "Running") || !strings.Contains(out, "CLUSTER") || !strings.Contains(out, "member2") {
		t.Errorf("kubectl get pods prints the API server's pod columns, then CLUSTER: %s", out)
	}
	// Pods are cached in namespace searched only: elsewhere the answer says so.
	if out := mustProxy("get", "pods", "-n", "default"); !strings.Contains(out, "Warning: pods in namespace default are not cached from member1, member2, member3") {
		t.Errorf("kubectl get pods in a namespace no registry caches: %s", out)
	}
	// A watch sees pods that appear after it starts.
	watch := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "--server", proxyURL, "get", "pods", "-n", "searched", "-w", "--request-timeout=0")
	var watched strings.Builder
	watch.Stdout, watch.Stderr = &watched, &watched
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	time.Sleep(2 * time.Second)
	s.kubectl("", "scale", "deploy", "web", "-n", "searched", "--replicas=2")
	eventually(t, time.Minute, "the watch to see the new web pods", func() (bool, string) {
		n := 0
		for c, names := range podsByCluster() {
			for _, name := range names {
				if strings.HasPrefix(name, "web-") && !strings.Contains(watched.String(), name) {
					return false, fmt.Sprintf("%s/%s not in the watch: %s", c, name, watched.String())
				}
				if strings.HasPrefix(name, "web-") {
					n++
				}
			}
		}
		return n == 6, fmt.Sprintf("%d web pods", n)
	})
	// logs, exec and delete go to the member holding the pod.
	pod := podsByCluster()["member2"][0]
	if out := mustProxy("logs", "-n", "searched", pod); !strings.Contains(out, "simulated container") {
		t.Errorf("kubectl logs %s through the proxy: %s", pod, out)
	}
	if out := mustProxy("exec", "-n", "searched", pod, "--", "echo", "from-the-member"); lastLine(out) != "from-the-member" {
		t.Errorf("kubectl exec %s through the proxy: %q", pod, out)
	}
	mustProxy("delete", "pod", "-n", "searched", pod, "--wait=false")
	eventually(t, time.Minute, "the pod deleted in member2", func() (bool, string) {
		got := s.get("member2", "pod", pod, "-n", "searched", "-o", "name")
		return got == "", got
	})
	if out, err := viaProxy("create", "deployment", "x", "-n", "searched", "--image=nginx"); err == nil || !strings.Contains(out, "names no object") {
		t.Errorf("a create of a cached kind through the proxy: err=%v, %s", err, out)
	}
	if _, errOut, ok := s.rawGet("/apis/cluster.karmada.io/v1alpha1/clusters/nosuch/proxy/api/v1/pods"); ok || !strings.Contains(errOut, `clusters.cluster.karmada.io "nosuch" not found`) {
		t.Errorf("the Cluster proxy of a cluster that is not joined: ok=%v, %s", ok, errOut)
	}
	if out := mustProxy("get", "propagationpolicy", "everywhere", "-n", "searched", "-o", "name"); strings.TrimSpace(out) != "propagationpolicy.policy.karmada.io/everywhere" {
		t.Errorf("an uncached kind through the proxy (from the control plane): %q", out)
	}

	// A user with pods in namespace searched, and the proxy.
	s.mustApply(t, "", `apiVersion: v1
kind: ServiceAccount
metadata: {name: viewer, namespace: searched}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: searched}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewer-pods, namespace: searched}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: ServiceAccount, name: viewer, namespace: searched}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-search-proxy}
rules: [{apiGroups: [search.karmada.io], resources: [proxying/proxy], verbs: ["*"]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-search-proxy-viewer}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-search-proxy}
subjects: [{kind: ServiceAccount, name: viewer, namespace: searched}]
`)
	defer s.kubectl("", "delete", "clusterrolebinding", "e2e-search-proxy-viewer")
	defer s.kubectl("", "delete", "clusterrole", "e2e-search-proxy")
	token := strings.TrimSpace(s.kubectl("", "create", "token", "viewer", "-n", "searched"))
	asViewer := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", "/dev/null", "--server", proxyURL, "--token", token, "--insecure-skip-tls-verify"}, args...)...).CombinedOutput()
		return string(out), err
	}
	eventually(t, time.Minute, "the viewer to list pods of namespace searched", func() (bool, string) {
		out, err := asViewer("get", "pods", "-n", "searched", "-o", "name")
		return err == nil && strings.Count(out, "pod/") >= 6, out
	})
	if out, err := asViewer("get", "pods", "-A"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("the viewer lists pods of every namespace: err=%v, %s", err, out)
	}
	if out, err := asViewer("get", "deployments", "-n", "searched"); err == nil || !strings.Contains(out, "Forbidden") {
		t.Errorf("the viewer lists Deployments: err=%v, %s", err, out)
	}
}

// lastLine is the last non-empty line of a command's combined output: what an
// exec printed, after any warning kubectl's stream client logged first (such
// as "Unknown stream id 1, discarding message" under load).
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
