package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

const mciNS = "mcibench"

// BenchmarkMultiClusterIngress: a MultiClusterIngress served by the local
// provider in front of a Service in member1 and member2, each member's
// endpoint a stand-in HTTP server on this machine. Reported: request
// latency through the listener beside a direct request to a stand-in
// (2,000 sequential keep-alive requests each), and, over BENCH_MCI_CYCLES
// (5) cycles of member2's DNS detector failing and recovering (period 1 s,
// thresholds 3 s), the time from the failing detector's start to member2's
// removal from the listener's targets and from the healthy detector's start
// to its return, split at the Cluster condition and remedyActions.
func BenchmarkMultiClusterIngress(b *testing.B) {
	cycles := 5
	if v, err := strconv.Atoi(os.Getenv("BENCH_MCI_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	h := startHarness(b)
	h.stopHops()
	ip := testproc.MachineIPv4(b)
	stand := map[string]string{} // cluster -> ip:port
	for _, cluster := range []string{"member1", "member2"} {
		sock, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, cluster) })}
		go func() { _ = srv.Serve(sock) }()
		b.Cleanup(func() { _ = srv.Close() })
		stand[cluster] = sock.Addr().String()
	}
	h.applyIn("", fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[1]s}
spec:
  ports: [{name: http, port: 80}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterIngress
metadata: {name: web, namespace: %[1]s}
spec:
  defaultBackend: {service: {name: web, port: {number: 80}}}
---
apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: mcibench-dns}
spec:
  clusterAffinity: {clusterNames: [member2]}
  decisionMatches:
  - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: NotEqual, conditionStatus: "True"}
  actions: [TrafficControl]
`, mciNS))
	ctx := context.Background()
	for i, cluster := range []string{"member1", "member2"} {
		h.waitFor("the namespace in "+cluster, time.Minute, func() bool {
			_, err := h.members[i].CoreV1().Namespaces().Get(ctx, mciNS, metav1.GetOptions{})
			return err == nil
		})
		host, port, _ := net.SplitHostPort(stand[cluster])
		h.applyIn(cluster, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-standin, namespace: %s, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: %s, protocol: TCP}]
endpoints: [{addresses: [%s], conditions: {ready: true}}]
`, mciNS, port, host))
	}
	addrRE := regexp.MustCompile(`Load balancer (\S+) is set up`)
	var lb string
	h.waitFor("the listener's address in an MCILoadBalance event", 2*time.Minute, func() bool {
		evs, err := h.cp.CoreV1().Events(mciNS).List(ctx, metav1.ListOptions{FieldSelector: "reason=MCILoadBalance"})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if m := addrRE.FindStringSubmatch(e.Message); m != nil {
				lb = m[1]
			}
		}
		return lb != ""
	})
	httpc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(addr string) (string, error) {
		resp, err := httpc.Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		return string(body), nil
	}
	h.waitFor("requests through the listener reaching both members", 2*time.Minute, func() bool {
		seen := map[string]bool{}
		for range 4 {
			if c, err := get(lb); err == nil {
				seen[c] = true
			}
		}
		return seen["member1"] && seen["member2"]
	})

	latency := func(addr string) []time.Duration {
		out := make([]time.Duration, 0, 2000)
		for range 2000 {
			start := time.Now()
			if _, err := get(addr); err != nil {
				b.Fatalf("GET %s: %v", addr, err)
			}
			out = append(out, time.Since(start))
		}
		slices.Sort(out)
		return out
	}
	direct, through := latency(stand["member1"]), latency(lb)
	fmt.Printf("| request (2,000 sequential, keep-alive) | p50 | p90 | p99 |\n|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{{"direct to a stand-in backend", direct}, {"through the local listener", through}} {
		fmt.Printf("| %s | %d µs | %d µs | %d µs |\n", r.name, pct(r.d, 0.50).Microseconds(), pct(r.d, 0.90).Microseconds(), pct(r.d, 0.99).Microseconds())
	}

	// A prober sends a request every 10 ms and records who answered.
	type answer struct {
		at      time.Time
		cluster string
	}
	var mu sync.Mutex
	var answers []answer
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			c, err := get(lb)
			if err != nil {
				c = "error"
			}
			mu.Lock()
			answers = append(answers, answer{time.Now(), c})
			mu.Unlock()
		}
	}()
	defer close(stop)
	// A watch records each change of member2's condition and remedyActions.
	type clusterState struct {
		at        time.Time
		condition string
		blocked   bool
	}
	var states []clusterState
	clusterGVR := schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
	w, err := h.dyn.Resource(clusterGVR).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=member2"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			st := clusterState{at: time.Now()}
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, x := range conds {
				if m, ok := x.(map[string]any); ok && m["type"] == "ServiceDomainNameResolutionReady" {
					st.condition, _ = m["status"].(string)
				}
			}
			actions, _, _ := unstructured.NestedStringSlice(c.Object, "status", "remedyActions")
			st.blocked = slices.Contains(actions, "TrafficControl")
			mu.Lock()
			states = append(states, st)
			mu.Unlock()
		}
	}()
	kc := filepath.Join(h.dataDir, "karmada.config")
	detector := func(host string) *exec.Cmd {
		cmd := exec.Command(os.Getenv("FLOTILLA_BIN"), "service-name-resolution-detector", "--cluster-name", "member2",
			"--karmada-kubeconfig", kc, "--karmada-context", "karmada-apiserver", "--leader-elect=false", "--healthz-port", "0",
			"--coredns-detect-host", host, "--coredns-detect-period", "1s",
			"--coredns-failure-threshold", "3s", "--coredns-success-threshold", "3s")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		return cmd
	}
	halt := func(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	// phase runs a detector looking up host until the listener shows the
	// wanted targets, and returns the times from the detector's start to
	// the condition's change, to remedyActions', and to the listener's.
	phase := func(host, wantCondition string, wantBlocked bool) (*exec.Cmd, [3]time.Duration) {
		start := time.Now()
		cmd := detector(host)
		var out [3]time.Duration
		deadline := start.Add(time.Minute)
		for time.Now().Before(deadline) {
			mu.Lock()
			out = [3]time.Duration{}
			for _, st := range states {
				if !st.at.After(start) {
					continue
				}
				if out[0] == 0 && st.condition == wantCondition {
					out[0] = st.at.Sub(start)
				}
				if out[1] == 0 && st.condition == wantCondition && st.blocked == wantBlocked {
					out[1] = st.at.Sub(start)
				}
			}
			if wantBlocked { // the first answer after which only member1 answers
				for i := len(answers) - 1; i >= 0 && answers[i].at.After(start) && answers[i].cluster == "member1"; i-- {
					out[2] = answers[i].at.Sub(start)
				}
				if n := len(answers); n < 20 || answers[n-1].at.Sub(start) < out[2]+200*time.Millisecond {
					out[2] = 0 // not yet seen long enough
				}
			} else { // the first answer from member2
				for _, a := range answers {
					if a.at.After(start) && a.cluster == "member2" {
						out[2] = a.at.Sub(start)
						break
					}
				}
			}
			mu.Unlock()
			if out[0] != 0 && out[1] != 0 && out[2] != 0 {
				return cmd, out
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Fatalf("detector looking up %s: after a minute condition/remedy/listener at %v", host, out)
		return cmd, out
	}
	good, _ := phase("localhost", "True", false)
	var down, up [][3]time.Duration
	for range cycles {
		halt(good)
		bad, d := phase("does-not-resolve.invalid", "False", true)
		down = append(down, d)
		halt(bad)
		good, d = phase("localhost", "True", false)
		up = append(up, d)
	}
	halt(good)
	report := func(title string, ds [][3]time.Duration) {
		fmt.Printf("| %s (%d cycles) | median | max |\n|---|---|---|\n", title, len(ds))
		for i, step := range []string{"detector start → ServiceDomainNameResolutionReady changes (3 s threshold within)",
			"→ remedyActions changes", "→ the listener's targets change"} {
			var v []time.Duration
			for _, d := range ds {
				if i == 0 {
					v = append(v, d[0])
				} else {
					v = append(v, d[i]-d[i-1])
				}
			}
			slices.Sort(v)
			fmt.Printf("| %s | %d ms | %d ms |\n", step, v[len(v)/2].Milliseconds(), v[len(v)-1].Milliseconds())
		}
		var total []time.Duration
		for _, d := range ds {
			total = append(total, d[2])
		}
		slices.Sort(total)
		fmt.Printf("| total | %d ms | %d ms |\n", total[len(total)/2].Milliseconds(), total[len(total)-1].Milliseconds())
	}
	report("member2's lookups fail: out of traffic", down)
	report("member2's lookups recover: back in traffic", up)
	mu.Lock()
	errs := 0
	for _, a := range answers {
		if a.cluster == "error" {
			errs++
		}
	}
	fmt.Printf("probe requests during the cycles: %d, failed: %d\n", len(answers), errs)
	mu.Unlock()
}
