package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

const mcsNS = "mcsbench"

// sliceLog records, per provider slice, each state a provider showed and
// when, and resolves each against the first consumer state that reflects
// it (the same state or a later one).
type sliceLog struct {
	mu       sync.Mutex
	states   map[string][]sliceState // "<provider>-<slice>" -> states in order
	current  map[string]string       // "<provider>-<slice>" -> the consumer's state now
	measured []time.Duration
	on       bool
}

type sliceState struct {
	at       time.Time
	state    string
	resolved bool
}

// endpointsState is a slice's endpoints as one comparable string.
func endpointsState(s *discoveryv1.EndpointSlice) string {
	var out []string
	for _, e := range s.Endpoints {
		ready := e.Conditions.Ready == nil || *e.Conditions.Ready
		for _, a := range e.Addresses {
			out = append(out, a+"/"+strconv.FormatBool(ready))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (l *sliceLog) provider(key, state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	st := l.states[key]
	if n := len(st); n > 0 && st[n-1].state == state {
		return
	}
	now := time.Now()
	st = append(st, sliceState{at: now, state: state})
	l.states[key] = st
	if l.current[key] == state {
		// Back to what the consumer shows (a pod replaced by one with the
		// same address, before the consumer saw the change): consistent
		// now, and the states in between are superseded.
		l.resolve(st, len(st)-1, now)
	}
}

// resolve settles states st[0..j] at time now.
func (l *sliceLog) resolve(st []sliceState, j int, now time.Time) {
	for i := 0; i <= j; i++ {
		if !st[i].resolved {
			st[i].resolved = true
			l.measured = append(l.measured, now.Sub(st[i].at))
		}
	}
}

func (l *sliceLog) consumer(key, state string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current[key] = state
	st := l.states[key]
	j := -1
	for i := range st {
		if st[i].state == state {
			j = i
		}
	}
	l.resolve(st, j, now)
}

func (l *sliceLog) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, st := range l.states {
		for _, s := range st {
			if !s.resolved {
				n++
			}
		}
	}
	return n
}

// BenchmarkMultiClusterService: 100 Services, each with 10 pods divided
// between member1 and member2 and a CrossCluster MultiClusterService
// (providers member1 and member2, consumer member3). Churn replaces 10
// pods per second for 60 s; reported: p50/p99 from a provider's
// EndpointSlice change to member3's dispatched slice reflecting it, and the
// controller manager's CPU and memory during the churn.
func BenchmarkMultiClusterService(b *testing.B) {
	if bare {
		b.Skip("needs pods: not with BENCH_BARE")
	}
	services, rate, churn := 100, 10.0, 60*time.Second
	if v, err := strconv.Atoi(os.Getenv("BENCH_MCS")); err == nil {
		services = v
	}
	h := startHarness(b)
	h.stopHops()
	ctx := context.Background()
	kc := filepath.Join(h.dataDir, "karmada.config")
	var y strings.Builder
	fmt.Fprintf(&y, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n---\n", mcsNS)
	fmt.Fprintf(&y, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: providers, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}, {apiVersion: v1, kind: Service}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided}
`, mcsNS)
	for i := range services {
		name := fmt.Sprintf("svc-%03d", i)
		fmt.Fprintf(&y, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 10
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: app, image: nginx}]}
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec: {selector: {app: %[1]s}, ports: [{port: 80}]}
---
apiVersion: networking.karmada.io/v1alpha1
kind: MultiClusterService
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  types: [CrossCluster]
  providerClusters: [{name: member1}, {name: member2}]
  consumerClusters: [{name: member3}]
`, name, mcsNS)
	}
	setup := time.Now()
	apply := exec.Command("kubectl", "--kubeconfig", kc, "apply", "--server-side", "-f", "-")
	apply.Stdin = strings.NewReader(y.String())
	if out, err := apply.CombinedOutput(); err != nil {
		b.Fatalf("apply: %v\n%s", err, out)
	}

	log := &sliceLog{states: map[string][]sliceState{}, current: map[string]string{}}
	providers := map[string]kubernetes.Interface{"member1": h.members[0], "member2": h.members[1]}
	podLister := map[string]cache.Indexer{}
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	for name, c := range providers {
		f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(mcsNS))
		slicesInf := f.Discovery().V1().EndpointSlices().Informer()
		note := func(obj any) {
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok || s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
				return
			}
			log.provider(name+"-"+s.Name, endpointsState(s))
		}
		_, _ = slicesInf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, n any) { note(n) }})
		podLister[name] = f.Core().V1().Pods().Informer().GetIndexer()
		f.Start(stop)
		f.WaitForCacheSync(stop)
	}
	consumerState := map[string]string{}
	var cmu sync.Mutex
	cf := informers.NewSharedInformerFactoryWithOptions(h.members[2], 0, informers.WithNamespace(mcsNS))
	cinf := cf.Discovery().V1().EndpointSlices().Informer()
	noteConsumer := func(obj any) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok || s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-dispatch-controller.karmada.io" {
			return
		}
		st := endpointsState(s)
		cmu.Lock()
		consumerState[s.Name] = st
		cmu.Unlock()
		log.consumer(s.Name, st)
	}
	_, _ = cinf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: noteConsumer, UpdateFunc: func(_, n any) { noteConsumer(n) }})
	cf.Start(stop)
	cf.WaitForCacheSync(stop)

	h.waitFor(fmt.Sprintf("member3 to list the 10 ready pods of each of the %d Services", services), 15*time.Minute, func() bool {
		cmu.Lock()
		defer cmu.Unlock()
		ready := map[string]int{}
		for slice, st := range consumerState {
			svc := slice[strings.Index(slice, "-")+1:]
			svc = svc[:strings.LastIndex(svc, "-")]
			ready[svc] += strings.Count(st, "/true")
		}
		full := 0
		for _, n := range ready {
			if n == 10 {
				full++
			}
		}
		return full == services
	})
	b.Logf("%d Services with 10 pods each exposed in member3 %s after the apply began", services, time.Since(setup).Round(time.Second))
	time.Sleep(10 * time.Second) // let the set-up's status writes settle

	log.mu.Lock()
	log.on = true
	log.mu.Unlock()
	cpu0 := h.controllerManagerCPU()
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	replaced := 0
	names := []string{"member1", "member2"}
	for time.Since(start) < churn {
		<-tick.C
		member := names[rand.IntN(2)]
		pods := podLister[member].List()
		var running []*corev1.Pod
		for _, o := range pods {
			if p, ok := o.(*corev1.Pod); ok && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
				running = append(running, p)
			}
		}
		if len(running) == 0 {
			continue
		}
		p := running[rand.IntN(len(running))]
		go func() {
			_ = providers[member].CoreV1().Pods(mcsNS).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}()
		replaced++
	}
	tick.Stop()
	churnCPU := h.controllerManagerCPU() - cpu0
	elapsed := time.Since(start)
	for deadline := time.Now().Add(time.Minute); log.pending() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Second)
	}
	if n := log.pending(); n > 0 {
		fmt.Printf("%d provider changes not reflected in member3 after a minute; for example:\n", n)
		log.mu.Lock()
		shown := 0
		for key, st := range log.states {
			for _, x := range st {
				if !x.resolved && shown < 5 {
					cmu.Lock()
					fmt.Printf("  %s at %s: %q; member3 has %q\n", key, x.at.Format("15:04:05.000"), x.state, consumerState[key])
					cmu.Unlock()
					shown++
				}
			}
		}
		log.mu.Unlock()
	}
	log.mu.Lock()
	d := slices.Clone(log.measured)
	log.mu.Unlock()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	fmt.Printf("\nMultiClusterService CrossCluster: %d Services x 10 pods (member1+member2 -> member3), %d pod replacements in %s\n",
		services, replaced, elapsed.Round(time.Second))
	fmt.Printf("provider EndpointSlice change -> consumer slice reflects it (%d changes): p50 %s, p90 %s, p99 %s, max %s\n",
		len(d), pct(d, 0.50).Round(time.Millisecond), pct(d, 0.90).Round(time.Millisecond), pct(d, 0.99).Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	fmt.Printf("controller manager during the churn: %.0f%% of one core (%.1f CPU-s in %s), peak RSS %.0f MiB\n",
		100*churnCPU/elapsed.Seconds(), churnCPU, elapsed.Round(time.Second), h.controllerManagerRSS())
	b.ReportMetric(float64(pct(d, 0.99).Milliseconds()), "p99-ms")
}
