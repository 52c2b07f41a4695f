package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestMultiClusterIngressLocations applies a MultiClusterIngress in front
// of a Service propagated to member1 and member2, as a Karmada user writes
// it: status.serviceLocations lists both; a backend Service that does not
// exist is left out with a BackendServiceNotFound warning, which says
// "not propagated" once the Service exists without a policy; a Remedy that
// takes member2 out of traffic shows in status.trafficBlockClusters, and
// its deletion clears it.
func TestMultiClusterIngressLocations(t *testing.T) {
	s := sharedStackOf(t, 3)
	s.kubectl("", "create", "namespace", "mci")
	s.mustApply(t, "", `apiVersion: v1
kind: Service
metadata: {name: web, namespace: mci}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: mci}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: shop, namespace: mci}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}
`)
	const locations = `jsonpath={range .status.serviceLocations[*]}{.name}={.clusters}{" "}{end}`
	s.waitFor(t, `web=["member1","member2"]`, "", "multiclusteringress", "shop", "-n", "mci", "-o", locations)
	warning := func(want string) {
		t.Helper()
		eventually(t, time.Minute, "a BackendServiceNotFound warning saying "+want, func() (bool, string) {
			out := s.get("", "events", "-n", "mci", "--field-selector", "reason=BackendServiceNotFound,involvedObject.name=shop", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, want), out
		})
	}
	warning("backend Service mci/api does not exist")
	s.mustApply(t, "", "apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: mci}\nspec:\n  ports: [{port: 80}]\n")
	warning("backend Service mci/api is not propagated")

	s.mustApply(t, "", `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-mci}
spec:
  clusterAffinity: {clusterNames: [member2, member3]}
  actions: [TrafficControl]
`)
	defer s.kubectl("", "delete", "remedy", "e2e-mci", "--ignore-not-found")
	// member3 is blocked too but holds no backend: only located clusters count.
	s.waitFor(t, `["member2"]`, "", "multiclusteringress", "shop", "-n", "mci", "-o", "jsonpath={.status.trafficBlockClusters}")
	s.kubectl("", "delete", "remedy", "e2e-mci")
	s.waitFor(t, "", "", "multiclusteringress", "shop", "-n", "mci", "-o", "jsonpath={.status.trafficBlockClusters}")
}
