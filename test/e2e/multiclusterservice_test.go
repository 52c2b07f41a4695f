package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMultiClusterServiceCrossCluster exposes a Service across clusters
// with a MultiClusterService of type CrossCluster, in the seed's v1.7 form
// (range.clusterNames), then in the later form (providerClusters,
// consumerClusters), then with no lists, where a cluster that joins later
// gets the Service and the endpoints. The Service's own policy keeps its
// placement throughout; the MultiClusterService only adds clusters.
func TestMultiClusterServiceCrossCluster(t *testing.T) {
	extended(t)
	s := startStack(t, 4)
	// member4 joins later: take it out now. (Unjoined and joined again: its
	// credentials Secret is owned by its Cluster, as in Karmada, so a
	// Cluster deleted and created again from its YAML would have none.)
	cpConfig, membersConfig := filepath.Join(s.dataDir, "karmada.config"), filepath.Join(s.dataDir, "members.config")
	s.flotilla("unjoin", "member4", "--kubeconfig", cpConfig, "--cluster-kubeconfig", membersConfig, "--cluster-context", "member4")
	s.waitFor(t, "", "", "cluster", "member4", "-o", "name", "--ignore-not-found")

	s.kubectl("", "create", "namespace", "xmcs")
	s.mustApply(t, "", deploymentYAML("xmcs", "foo", 2, "nginx")+`---
apiVersion: v1
kind: Service
metadata: {name: foo, namespace: xmcs}
spec:
  selector: {app: foo}
  ports: [{port: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: foo, namespace: xmcs}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: foo}
  - {apiVersion: v1, kind: Service, name: foo}
  placement:
    clusterAffinity: {clusterNames: [member1]}
`)
	s.waitFor(t, "2", "member1", "deploy", "foo", "-n", "xmcs", "-o", "jsonpath={.status.readyReplicas}")
	podIPs := func() []string {
		ips := strings.Fields(s.get("member1", "pods", "-n", "xmcs", "-l", "app=foo", "-o", "jsonpath={.items[*].status.podIP}"))
		slices.Sort(ips)
		return ips
	}
	// dispatched lists the addresses member's slices from member1 hold.
	dispatched := func(member string) []string {
		ips := strings.Fields(s.get(member, "endpointslices", "-n", "xmcs", "-l",
			"kubernetes.io/service-name=foo,endpointslice.kubernetes.io/managed-by=endpointslice-dispatch-controller.karmada.io",
			"-o", `jsonpath={range .items[?(@.metadata.annotations.endpointslice\.karmada\.io/provision-cluster=="member1")]}{.endpoints[*].addresses[*]} {end}`))
		slices.Sort(ips)
		return ips
	}
	sameBackends := func(what, member string, want int) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, string) {
			pods, got := podIPs(), dispatched(member)
			return len(pods) == want && slices.Equal(pods, got), "pods " + strings.Join(pods, ",") + "; " + member + " " + strings.Join(got, ",")
		})
	}
	condition := func(typ string) string {
		return s.get("", "mcs", "foo", "-n", "xmcs", "-o", `jsonpath={.status.conditions[?(@.type=="`+typ+`")].status}/{.status.conditions[?(@.type=="`+typ+`")].reason}`)
	}
	services := func() string {
		var in []string
		for _, m := range []string{"member1", "member2", "member3", "member4"} {
			if s.get(m, "svc", "foo", "-n", "xmcs", "-o", "name") != "" {
				in = append(in, m)
			}
		}
		return strings.Join(in, ",")
	}
	waitServices := func(want string) {
		t.Helper()
		eventually(t, 2*time.Minute, "Service foo in "+want, func() (bool, string) { got := services(); return got == want, got })
	}

	// The seed's YAML as written, in namespace xmcs: exposed in member2;
	// every cluster provides.
	s.mustApply(t, "", `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata:
  name: foo
  namespace: xmcs
spec:
  types:
  - CrossCluster
  range:
    clusterNames:
    - member2
`)
	sameBackends("member2 gets member1's 2 endpoints (v1.7 range.clusterNames)", "member2", 2)
	waitServices("member1,member2,member3")
	s.waitFor(t, "True/ServiceAppliedSucceed", "", "mcs", "foo", "-n", "xmcs", "-o",
		`jsonpath={.status.conditions[?(@.type=="ServiceApplied")].status}/{.status.conditions[?(@.type=="ServiceApplied")].reason}`)
	if got := condition("EndpointSliceDispatched"); got != "True/EndpointSliceDispatchedSucceed" {
		t.Errorf("EndpointSliceDispatched = %q", got)
	}
	if got := dispatched("member3"); len(got) != 0 {
		t.Errorf("member3 is no consumer but has slices %v", got)
	}
	// The Service's own policy is kept: its placement is member1's, the
	// MultiClusterService's clusters are a requiredBy entry.
	if got := s.get("", "rb", "foo-service", "-n", "xmcs", "-o", "jsonpath={.spec.placement.clusterAffinity.clusterNames[*]}/{.spec.requiredBy[*].name}"); got != "member1/foo-multiclusterservice" {
		t.Errorf("the Service's binding: placement/requiredBy = %q", got)
	}

	// The later form: provider member1, consumer member2. member3, a
	// provider before, loses the Service (its policy never sent it there)
	// and member2 its slices from member3.
	s.kubectl("", "delete", "mcs", "foo", "-n", "xmcs")
	s.mustApply(t, "", `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: foo, namespace: xmcs}
spec:
  types: [CrossCluster]
  providerClusters: [{name: member1}]
  consumerClusters: [{name: member2}]
`)
	sameBackends("member2 gets member1's endpoints (providerClusters/consumerClusters)", "member2", 2)
	waitServices("member1,member2")
	s.waitFor(t, "member1", "member2", "endpointslices", "-n", "xmcs", "-l",
		"endpointslice.kubernetes.io/managed-by=endpointslice-dispatch-controller.karmada.io,kubernetes.io/service-name=foo",
		"-o", `jsonpath={.items[*].metadata.annotations.endpointslice\.karmada\.io/provision-cluster}`)

	// An unknown cluster is a condition, not a refusal.
	s.mustApply(t, "", `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: foo, namespace: xmcs}
spec:
  types: [CrossCluster]
  providerClusters: [{name: member1}]
  consumerClusters: [{name: member2}, {name: member9}]
`)
	s.waitFor(t, "False/ServiceAppliedFailed", "", "mcs", "foo", "-n", "xmcs", "-o",
		`jsonpath={.status.conditions[?(@.type=="ServiceApplied")].status}/{.status.conditions[?(@.type=="ServiceApplied")].reason}`)
	if msg := s.get("", "mcs", "foo", "-n", "xmcs", "-o", `jsonpath={.status.conditions[?(@.type=="ServiceApplied")].message}`); !strings.Contains(msg, "member9") {
		t.Errorf("ServiceApplied message does not name member9: %q", msg)
	}
	if ev := s.get("", "events", "-n", "xmcs", "--field-selector", "reason=ClusterNotFound", "-o", "name"); ev == "" {
		t.Error("no ClusterNotFound event")
	}
	sameBackends("member2 keeps member1's endpoints", "member2", 2)

	// No lists: every cluster provides and consumes, including member4,
	// which joins now.
	s.mustApply(t, "", `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: foo, namespace: xmcs}
spec:
  types: [CrossCluster]
`)
	sameBackends("member2 gets member1's endpoints (no lists)", "member2", 2)
	sameBackends("member3 gets member1's endpoints (no lists)", "member3", 2)
	waitServices("member1,member2,member3")
	if got := dispatched("member1"); len(got) != 0 {
		t.Errorf("member1 got its own endpoints back: %v", got)
	}
	s.flotilla("join", "member4", "--kubeconfig", cpConfig, "--cluster-kubeconfig", membersConfig, "--cluster-context", "member4")
	waitServices("member1,member2,member3,member4")
	sameBackends("member4, joined later, gets member1's endpoints", "member4", 2)

	// Endpoints follow a scale-up.
	s.kubectl("", "scale", "deploy", "foo", "-n", "xmcs", "--replicas=3")
	sameBackends("member2 follows the scale-up", "member2", 3)
	sameBackends("member4 follows the scale-up", "member4", 3)

	// A controller-manager restart withdraws and duplicates nothing: the
	// consumers keep the same slices, with the 3 backends, throughout.
	uids := s.get("member2", "endpointslices", "-n", "xmcs", "-l", "endpointslice.kubernetes.io/managed-by=endpointslice-dispatch-controller.karmada.io", "-o", "jsonpath={.items[*].metadata.uid}")
	s.killControllerManager(t, func() string {
		if got := dispatched("member2"); len(got) != 3 {
			return fmt.Sprintf("member2's slices list %v, want the 3 backends throughout", got)
		}
		return ""
	})
	if got := s.get("member2", "endpointslices", "-n", "xmcs", "-l", "endpointslice.kubernetes.io/managed-by=endpointslice-dispatch-controller.karmada.io", "-o", "jsonpath={.items[*].metadata.uid}"); got != uids {
		t.Errorf("member2's slices were replaced across the restart: %q, then %q", uids, got)
	}

	// While member1, the provider, is NotReady (its API server frozen),
	// the consumers keep its endpoints.
	pid := s.apiServerPID("member1")
	if pid == 0 {
		t.Fatal("no kube-apiserver process for member1")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	defer thaw()
	s.waitFor(t, "False", "", "cluster", "member1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		if got := dispatched("member2"); len(got) != 3 {
			t.Fatalf("while member1 is NotReady, member2 lists %v from it, want its 3 last known backends", got)
		}
	}
	thaw()
	s.waitFor(t, "True", "", "cluster", "member1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	sameBackends("member2 still lists member1's pods once it is back", "member2", 3)

	// The Service is exported from member1 too: its slice there is one
	// Work with two owners.
	s.mustApply(t, "", `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: foo, namespace: xmcs}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: foo-export, namespace: xmcs}
spec:
  resourceSelectors: [{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: foo}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
	collectedBy := func() string {
		return s.get("", "work", "-n", "karmada-es-member1", "-l", "endpointslice.karmada.io/managed-by", "-o",
			`jsonpath={range .items[*]}{.metadata.labels.endpointslice\.karmada\.io/managed-by} {end}`)
	}
	s.waitFor(t, "MultiClusterService.ServiceExport", "", "work", "-n", "karmada-es-member1", "-l", "endpointslice.karmada.io/managed-by", "-o",
		`jsonpath={range .items[*]}{.metadata.labels.endpointslice\.karmada\.io/managed-by}{end}`)
	eventually(t, time.Minute, "member1's slice imported for the export", func() (bool, string) {
		got := s.get("", "endpointslices", "-n", "xmcs", "-l", "kubernetes.io/service-name=derived-foo", "-o", "name")
		return strings.HasPrefix(got, "endpointslice.discovery.k8s.io/imported-member1-"), got
	})

	// Deleting the MultiClusterService withdraws the slices and the
	// clusters it added; the Service stays where its policy puts it, and
	// the export keeps its Work.
	s.kubectl("", "delete", "mcs", "foo", "-n", "xmcs")
	waitServices("member1")
	// The slices are withdrawn beside the Services, each Work once its
	// member copy is deleted.
	for _, m := range []string{"member2", "member3", "member4"} {
		eventually(t, time.Minute, m+" to lose its slices after the MultiClusterService is gone", func() (bool, string) {
			got := dispatched(m)
			return len(got) == 0, strings.Join(got, ",")
		})
	}
	s.waitFor(t, "", "", "work", "-A", "-l", "multiclusterservice.karmada.io/name=foo", "-o", "name")
	if got := collectedBy(); strings.TrimSpace(got) != "ServiceExport" {
		t.Errorf("member1's collected slice is managed by %q after the MultiClusterService went, want ServiceExport", got)
	}
	// Deleting the export too leaves nothing behind.
	s.kubectl("", "delete", "serviceexport", "foo", "-n", "xmcs")
	s.waitFor(t, "", "", "work", "-A", "-l", "endpointslice.karmada.io/managed-by", "-o", "name")
	s.waitFor(t, "", "", "endpointslices", "-n", "xmcs", "-l", "kubernetes.io/service-name=derived-foo", "-o", "name")
}

// TestMultiClusterServiceLoadBalancer applies the seed's LoadBalancer
// MultiClusterService as written: it gets an address from the local
// provider's pool, its backends list every ready pod of the Service's
// clusters and follow a scale-up, and deleting it releases the address
// (the next one gets it).
func TestMultiClusterServiceLoadBalancer(t *testing.T) {
	s := sharedStackOf(t, 2)
	s.mustApply(t, "", deploymentYAML("default", "foo", 4, "nginx")+`---
apiVersion: v1
kind: Service
metadata: {name: foo, namespace: default}
spec:
  selector: {app: foo}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: foo, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: foo}
  - {apiVersion: v1, kind: Service, name: foo}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided}
`)
	seedLB := `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata:
  name: foo
spec:
   ports:
   - port: 80
   types:
   - LoadBalancer
`
	s.mustApply(t, "", seedLB)
	s.waitFor(t, "10.255.0.1", "", "mcs", "foo", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")

	backends := func(member string) string {
		return s.get("", "endpointslices", "-l", "multiclusterservice.karmada.io/name=foo,loadbalancer.flotilla.io/cluster="+member,
			"-o", "jsonpath={.items[*].endpoints[*].addresses[*]}:{.items[*].ports[*].port}")
	}
	podIPs := func(member string) []string {
		ips := strings.Fields(s.get(member, "pods", "-l", "app=foo", "--field-selector", "status.phase=Running", "-o", "jsonpath={.items[*].status.podIP}"))
		slices.Sort(ips)
		return ips
	}
	follow := func(what string, replicas int) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, string) {
			var got, want []string
			n := 0
			for _, m := range []string{"member1", "member2"} {
				ips := podIPs(m)
				n += len(ips)
				// kwok can give two pods of a member one address (its pool
				// reuses a released address while the pod that held it
				// still runs); an EndpointSlice lists an address once.
				got, want = append(got, backends(m)), append(want, strings.Join(slices.Compact(ips), " ")+":8080")
			}
			return n == replicas && slices.Equal(got, want), "backends " + strings.Join(got, " | ") + "; pods " + strings.Join(want, " | ")
		})
	}
	follow("the backends list the 4 pods of member1 and member2, on the target port", 4)
	s.kubectl("", "scale", "deploy", "foo", "--replicas=6")
	follow("the backends follow the scale-up to 6", 6)
	if ev := s.get("", "events", "--field-selector", "involvedObject.name=foo,reason=MCSLoadBalance,type=Normal", "-o", "name"); ev == "" {
		t.Error("no MCSLoadBalance event")
	}

	// Deleting it releases the address and its backend slices; the next
	// MultiClusterService gets the same address.
	s.kubectl("", "delete", "mcs", "foo")
	s.waitFor(t, "", "", "endpointslices", "-l", "multiclusterservice.karmada.io/name=foo", "-o", "name")
	s.mustApply(t, "", strings.Replace(seedLB, "name: foo", "name: bar", 1))
	s.waitFor(t, "10.255.0.1", "", "mcs", "bar", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
	s.mustApply(t, "", strings.Replace(seedLB, "name: foo", "name: baz", 1))
	s.waitFor(t, "10.255.0.2", "", "mcs", "baz", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
	// bar exposes a Service that does not exist: a warning says so.
	s.waitFor(t, "MCSLoadBalance", "", "events", "--field-selector", "involvedObject.name=bar,type=Warning", "-o", "jsonpath={.items[0].reason}")
	if msg := s.get("", "events", "--field-selector", "involvedObject.name=bar,type=Warning", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "Service default/bar does not exist") {
		t.Errorf("the warning does not say the Service is missing: %q", msg)
	}
}
