package bench

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

var cronGVR = schema.GroupVersionResource{Group: "autoscaling.karmada.io", Version: "v1alpha1", Resource: "cronfederatedhpas"}

// controllerManagerCPU is the CPU seconds (user+system) the stack's
// controller manager has used so far.
func (h *harness) controllerManagerCPU() float64 { return cpuSeconds(h.controllerManagerProc()) }

// scaledSeen records, per Deployment name, when a watch first saw it with
// spec.replicas == want.
type scaledSeen struct {
	mu   sync.Mutex
	want int32
	seen map[string]time.Time
}

func (s *scaledSeen) watch(b *testing.B, c kubernetes.Interface) {
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := f.Apps().V1().Deployments().Informer()
	note := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok || d.Spec.Replicas == nil || *d.Spec.Replicas != s.want || !strings.HasPrefix(d.Name, "cron-") {
			return
		}
		now := time.Now()
		s.mu.Lock()
		if _, ok := s.seen[d.Name]; !ok {
			s.seen[d.Name] = now
		}
		s.mu.Unlock()
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: note, UpdateFunc: func(_, n any) { note(n) }})
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
}

func (s *scaledSeen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// after returns each recorded time minus t, sorted, and the latest.
func (s *scaledSeen) after(t time.Time) ([]time.Duration, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, at := range s.seen {
		out = append(out, at.Sub(t))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if len(out) == 0 {
		return nil, 0
	}
	return out, out[len(out)-1]
}

// BenchmarkCronFederatedHPA: 1,000 CronFederatedHPAs, one rule each, all
// due at the same minute, each scaling its own Deployment propagated to the
// 3 members. Reports the execution skew and the time until every member
// copy has the new count, and the controller manager's CPU while the 1,000
// wait for their minute.
func BenchmarkCronFederatedHPA(b *testing.B) {
	h := startHarness(b)
	h.stopHops()
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_CRON")); err == nil {
		n = v
	}
	ctx := context.Background()
	for range b.N {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("cron-%04d", i))
		}
		parallel(names, h.create)
		h.latencies(names, 10*time.Minute)
		target := replicas + 1
		template := &scaledSeen{want: target, seen: map[string]time.Time{}}
		template.watch(b, h.cp)
		members := make([]*scaledSeen, len(h.members))
		for i, m := range h.members {
			members[i] = &scaledSeen{want: target, seen: map[string]time.Time{}}
			members[i].watch(b, m)
		}

		// The step watches (every binding and Work, three watchers more
		// on the control plane) cost the measured path time: only with
		// BENCH_STEPS=1.
		var steps *scaleSteps
		if os.Getenv("BENCH_STEPS") != "" {
			steps = h.watchScaleSteps(target)
		}

		// The minute every rule is due: far enough ahead to create the
		// objects and measure the idle cost first.
		due := time.Now().Add(120 * time.Second).Truncate(time.Minute).Add(time.Minute)
		schedule := fmt.Sprintf("%d %d * * *", due.UTC().Minute(), due.UTC().Hour())
		createStart := time.Now()
		parallel(names, func(name string) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "CronFederatedHPA",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{
					"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
					"rules":          []any{map[string]any{"name": "up", "schedule": schedule, "timeZone": "UTC", "targetReplicas": int64(target)}},
				},
			}}
			if _, err := h.dyn.Resource(cronGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				b.Errorf("create CronFederatedHPA %s: %v", name, err)
			}
		})
		created := time.Since(createStart)
		// Idle: let the creates settle (their first status writes may wait
		// up to statusgate.StatusMaxDefer), then measure a quiet stretch.
		time.Sleep(40 * time.Second)
		idleWindow := time.Until(due) - 5*time.Second
		cpu0 := h.controllerManagerCPU()
		time.Sleep(idleWindow)
		idleCPU := (h.controllerManagerCPU() - cpu0) / idleWindow.Seconds()

		cpu1 := h.controllerManagerCPU()
		procs0 := h.processCPU()
		h.profileWindow("cronfederatedhpa", 20)
		writes0, err := requestCounts(h.cp, false)
		if err != nil {
			b.Logf("control-plane write counts before the minute: %v (the writes below are totals)", err)
		}
		h.waitFor("every member copy scaled", 5*time.Minute, func() bool {
			for _, m := range members {
				if m.count() < n {
					return false
				}
			}
			return true
		})
		runCPU := h.controllerManagerCPU() - cpu1
		procs1 := h.processCPU()
		writes1, err := requestCounts(h.cp, false)
		if err != nil {
			b.Logf("control-plane write counts after the last copy: %v", err)
		}
		writeTotal, writeLines := diffWrites(writes0, writes1)
		tmpl, _ := template.after(due)
		var allMembers time.Duration
		for _, m := range members {
			if _, last := m.after(due); last > allMembers {
				allMembers = last
			}
		}
		// executionTime - scheduleTime as the status records it (whole
		// seconds: metav1.Time).
		// The histories are status reports: they wait behind the status gate
		// (statusgate.StatusMaxDefer) while propagation is busy.
		var recorded []time.Duration
		var list *unstructured.UnstructuredList
		h.waitFor("every run in the execution histories", 2*time.Minute, func() bool {
			var err error
			list, err = h.dyn.Resource(cronGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			done := 0
			for _, item := range list.Items {
				execs, _, _ := unstructured.NestedSlice(item.Object, "status", "executionHistories")
				for _, e := range execs {
					if runs, _, _ := unstructured.NestedSlice(e.(map[string]any), "successfulExecutions"); len(runs) > 0 {
						done++
					}
				}
			}
			return done == n
		})
		historiesIn := time.Since(due)
		for _, item := range list.Items {
			execs, _, _ := unstructured.NestedSlice(item.Object, "status", "executionHistories")
			for _, e := range execs {
				runs, _, _ := unstructured.NestedSlice(e.(map[string]any), "successfulExecutions")
				for _, r := range runs {
					m := r.(map[string]any)
					s, _ := time.Parse(time.RFC3339, fmt.Sprint(m["scheduleTime"]))
					x, _ := time.Parse(time.RFC3339, fmt.Sprint(m["executionTime"]))
					recorded = append(recorded, x.Sub(s))
				}
			}
		}
		sort.Slice(recorded, func(i, j int) bool { return recorded[i] < recorded[j] })
		if len(recorded) != n {
			b.Errorf("%d successful runs recorded, want %d", len(recorded), n)
		}
		ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
		b.ReportMetric(float64(pct(tmpl, 0.99).Milliseconds()), "skew-p99-ms")
		b.ReportMetric(allMembers.Seconds(), "all-members-s")
		b.ReportMetric(idleCPU*100, "idle-cpu-%")
		fmt.Printf("\n%d CronFederatedHPAs (created in %.1fs), one rule each, all due at %s; Deployments propagated to 3 members, scaled %d -> %d\n",
			n, created.Seconds(), due.UTC().Format("15:04:05"), replicas, target)
		fmt.Printf("\n| measure | p50 | p99 | last |\n|---|---|---|---|\n")
		fmt.Printf("| skew: template scaled (watch) - scheduled minute | %s | %s | %s |\n", ms(pct(tmpl, .5)), ms(pct(tmpl, .99)), ms(tmpl[len(tmpl)-1]))
		fmt.Printf("| skew: executionTime - scheduleTime (status, whole seconds) | %s | %s | %s |\n", ms(pct(recorded, .5)), ms(pct(recorded, .99)), ms(recorded[len(recorded)-1]))
		fmt.Printf("| member copy scaled (watch), each of 3 per template | %s | %s | %s |\n", ms(pct(memberTimes(members, due), .5)), ms(pct(memberTimes(members, due), .99)), ms(allMembers))
		if steps != nil {
			fmt.Printf("\nWhere the time goes (first seen on the control plane, after the scheduled minute):\n\n%s", steps.table(due))
		}
		fmt.Printf("\nevery member copy (%d) has the new count %.1fs after the scheduled minute; every run is in its history %.1fs after it\n", 3*n, allMembers.Seconds(), historiesIn.Seconds())
		fmt.Printf("controller-manager CPU: idle with %d CronFederatedHPAs waiting %.2f%% of a core over %.0fs; %.1f CPU-s from the minute until every member copy was scaled\n",
			n, idleCPU*100, idleWindow.Seconds(), runCPU)
		fmt.Printf("from the minute to the last member copy: %.0f control-plane writes (%s); CPU %s\n",
			writeTotal, strings.Join(writeLines, ", "), cpuDiff(procs0, procs1))
		fmt.Printf("CPU used per component (user+system, whole run):\n%s", h.cpuByComponent())
	}
}

// parallel calls f for every name from 32 goroutines.
func parallel(names []string, f func(string)) {
	work := make(chan string)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				f(n)
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
}

func memberTimes(members []*scaledSeen, due time.Time) []time.Duration {
	var all []time.Duration
	for _, m := range members {
		d, _ := m.after(due)
		all = append(all, d...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	return all
}

// scaleSteps records when each step of a replica change was first seen on
// the control plane: the binding's spec.replicas, its scheduled clusters'
// replicas, and each Work's manifest.
type scaleSteps struct {
	mu    sync.Mutex
	first map[string]map[string]time.Time // step -> object -> time
}

var scaleStepNames = []string{"binding replicas", "binding scheduled", "work rendered"}

func (s *scaleSteps) note(step, key string) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first[step] == nil {
		s.first[step] = map[string]time.Time{}
	}
	if _, ok := s.first[step][key]; !ok {
		s.first[step][key] = now
	}
}

func (s *scaleSteps) table(due time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("| step | count | p50 | p99 | last |\n|---|---|---|---|---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
	for _, step := range scaleStepNames {
		var d []time.Duration
		for _, t := range s.first[step] {
			d = append(d, t.Sub(due))
		}
		if len(d) == 0 {
			continue
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", step, len(d), ms(pct(d, .5)), ms(pct(d, .99)), ms(d[len(d)-1]))
	}
	return b.String()
}

// watchScaleSteps watches ResourceBindings and Works of the cron-* templates
// for the new replica count.
func (h *harness) watchScaleSteps(target int32) *scaleSteps {
	s := &scaleSteps{first: map[string]map[string]time.Time{}}
	f := dynamicinformer.NewDynamicSharedInformerFactory(h.dyn, 0)
	rb := f.ForResource(schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}).Informer()
	work := f.ForResource(schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha1", Resource: "works"}).Informer()
	onRB := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || !strings.HasPrefix(u.GetName(), "cron-") {
			return
		}
		if r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); r == int64(target) {
			s.note("binding replicas", u.GetName())
		}
		clusters, _, _ := unstructured.NestedSlice(u.Object, "spec", "clusters")
		if len(clusters) > 0 {
			if r, _, _ := unstructured.NestedInt64(clusters[0].(map[string]any), "replicas"); r == int64(target) {
				s.note("binding scheduled", u.GetName())
			}
		}
	}
	onWork := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		manifests, _, _ := unstructured.NestedSlice(u.Object, "spec", "workload", "manifests")
		for _, m := range manifests {
			mm := m.(map[string]any)
			name, _, _ := unstructured.NestedString(mm, "metadata", "name")
			if r, _, _ := unstructured.NestedInt64(mm, "spec", "replicas"); strings.HasPrefix(name, "cron-") && r == int64(target) {
				s.note("work rendered", u.GetNamespace()+"/"+name)
			}
		}
	}
	_, _ = rb.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onRB, UpdateFunc: func(_, n any) { onRB(n) }})
	_, _ = work.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onWork, UpdateFunc: func(_, n any) { onWork(n) }})
	stop := make(chan struct{})
	h.b.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return s
}
