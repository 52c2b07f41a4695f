package health

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// cache is a Syncer whose caches sync when synced is closed.
type cache struct{ synced chan struct{} }

func (c cache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

func TestReadyOnlyOnceTheCachesHaveSynced(t *testing.T) {
	c := cache{synced: make(chan struct{})}
	check := CachesSynced(c)
	if err := check(httptest.NewRequest("GET", "/readyz", nil)); err == nil {
		t.Fatal("ready before the caches synced")
	}
	close(c.synced)
	if err := check(httptest.NewRequest("GET", "/readyz", nil)); err != nil {
		t.Errorf("not ready after the caches synced: %v", err)
	}
}

func TestAGoneClientIsNotKeptWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/readyz", nil).WithContext(ctx)
	if err := CachesSynced(cache{synced: make(chan struct{})})(req); err == nil {
		t.Error("ready for a request whose client went away")
	}
}

func TestControllersRunningOnlyWhenLeading(t *testing.T) {
	elected := make(chan struct{})
	n := 0
	check := ControllersRunning(elected, 2, func() int { return n })
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err != nil {
		t.Errorf("a standby with no controllers running: %v, want ready", err)
	}
	close(elected)
	if err := check(req); err == nil || err.Error() != "0 of 2 controllers have started their workers" {
		t.Errorf("the leader with none running: %v, want not ready, naming the count", err)
	}
	n = 2
	if err := check(req); err != nil {
		t.Errorf("the leader with both running: %v, want ready", err)
	}
}

// newCountingManager is a Counting manager on an unreachable API server
// (nothing here lists anything) that serves no endpoints.
func newCountingManager(t *testing.T) *Manager {
	t.Helper()
	mgr, err := manager.New(&rest.Config{Host: "http://127.0.0.1:1"}, manager.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return Counting(mgr)
}

// noop is a reconciler that does nothing.
var noop = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })

// Controllers set up through a Counting manager are counted; nothing else
// added to it is.
func TestCountingCountsControllers(t *testing.T) {
	m := newCountingManager(t)
	for _, name := range []string{"a", "b"} {
		if err := builder.ControllerManagedBy(m).Named(name).For(&corev1.ConfigMap{}).Complete(noop); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add(manager.RunnableFunc(func(context.Context) error { return nil })); err != nil {
		t.Fatal(err)
	}
	if m.controllers != 2 {
		t.Errorf("counted %d controllers, want 2", m.controllers)
	}
}

// syncGate is a watch source that has synced once synced is closed.
type syncGate struct{ synced chan struct{} }

func (s syncGate) Start(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	return nil
}

func (s syncGate) WaitForSync(ctx context.Context) error {
	select {
	case <-s.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The leadership marker starts with the runnables that need the election,
// while a controller whose first list has not been replayed has not started
// its workers: the controllers check then holds readiness back.
func TestLeadingBeforeControllersStart(t *testing.T) {
	m := newCountingManager(t)
	src := syncGate{synced: make(chan struct{})}
	if err := builder.ControllerManagedBy(m).Named("leading-test").WatchesRawSource(src).
		WithOptions(queue.Options(m, 1)).Complete(noop); err != nil {
		t.Fatal(err)
	}
	leading, err := leadership(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Start(ctx) }()
	select {
	case <-leading:
	case <-time.After(10 * time.Second):
		t.Fatal("the leadership marker never started")
	}
	check := ControllersRunning(leading, m.controllers, m.queues.Running)
	req := httptest.NewRequest("GET", "/readyz", nil)
	if err := check(req); err == nil {
		t.Error("ready while the only controller waits for its first list")
	}
	close(src.synced)
	for deadline := time.Now().Add(10 * time.Second); check(req) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready 10s after the controller's source synced: %v", check(req))
		}
	}
}
