package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServiceExportImport is the mcs-api path: the serve Deployment runs
// on member1 and member2 and is exported from both; member3 imports it and
// gets the derived Service and EndpointSlices listing every pod of both
// clusters once. Scaling updates them; a controller-manager restart
// withdraws and duplicates nothing; deleting the export empties them.
func TestServiceExportImport(t *testing.T) {
	s := sharedStackOf(t, 3)
	s.kubectl("", "create", "namespace", "mcs")
	s.mustApply(t, "", deploymentYAML("mcs", "serve", 2, "nginx")+`---
apiVersion: v1
kind: Service
metadata: {name: serve, namespace: mcs}
spec:
  selector: {app: serve}
  ports: [{port: 80}]
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: serve, namespace: mcs}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: serve, namespace: mcs}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: serve}
  - {apiVersion: v1, kind: Service, name: serve}
  - {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: serve}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: serve, namespace: mcs}
spec:
  type: ClusterSetIP
  ports: [{port: 80, protocol: TCP}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: serve-import, namespace: mcs}
spec:
  resourceSelectors:
  - {apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: serve}
  placement:
    clusterAffinity: {clusterNames: [member3]}
`)
	// The policy selecting a ServiceImport was given propagateDeps, as
	// Karmada's webhook gives it.
	if got := s.get("", "pp", "serve-import", "-n", "mcs", "-o", "jsonpath={.spec.propagateDeps}"); got != "true" {
		t.Errorf("propagateDeps of the ServiceImport's policy = %q, want true", got)
	}
	s.waitFor(t, "2", "member1", "deploy", "serve", "-n", "mcs", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "2", "member2", "deploy", "serve", "-n", "mcs", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "service/derived-serve", "member3", "svc", "derived-serve", "-n", "mcs", "-o", "name")

	podIPs := func() []string {
		var ips []string
		for _, m := range []string{"member1", "member2"} {
			ips = append(ips, strings.Fields(s.get(m, "pods", "-n", "mcs", "-l", "app=serve", "-o", "jsonpath={.items[*].status.podIP}"))...)
		}
		slices.Sort(ips)
		return ips
	}
	imported := func() []string {
		ips := strings.Fields(s.get("member3", "endpointslices", "-n", "mcs", "-l", "kubernetes.io/service-name=derived-serve",
			"-o", "jsonpath={.items[*].endpoints[*].addresses[*]}"))
		slices.Sort(ips)
		return ips
	}
	sameBackends := func(what string, want int) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() (bool, string) {
			pods, got := podIPs(), imported()
			return len(pods) == want && slices.Equal(pods, got), "pods " + strings.Join(pods, ",") + "; member3 " + strings.Join(got, ",")
		})
	}
	sameBackends("member3's slices list the 4 pods of member1 and member2 once each", 4)

	s.kubectl("", "scale", "deploy", "serve", "-n", "mcs", "--replicas=3")
	sameBackends("member3's slices follow the scale-up to 6 pods", 6)

	// A controller-manager restart withdraws nothing and duplicates
	// nothing: member3 keeps exactly the 6 backends throughout (Karmada
	// withdrew exported endpoints when it restarted before its member caches
	// had synced).
	uids := s.get("member3", "endpointslices", "-n", "mcs", "-l", "kubernetes.io/service-name=derived-serve", "-o", "jsonpath={.items[*].metadata.uid}")
	s.killControllerManager(t, func() string {
		if got := imported(); len(got) != 6 {
			return fmt.Sprintf("member3's slices list %d backends (%v), want the 6 throughout", len(got), got)
		}
		return ""
	})
	if got := s.get("member3", "endpointslices", "-n", "mcs", "-l", "kubernetes.io/service-name=derived-serve", "-o", "jsonpath={.items[*].metadata.uid}"); got != uids {
		t.Errorf("member3's slices were replaced across the restart: %q, then %q", uids, got)
	}

	s.kubectl("", "delete", "serviceexport", "serve", "-n", "mcs")
	s.waitFor(t, "", "member3", "endpointslices", "-n", "mcs", "-l", "kubernetes.io/service-name=derived-serve", "-o", "name")
	if got := s.get("", "endpointslices", "-n", "mcs", "-l", "endpointslice.kubernetes.io/managed-by=endpointslice-controller.karmada.io", "-o", "name"); got != "" {
		t.Errorf("imported slices remain on the control plane after the export was deleted: %s", got)
	}
}
