package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

// TestMultiClusterIngressLocations applies a MultiClusterIngress in front
// of a Service propagated to member1 and member2, as a Karmada user writes
// it: status.serviceLocations lists both; a backend Service that does not
// exist is left out with a BackendServiceNotFound warning, which says
// "not propagated" once the Service exists without a policy; a backend
// port the Service lacks and an IngressClass that does not exist are
// Warnings too (BackendServicePortNotFound, MCILoadBalance); a Remedy that
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

	// A port the Service does not have, and an IngressClass that does not exist.
	s.mustApply(t, "", `apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: lost, namespace: mci}
spec:
  ingressClassName: nosuch
  defaultBackend: {service: {name: web, port: {number: 81}}}
`)
	for reason, want := range map[string]string{
		"BackendServicePortNotFound": "backend Service mci/web has no port 81 (its ports: 80)",
		"MCILoadBalance":             `IngressClass "nosuch" does not exist, so no provider serves this MultiClusterIngress (IngressClasses: flotilla-local)`,
	} {
		eventually(t, time.Minute, "a "+reason+" warning saying "+want, func() (bool, string) {
			out := s.get("", "events", "-n", "mci", "--field-selector", "type=Warning,reason="+reason+",involvedObject.name=lost", "-o", "jsonpath={.items[*].message}")
			return strings.Contains(out, want), out
		})
	}
	if got := s.get("", "multiclusteringress", "lost", "-n", "mci", "-o", "jsonpath={.metadata.finalizers}{.status.loadBalancer}"); got != "{}" && got != "" {
		t.Errorf("a MultiClusterIngress no provider serves got %q, want no finalizer and no load balancer", got)
	}

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

// TestMultiClusterIngressTraffic sends requests through the local
// provider's listener. Kwok's pods do not serve, so each member's Service
// gets a stand-in: an EndpointSlice in member1 and in member2 pointing at
// an HTTP server this test runs on the machine, as a user would do. The
// MultiClusterIngress (default IngressClass, the local stack's) gets the
// finalizer and a listener in status.loadBalancer; its backend is exported
// (ServiceExport and PropagationPolicy propagate-service-web) and requests
// reach both clusters. member2's DNS detector then fails: the Remedy takes
// it out of traffic and requests reach member1 only, until it recovers.
// Deleting the MultiClusterIngress closes the listener, drops the
// finalizer and the export.
func TestMultiClusterIngressTraffic(t *testing.T) {
	s := sharedStackOf(t, 3)
	// An EndpointSlice may not hold a loopback address: the stand-ins
	// listen on the machine's own.
	ip := testproc.MachineIPv4(t)
	ports := map[string]int{}
	for _, cluster := range []string{"member1", "member2"} {
		sock, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		srv := &httptest.Server{Listener: sock, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s", cluster, r.URL.Path)
		})}}
		srv.Start()
		t.Cleanup(srv.Close)
		ports[cluster] = sock.Addr().(*net.TCPAddr).Port
	}
	s.kubectl("", "create", "namespace", "mcitraffic")
	s.mustApply(t, "", `apiVersion: v1
kind: Service
metadata: {name: web, namespace: mcitraffic}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: mcitraffic}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: shop, namespace: mcitraffic}
spec:
  rules:
  - host: shop.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`)
	for cluster, port := range ports {
		s.waitFor(t, "web", cluster, "service", "web", "-n", "mcitraffic", "-o", "jsonpath={.metadata.name}")
		s.mustApply(t, cluster, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-standin
  namespace: mcitraffic
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
ports: [{name: http, port: %d, protocol: TCP}]
endpoints: [{addresses: [%s], conditions: {ready: true}}]
`, port, ip))
	}
	s.waitFor(t, "karmada.io/multi-cluster-ingress-controller", "", "multiclusteringress", "shop", "-n", "mcitraffic", "-o", "jsonpath={.metadata.finalizers[*]}")
	lbIP := ""
	eventually(t, 2*time.Minute, "status.loadBalancer with the listener's address", func() (bool, string) {
		lbIP = s.get("", "multiclusteringress", "shop", "-n", "mcitraffic", "-o", `jsonpath={.status.loadBalancer.ingress[0].ip}`)
		return strings.HasPrefix(lbIP, "127.0.1."), lbIP
	})
	// The MCILoadBalance event gives the port too.
	addr := net.JoinHostPort(lbIP, "18080")
	s.waitFor(t, "Load balancer "+addr+" is set up by the local provider.", "", "events", "-n", "mcitraffic",
		"--field-selector", "reason=MCILoadBalance,involvedObject.name=shop", "-o", "jsonpath={.items[-1:].message}")
	for _, obj := range [][]string{{"serviceexport", "web"}, {"propagationpolicy", "propagate-service-web"}} {
		s.waitFor(t, obj[1], "", append(obj, "-n", "mcitraffic", "-o", "jsonpath={.metadata.name}")...)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	// reached sends n requests and returns the clusters that answered them.
	reached := func(n int) (map[string]int, string) {
		got := map[string]int{}
		last := ""
		for range n {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/cart", nil)
			req.Host = "shop.example"
			resp, err := client.Do(req)
			if err != nil {
				last = err.Error()
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
			if resp.StatusCode == http.StatusOK && strings.HasPrefix(string(body), resp.Header.Get("X-Flotilla-Backend-Cluster")+" /cart") {
				got[resp.Header.Get("X-Flotilla-Backend-Cluster")]++
			}
		}
		return got, last
	}
	eventually(t, 2*time.Minute, "requests through the listener reaching member1 and member2", func() (bool, string) {
		got, last := reached(8)
		return got["member1"] > 0 && got["member2"] > 0 && len(got) == 2, fmt.Sprintf("%v (last: %s)", got, last)
	})

	s.mustApply(t, "", `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-mci-dns}
spec:
  decisionMatches:
  - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: NotEqual, conditionStatus: "True"}
  actions: [TrafficControl]
`)
	defer s.kubectl("", "delete", "remedy", "e2e-mci-dns", "--ignore-not-found")
	kc, ctx := s.kubeconfig("")
	detector := func(host string) *exec.Cmd {
		return background(t, filepath.Join(t.TempDir(), "detector.log"), "service-name-resolution-detector",
			"--cluster-name", "member2", "--karmada-kubeconfig", kc, "--karmada-context", ctx,
			"--leader-elect=false", "--healthz-port", "0", "--coredns-detect-host", host,
			"--coredns-detect-period", "1s", "--coredns-success-threshold", "2s", "--coredns-failure-threshold", "2s")
	}
	bad := detector("does-not-resolve.invalid")
	s.waitFor(t, `["member2"]`, "", "multiclusteringress", "shop", "-n", "mcitraffic", "-o", "jsonpath={.status.trafficBlockClusters}")
	eventually(t, time.Minute, "requests reaching member1 only while member2 is out of traffic", func() (bool, string) {
		got, last := reached(8)
		return got["member1"] == 8, fmt.Sprintf("%v (last: %s)", got, last)
	})
	_ = bad.Process.Signal(syscall.SIGTERM)
	_ = bad.Wait()
	good := detector("localhost")
	defer func() { _ = good.Process.Signal(syscall.SIGTERM); _ = good.Wait() }()
	s.waitFor(t, "", "", "multiclusteringress", "shop", "-n", "mcitraffic", "-o", "jsonpath={.status.trafficBlockClusters}")
	eventually(t, time.Minute, "requests reaching member2 again after it recovered", func() (bool, string) {
		got, last := reached(8)
		return got["member1"] > 0 && got["member2"] > 0, fmt.Sprintf("%v (last: %s)", got, last)
	})

	s.kubectl("", "delete", "multiclusteringress", "shop", "-n", "mcitraffic", "--wait=true", "--timeout=60s")
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("the listener %s still accepts connections after the MultiClusterIngress was deleted", addr)
	}
	s.waitFor(t, "", "", "propagationpolicy", "propagate-service-web", "-n", "mcitraffic", "--ignore-not-found", "-o", "name")
	s.waitFor(t, "", "", "serviceexport", "web", "-n", "mcitraffic", "--ignore-not-found", "-o", "name")
}
