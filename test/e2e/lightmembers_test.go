package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// TestLightMembers is the smoke test of a large local fleet: 30 light
// members run in one process on one etcd, and still act as 30 clusters. No
// member sees another's objects; a Deployment propagates to all of them;
// a paused member turns its Cluster not Ready and its workload fails over
// to the others (Failover on, short thresholds), and comes back Ready once
// resumed; an unjoined member loses its copy; and after down and up every
// member has kept its data.
func TestLightMembers(t *testing.T) {
	const n = 30
	flags := []string{"--light-members", "--feature-gates=Failover=true",
		"--controller-manager-arg=--enable-no-execute-taint-eviction=true",
		"--controller-manager-arg=--cluster-failure-threshold=5s", "--controller-manager-arg=--cluster-success-threshold=5s"}
	s := startStack(t, n, flags...)
	var hosts, apiservers int
	for _, p := range s.processes() {
		switch {
		case strings.Contains(p, "component "+localstack.KindLightMembers):
			hosts++
		case strings.Contains(p, "component "+localstack.KindAPIServer):
			apiservers++
		}
	}
	if hosts != 1 || apiservers != 1 {
		t.Errorf("want one light-members host and only the control plane's API server, got %d hosts and %d API servers:\n%s", hosts, apiservers, strings.Join(s.processes(), "\n"))
	}

	// Isolation: one member's object is nowhere else.
	s.kubectl("member1", "create", "configmap", "only-in-member1", "-n", "default", "--from-literal=k=v")
	for _, m := range []string{"member2", "member30"} {
		if got := s.get(m, "configmap", "only-in-member1", "-n", "default", "-o", "name"); got != "" {
			t.Errorf("%s sees member1's ConfigMap: %s", m, got)
		}
	}

	// OpenAPI: a member that did not build the shared built-in documents
	// serves them, and its own CustomResourceDefinitions beside them.
	if out := s.kubectl("member17", "explain", "deployment.spec.replicas"); !strings.Contains(out, "replicas") {
		t.Errorf("kubectl explain on member17:\n%s", out)
	}
	s.mustApply(t, "member17", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.kubectl("member17", "get", "--raw", "/openapi/v3"), "apis/example.com/v1") {
		if time.Now().After(deadline) {
			t.Fatal("member17's /openapi/v3 does not list its CustomResourceDefinition after a minute")
		}
		time.Sleep(time.Second)
	}
	if strings.Contains(s.kubectl("member1", "get", "--raw", "/openapi/v3"), "apis/example.com/v1") {
		t.Error("member1's /openapi/v3 lists member17's CustomResourceDefinition")
	}

	// Everywhere, then one member away.
	s.mustApply(t, "", notReadyNoExecutePolicy)
	s.mustApply(t, "", deploymentYAML("default", "fleet", 3, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: fleet, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: fleet}]
  failover: {cluster: {purgeMode: Directly}}
`)
	s.waitFor(t, fmt.Sprint(n), "", "rb", "fleet-deployment", "-o", "go-template={{len .spec.clusters}}")
	for i := 1; i <= n; i++ {
		s.waitFor(t, "3", fmt.Sprintf("member%d", i), "deploy", "fleet", "-n", "default", "-o", "jsonpath={.spec.replicas}")
	}

	ctx := context.Background()
	if err := localstack.PauseLightMember(ctx, s.dataDir, "member30", true); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "False", "", "cluster", "member30", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	if got := s.get("", "cluster", "member29", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); got != "True" {
		t.Errorf("member29 is Ready=%q while only member30 is paused", got)
	}
	s.waitFor(t, fmt.Sprint(n-1), "", "rb", "fleet-deployment", "-o", "go-template={{len .spec.clusters}}")
	if err := localstack.PauseLightMember(ctx, s.dataDir, "member30", false); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "True", "", "cluster", "member30", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	if err := localstack.PauseLightMember(ctx, s.dataDir, "member31", true); err == nil || !strings.Contains(err.Error(), "member31") {
		t.Errorf("pausing a member the stack does not have: %v, want an error naming it", err)
	}

	// Unjoined: its copy goes, the others stay.
	cp := []string{"--kubeconfig", filepath.Join(s.dataDir, "karmada.config")}
	if out, ok := s.flotillaCmd(append([]string{"unjoin", "member29", "--wait", "2m"}, cp...)...); !ok {
		t.Fatalf("unjoin member29: %s", out)
	}
	s.waitFor(t, "", "member29", "deploy", "fleet", "-n", "default", "-o", "name")
	s.waitFor(t, "3", "member28", "deploy", "fleet", "-n", "default", "-o", "jsonpath={.spec.replicas}")

	// Down and up: each member's data is still its own.
	s.flotilla("down", "--data-dir", s.dataDir)
	s.waitNoProcesses()
	s.up(n, flags...)
	if got := s.get("member1", "configmap", "only-in-member1", "-n", "default", "-o", "name"); got != "configmap/only-in-member1" {
		t.Errorf("after down and up, member1's ConfigMap is %q", got)
	}
	if got := s.get("member2", "configmap", "only-in-member1", "-n", "default", "-o", "name"); got != "" {
		t.Errorf("after down and up, member2 sees member1's ConfigMap: %s", got)
	}
	s.waitFor(t, "3", "member1", "deploy", "fleet", "-n", "default", "-o", "jsonpath={.spec.replicas}")
}
