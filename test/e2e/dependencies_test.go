package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// shopApp is an application as a user runs it: a Deployment whose pods
// read a ConfigMap (volume) and a Secret (envFrom) and run as a
// ServiceAccount, and a Service in front of it.
const shopApp = `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {GREETING: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret, namespace: shop}
stringData: {TOKEN: s3cret}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web-sa, namespace: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web-sa
      containers:
      - name: web
        image: nginx:1.27
        envFrom: [{secretRef: {name: web-secret}}]
        volumeMounts: [{name: config, mountPath: /etc/web}]
      volumes:
      - name: config
        configMap: {name: web-config}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

// TestMigrateApplicationWithDependencies takes over a whole application
// running in member1 (Deployment, Service, ConfigMap, Secret,
// ServiceAccount) with one Overwrite policy with propagateDeps: the
// workload and its Service are adopted in place (same pods, no restart,
// same ReplicaSet), the dependencies follow it to member2 as well, and a
// second Deployment on member3 that shares the ConfigMap takes it there
// and, once deleted, away from there only.
func TestMigrateApplicationWithDependencies(t *testing.T) {
	s := sharedStackOf(t, 3)

	// 1. The application runs in member1.
	s.kubectl("member1", "create", "namespace", "shop")
	s.mustApply(t, "member1", shopApp)
	s.waitFor(t, "2", "member1", "deploy", "web", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	podsBefore := s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.uid}")
	rsBefore := s.get("member1", "rs", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}")
	ipBefore := s.get("member1", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}")
	if len(strings.Fields(podsBefore)) != 2 || len(strings.Fields(rsBefore)) != 1 {
		t.Fatalf("member1 runs pods %q from ReplicaSets %q; want 2 pods of 1 ReplicaSet", podsBefore, rsBefore)
	}

	// 2. and 3. The same YAML on the control plane, and one policy that
	// takes the workloads and Services over and brings their dependencies.
	s.kubectl("", "create", "namespace", "shop")
	s.mustApply(t, "", shopApp)
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: shop, namespace: shop}
spec:
  conflictResolution: Overwrite
  propagateDeps: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: Service, name: web}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
`)

	// 4. Adopted in place in member1, started in member2.
	s.waitFor(t, "2", "member2", "deploy", "web", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "4", "", "deploy", "web", "-n", "shop", "-o", "jsonpath={.status.readyReplicas}")
	for _, m := range []string{"member1", "member2"} {
		for _, obj := range []string{"configmap/web-config", "secret/web-secret", "serviceaccount/web-sa", "service/web"} {
			s.waitFor(t, "true", m, obj, "-n", "shop", "-o", "jsonpath={.metadata.labels.karmada\\.io/managed}")
		}
	}
	for _, rb := range []string{"web-deployment", "web-service", "web-config-configmap", "web-secret-secret", "web-sa-serviceaccount"} {
		s.waitFor(t, "True", "", "rb", rb, "-n", "shop", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
	}
	if got := s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.uid}"); got != podsBefore {
		t.Errorf("member1's pods changed from %q to %q", podsBefore, got)
	}
	if got := s.get("member1", "rs", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"); got != rsBefore {
		t.Errorf("member1's ReplicaSets changed from %q to %q", rsBefore, got)
	}
	if got := s.get("member1", "pods", "-n", "shop", "-o", "jsonpath={.items[*].status.containerStatuses[*].restartCount}"); strings.Trim(got, "0 ") != "" {
		t.Errorf("restart counts in member1: %q", got)
	}
	if got := s.get("member1", "svc", "web", "-n", "shop", "-o", "jsonpath={.spec.clusterIP}"); got != ipBefore {
		t.Errorf("the Service's clusterIP in member1 changed from %s to %s", ipBefore, got)
	}
	if got := s.get("member3", "configmap", "web-config", "-n", "shop", "--ignore-not-found", "-o", "name"); got != "" {
		t.Errorf("the ConfigMap went to member3, where nothing needs it")
	}

	// A second Deployment, on member3, shares the ConfigMap.
	s.mustApply(t, "", `apiVersion: apps/v1
kind: Deployment
metadata: {name: report, namespace: shop, labels: {app: report}}
spec:
  replicas: 1
  selector: {matchLabels: {app: report}}
  template:
    metadata: {labels: {app: report}}
    spec:
      containers:
      - name: report
        image: busybox:1.36
        env: [{name: GREETING, valueFrom: {configMapKeyRef: {name: web-config, key: GREETING}}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: report, namespace: shop}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: report}]
  placement:
    clusterAffinity: {clusterNames: [member3]}
`)
	s.waitFor(t, "true", "member3", "configmap", "web-config", "-n", "shop", "-o", "jsonpath={.metadata.labels.karmada\\.io/managed}")
	eventually(t, 2*time.Minute, "the ConfigMap required on member1, member2 and member3", func() (bool, string) {
		got := strings.Fields(s.get("", "rb", "web-config-configmap", "-n", "shop", "-o", "jsonpath={.spec.requiredBy[*].clusters[*].name}"))
		slices.Sort(got)
		return slices.Equal(got, []string{"member1", "member2", "member3"}), strings.Join(got, " ")
	})
	if got := s.get("member3", "secret", "web-secret", "-n", "shop", "--ignore-not-found", "-o", "name"); got != "" {
		t.Errorf("the Secret only web needs went to member3")
	}

	// Deleting it takes the ConfigMap from member3 only.
	s.kubectl("", "delete", "deploy", "report", "-n", "shop")
	s.waitFor(t, "", "member3", "configmap", "web-config", "-n", "shop", "--ignore-not-found", "-o", "name")
	for _, m := range []string{"member1", "member2"} {
		if got := s.get(m, "configmap", "web-config", "-n", "shop", "-o", "name"); got != "configmap/web-config" {
			t.Errorf("the ConfigMap left %s, where web still needs it: %q", m, got)
		}
	}
	if got := s.get("", "configmap", "web-config", "-n", "shop", "-o", "name"); got != "configmap/web-config" {
		t.Errorf("the ConfigMap template left the control plane: %q", got)
	}
}
