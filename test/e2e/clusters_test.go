package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func strconvQuote(s string) string { return "\"" + s + "\"" }

// flotillaCmd runs flotilla with args and returns its combined output and
// whether it succeeded.
func (s *stack) flotillaCmd(args ...string) (string, bool) {
	out, err := exec.Command(flotillaBin, args...).CombinedOutput()
	return string(out), err == nil
}

// TestClusterCommands manages clusters from the command line as a Karmada
// user does with karmadactl: unjoin with --orphan leaves the member's
// objects running; join brings a cluster in from its kubeconfig and a
// policy places an application on it; bad joins are refused; cordon keeps
// new placements off a cluster and uncordon lets them back; taint adds and
// removes a taint with kubectl's syntax; unjoin without --orphan removes
// the member's objects.
func TestClusterCommands(t *testing.T) {
	s := startStack(t, 3)
	cp := []string{"--kubeconfig", filepath.Join(s.dataDir, "karmada.config")}
	members := filepath.Join(s.dataDir, "members.config")
	run := func(args ...string) string {
		t.Helper()
		out, ok := s.flotillaCmd(append(args, cp...)...)
		if !ok {
			t.Fatalf("flotilla %s: %s", strings.Join(args, " "), out)
		}
		return out
	}
	refused := func(want string, args ...string) {
		t.Helper()
		out, ok := s.flotillaCmd(append(args, cp...)...)
		if ok || !strings.Contains(out, want) {
			t.Errorf("flotilla %s: succeeded=%v, output %q, want a refusal saying %q", strings.Join(args, " "), ok, out, want)
		}
	}

	// An application on member3, then member3 unjoined with --orphan.
	s.kubectl("", "create", "namespace", "apps")
	s.mustApply(t, "", deploymentYAML("apps", "kept", 2, "nginx")+"---\n"+policyTo("apps", "kept", "Deployment", "kept", "member3"))
	s.waitFor(t, "2", "member3", "deploy", "kept", "-n", "apps", "-o", "jsonpath={.spec.replicas}")
	if out := run("unjoin", "member3", "--orphan"); !strings.Contains(out, "cluster(member3) is unjoined successfully") {
		t.Errorf("unjoin output %q", out)
	}
	if got := s.get("", "cluster", "member3", "-o", "name"); got != "" {
		t.Errorf("the Cluster is still there after unjoin: %q", got)
	}
	if got := s.get("member3", "deploy", "kept", "-n", "apps", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("--orphan: member3's Deployment is %q, want it left running with 2 replicas", got)
	}
	// Left without Karmada's marks, as Karmada leaves what it preserves:
	// the member's own now, not taken back silently by a later join.
	if got := s.get("member3", "deploy", "kept", "-n", "apps", "-o", `jsonpath={.metadata.labels.karmada\.io/managed}{.metadata.annotations.work\.karmada\.io/name}{.metadata.labels.resourcebinding\.karmada\.io/permanent-id}`); got != "" {
		t.Errorf("--orphan: member3's Deployment keeps Karmada's marks: %q", got)
	}
	refused("no such cluster", "unjoin", "member3")
	// Its ClusterProfile goes with it.
	s.waitFor(t, "", "", "clusterprofile", "member3", "-n", "karmada-cluster", "-o", "name")
	// Placed on every cluster while member3 is away: joining it again
	// reschedules the binding onto it.
	s.mustApply(t, "", `apiVersion: v1
kind: ConfigMap
metadata: {name: everywhere, namespace: apps}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everywhere, namespace: apps}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: everywhere}]
  placement: {}
`)
	s.waitFor(t, "v", "member1", "configmap", "everywhere", "-n", "apps", "-o", "jsonpath={.data.k}")

	// Joined again from its kubeconfig; bad joins are refused first.
	refused("--cluster-kubeconfig is required", "join", "member3")
	unreachable := filepath.Join(t.TempDir(), "unreachable.config")
	if err := os.WriteFile(unreachable, []byte(`apiVersion: v1
kind: Config
clusters: [{name: x, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: x, user: {token: t}}]
contexts: [{name: x, context: {cluster: x, user: x}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	refused("cannot reach the cluster", "join", "ghost", "--cluster-kubeconfig", unreachable)
	if got := s.get("", "cluster", "ghost", "-o", "name"); got != "" {
		t.Errorf("a refused join left a Cluster: %q", got)
	}
	refused("the name is taken by the cluster at", "join", "member1", "--cluster-kubeconfig", members, "--cluster-context", "member3")
	if out := run("join", "member3", "--cluster-kubeconfig", members, "--cluster-context", "member3"); !strings.Contains(out, "cluster(member3) is joined successfully") {
		t.Errorf("join output %q", out)
	}
	s.waitFor(t, "True", "", "cluster", "member3", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	s.waitFor(t, "True", "", "clusterprofile", "member3", "-n", "karmada-cluster", "-o", `jsonpath={.status.conditions[?(@.type=="ControlPlaneHealthy")].status}`)
	// What join made for the Cluster is owned by it, as karmadactl's join
	// and karmada-agent own theirs: the credentials Secret and the Lease.
	uid := s.get("", "cluster", "member3", "-o", "jsonpath={.metadata.uid}")
	if got := s.get("", "secret", "member3", "-n", "karmada-cluster", "-o", `jsonpath={.metadata.ownerReferences[?(@.kind=="Cluster")].uid}/{.metadata.labels.karmada\.io/system}`); got != uid+"/true" {
		t.Errorf("the credentials Secret's Cluster owner/system label: %q, want %s/true", got, uid)
	}
	s.waitFor(t, uid, "", "lease", "member3", "-n", "karmada-cluster", "-o", `jsonpath={.metadata.ownerReferences[?(@.kind=="Cluster")].uid}`)
	if got := s.get("", "cluster", "member3", "-o", "jsonpath={.spec.syncMode}/{.spec.region}"); !strings.HasPrefix(got, "Push/") || got == "Push/" {
		t.Errorf("joined Cluster syncMode/region %q: want Push and the region from the member's node labels", got)
	}
	s.waitFor(t, "v", "member3", "configmap", "everywhere", "-n", "apps", "-o", "jsonpath={.data.k}")
	s.mustApply(t, "", deploymentYAML("apps", "placed", 1, "nginx")+"---\n"+policyTo("apps", "placed", "Deployment", "placed", "member3"))
	s.waitFor(t, "1", "member3", "deploy", "placed", "-n", "apps", "-o", "jsonpath={.spec.replicas}")

	// cordon: new placements keep off member2; uncordon lets them back.
	if out := run("cordon", "member2"); !strings.Contains(out, "cluster/member2 cordoned") {
		t.Errorf("cordon output %q", out)
	}
	s.waitFor(t, "cluster.karmada.io/unschedulable:NoSchedule", "", "cluster", "member2", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect}{end}`)
	s.mustApply(t, "", deploymentYAML("apps", "fenced", 1, "nginx")+"---\n"+policyTo("apps", "fenced", "Deployment", "fenced", "member1", "member2"))
	s.waitFor(t, "member1", "", "rb", "fenced-deployment", "-n", "apps", "-o", "jsonpath={.spec.clusters[*].name}")
	run("uncordon", "member2")
	s.waitFor(t, "", "", "cluster", "member2", "-o", "jsonpath={.spec.taints}")
	s.mustApply(t, "", deploymentYAML("apps", "open", 2, "nginx")+"---\n"+strings.Replace(policyTo("apps", "open", "Deployment", "open", "member1", "member2"), "replicaDivisionPreference: Aggregated", "replicaDivisionPreference: Weighted", 1))
	s.waitFor(t, "member1 member2", "", "rb", "open-deployment", "-n", "apps", "-o", "jsonpath={.spec.clusters[*].name}")

	// get across clusters, through the Cluster proxy, with a CLUSTER column.
	s.waitFor(t, "1", "member2", "deploy", "open", "-n", "apps", "-o", "jsonpath={.spec.replicas}")
	table := run("get", "deploy", "-n", "apps", "-C", "member1,member2")
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(l)
		rows = append(rows, f[0]+" "+f[1])
	}
	if want := "NAME CLUSTER,fenced member1,open member1,open member2"; strings.Join(rows, ",") != want {
		t.Errorf("flotilla get deploy -C member1,member2:\n%s\nwant rows %s", table, want)
	}
	if out := run("get", "deploy", "open", "-n", "apps", "--operation-scope", "all"); !strings.Contains(out, "Karmada") || strings.Count(out, "open") != 3 {
		t.Errorf("--operation-scope all:\n%s\nwant the control plane (Karmada) and both members", out)
	}
	if out := run("get", "deploy", "open", "-n", "apps", "-C", "member2", "-o", "yaml"); !strings.Contains(out, "resource.karmada.io/query-from-cluster: member2") {
		t.Errorf("-o yaml does not name the cluster:\n%s", out)
	}
	if out := run("get", "deploy", "-A", "-C", "member1"); !strings.Contains(out, "\napps ") || !strings.HasPrefix(out, "NAMESPACE") {
		t.Errorf("get -A does not fill the NAMESPACE column:\n%s", out)
	}
	if out := run("explain", "namespace", "apps"); !strings.Contains(out, "namespace sync") {
		t.Errorf("explain namespace:\n%s", out)
	}
	refused("invalid taint", "taint", "member1", "bad key!=v:NoSchedule")
	refused(`doesn't have a resource type "nosuchkind"`, "get", "nosuchkind", "-C", "member1")
	refused(`cluster "nosuch" is not joined to the control plane; joined clusters: member1, member2, member3`, "get", "deploy", "-C", "nosuch")
	s.applyIn("member1", `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: apps-usage}
spec:
  selector: {matchNamespaces: [apps]}
  usages:
  - usage: {cpu: {value: 150m}, memory: {value: 64Mi}}
`)
	eventually(t, 2*time.Minute, "flotilla top pods to show member1's pods", func() (bool, string) {
		out, _ := s.flotillaCmd(append([]string{"top", "pods", "-n", "apps", "-C", "member1"}, cp...)...)
		return strings.Contains(out, "CLUSTER") && strings.Contains(out, "member1") && strings.Contains(out, "150m"), out
	})

	// taint, with kubectl's syntax; a bad effect is refused.
	run("taint", "clusters", "member1", "dedicated=gpu:NoSchedule")
	s.waitFor(t, "dedicated=gpu:NoSchedule", "", "cluster", "member1", "-o", `jsonpath={range .spec.taints[*]}{.key}={.value}:{.effect}{end}`)
	// explain: a Divided Deployment, member1 rejected by that taint, an
	// override on member2, and the policy that lost on priority.
	s.mustApply(t, "", deploymentYAML("apps", "explained", 3, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: explained, namespace: apps}
spec:
  priority: 5
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: explained}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member2]}, weight: 2}
        - {targetCluster: {clusterNames: [member3]}, weight: 1}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: broad, namespace: apps}
spec:
  priority: 1
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: explained}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: explained-image, namespace: apps}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: explained}]
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: "1.25"}]
`)
	s.waitFor(t, "member2=2 member3=1", "", "rb", "explained-deployment", "-n", "apps", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
	eventually(t, time.Minute, "flotilla explain to tell the whole story", func() (bool, string) {
		out, _ := s.flotillaCmd(append([]string{"explain", "deploy", "explained", "-n", "apps"}, cp...)...)
		for _, want := range []string{
			"Deployment apps/explained",
			"claimed by PropagationPolicy apps/explained (priority 5)",
			"it beat PropagationPolicy apps/broad (priority 1) on priority (5 > 1)",
			"Divided, Weighted by static weights",
			"Placed on:  member2=2, member3=1",
			"Not chosen: member1: ",
			"dedicated",
			"member2: Work karmada-es-member2/",
			"override: OverridePolicy explained-image changed the image",
		} {
			if !strings.Contains(out, want) {
				return false, "missing " + strconvQuote(want) + " in:\n" + out
			}
		}
		return true, out
	})
	// Once its policies are deleted, the binding and the copies stay, and
	// explain says so rather than that nothing selects it.
	s.kubectl("", "delete", "pp", "broad", "-n", "apps") // first, or it would claim the Deployment next
	s.kubectl("", "delete", "pp", "explained", "-n", "apps")
	eventually(t, time.Minute, "flotilla explain to say the claim was released", func() (bool, string) {
		out, _ := s.flotillaCmd(append([]string{"explain", "deploy", "explained", "-n", "apps"}, cp...)...)
		return strings.Contains(out, "Policy:     none now: the policy that claimed it was deleted") &&
			strings.Contains(out, "Binding:    ResourceBinding apps/explained-deployment") &&
			strings.Contains(out, "Placed on:  member2=2, member3=1"), out
	})
	// Nothing in the control plane's own namespaces is propagated, whatever
	// a ClusterPropagationPolicy selects.
	s.kubectl("", "create", "configmap", "sys-cm", "-n", "kube-system")
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: sys}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: sys-cm}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
`)
	if out, _ := s.flotillaCmd(append([]string{"explain", "cm", "sys-cm", "-n", "kube-system"}, cp...)...); !strings.Contains(out, "nothing in namespace kube-system is propagated") {
		t.Errorf("explain of a ConfigMap in kube-system:\n%s", out)
	}
	s.kubectl("", "delete", "cpp", "sys")
	refused("already has taint", "taint", "member1", "dedicated=cpu:NoSchedule")
	refused(`effect "Sometimes" is not NoSchedule`, "taint", "member1", "x=y:Sometimes")
	run("taint", "member1", "dedicated:NoSchedule-")
	s.waitFor(t, "", "", "cluster", "member1", "-o", "jsonpath={.spec.taints}")

	// The Cluster proxy subresource: the member's API through the control
	// plane, as the caller (impersonated), under the control plane's RBAC
	// on clusters/proxy.
	proxy := "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/apps"
	if got := s.kubectl("", "get", "--raw", proxy); !strings.Contains(got, `"name":"apps"`) {
		t.Errorf("GET %s = %q, want member1's namespace apps", proxy, got)
	}
	if out, err := exec.Command("kubectl", "--kubeconfig", cp[1], "get", "--raw", "/apis/cluster.karmada.io/v1alpha1/clusters/nosuch/proxy/api").CombinedOutput(); err == nil || !strings.Contains(string(out), `clusters.cluster.karmada.io "nosuch" not found`) {
		t.Errorf("proxy to a cluster that does not exist: %v %s", err, out)
	}
	// Logs and exec (an upgraded connection) through the proxy: kubectl
	// pointed at member1's proxy URL, with the control plane's credentials,
	// reaches a pod kwok simulates there.
	server := s.kubectl("", "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
	s.kubectl("member1", "run", "shell", "-n", "apps", "--image=busybox", "--restart=Never")
	s.waitFor(t, "Running", "member1", "pod", "shell", "-n", "apps", "-o", "jsonpath={.status.phase}")
	viaProxy := func(args ...string) (string, error) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", cp[1], "--server", server + "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy", "-n", "apps"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := viaProxy("logs", "shell"); err != nil || !strings.Contains(out, "simulated container started by kwok") {
		t.Errorf("kubectl logs through the proxy: %v\n%s", err, out)
	}
	if out, err := viaProxy("exec", "shell", "--", "sh", "-c", "echo exec-$((20+22)) in ${PWD##*/}"); err != nil || !strings.Contains(out, "exec-42 in kwok-exec") {
		t.Errorf("kubectl exec through the proxy: %v\n%s", err, out)
	}
	s.kubectl("member1", "delete", "pod", "shell", "-n", "apps", "--wait=false")

	s.kubectl("", "create", "serviceaccount", "viewer", "-n", "default")
	token := strings.TrimSpace(s.kubectl("", "create", "token", "viewer", "-n", "default"))
	asViewer := func() string {
		out, _ := exec.Command("kubectl", "--kubeconfig", os.DevNull, "--server", server, "--insecure-skip-tls-verify", "--token", token, "get", "--raw", proxy).CombinedOutput()
		return string(out)
	}
	if got := asViewer(); !strings.Contains(got, `cannot get resource "clusters/proxy" in API group "cluster.karmada.io"`) {
		t.Errorf("a caller without clusters/proxy rights: %q, want the control plane's Forbidden", got)
	}
	s.mustApply(t, "", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cluster-proxy}
rules: [{apiGroups: [cluster.karmada.io], resources: [clusters/proxy], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: viewer-cluster-proxy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-proxy}
subjects: [{kind: ServiceAccount, name: viewer, namespace: default}]
`)
	eventually(t, time.Minute, "the viewer to reach member1 as itself", func() (bool, string) {
		got := asViewer()
		return strings.Contains(got, `User "system:serviceaccount:default:viewer" cannot get resource "namespaces"`), got
	})
	// Unified authentication: the member's impersonator may act as the
	// viewer while the control plane grants it the proxy, and no longer once
	// the grant goes.
	impersonable := func() string {
		return s.get("member1", "clusterrole", "karmada-impersonator", "-o", `jsonpath={.rules[?(@.resources[0]=="serviceaccounts")].resourceNames}`)
	}
	if got := impersonable(); !strings.Contains(got, "viewer") {
		t.Errorf("member1's karmada-impersonator may impersonate service accounts %q, want the viewer among them", got)
	}
	s.kubectl("", "delete", "clusterrolebinding", "viewer-cluster-proxy")
	eventually(t, 30*time.Second, "member1's karmada-impersonator to drop the viewer", func() (bool, string) {
		got := impersonable()
		return !strings.Contains(got, "viewer"), got
	})

	// unjoin without --orphan removes what Flotilla put in the member.
	run("unjoin", "member3", "--cluster-kubeconfig", members, "--cluster-context", "member3")
	s.waitFor(t, "", "member3", "deploy", "placed", "-n", "apps", "-o", "name")
	if got := s.get("member3", "serviceaccount", "karmada-member3", "-n", "karmada-cluster", "-o", "name"); got != "" {
		t.Errorf("the member's service account is left: %q", got)
	}

	// karmadactl unjoin deletes only the Cluster: what Flotilla's join made
	// for it goes with it, so a later karmadactl join finds no stale Secret.
	run("join", "member3", "--cluster-kubeconfig", members, "--cluster-context", "member3")
	s.waitFor(t, "member3", "", "lease", "member3", "-n", "karmada-cluster", "-o", "jsonpath={.metadata.name}")
	s.kubectl("", "delete", "cluster", "member3")
	s.waitFor(t, "", "", "secret", "member3", "-n", "karmada-cluster", "-o", "name")
	s.waitFor(t, "", "", "lease", "member3", "-n", "karmada-cluster", "-o", "name")
}
