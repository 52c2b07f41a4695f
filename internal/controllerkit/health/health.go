// Package health gives Flotilla's controller-runtime managers (the
// controller manager, the scheduler, the agent) their /healthz and /readyz
// checks, served on --health-probe-bind-address.
package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// CacheSyncWait bounds how long one /readyz request waits for the caches.
const CacheSyncWait = time.Second

// errNotSynced is the failing readiness check's answer.
var errNotSynced = errors.New("the informer caches have not synced yet")

// Manager is a controller-runtime manager that counts the controllers set
// up through it (pass it to SetupWithManager), for Add's readiness check,
// and owns their queues' Group (queue.Options finds it through Queues).
type Manager struct {
	manager.Manager
	controllers int
	queues      *queue.Group
}

// Counting wraps mgr, with a new queue.Group.
func Counting(mgr manager.Manager) *Manager { return &Manager{Manager: mgr, queues: queue.NewGroup()} }

// Queues is the Group of the queues of the controllers set up through m.
func (m *Manager) Queues() *queue.Group { return m.queues }

// Controllers is how many controllers have been set up through m.
func (m *Manager) Controllers() int { return m.controllers }

// Add counts r when it is a controller, and adds it to the manager.
func (m *Manager) Add(r manager.Runnable) error {
	if _, ok := r.(controller.Controller); ok {
		m.controllers++
	}
	return m.Manager.Add(r)
}

// Add adds the manager's probes, once every controller is set up: /healthz
// answers 200 while the process serves (a ping); /readyz passes once the
// manager's informer caches have started and synced, so that a process
// which cannot list what it watches (no access to the control plane yet,
// missing RBAC) is not ready, and, on the leader, once every controller
// set up through m has started its workers (ControllersRunning; each is
// built with queue.Options). leaderElection says whether the
// manager runs with leader election: without it the process leads from
// the start, so readiness waits for the workers from the start. Errors:
// the manager refused a check.
func Add(m *Manager, leaderElection bool) error {
	if err := m.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := m.AddReadyzCheck("informer-caches", CachesSynced(m.GetCache())); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	var leading <-chan struct{}
	if leaderElection {
		var err error
		if leading, err = leadership(m.Manager); err != nil {
			return err
		}
	} else {
		led := make(chan struct{})
		close(led)
		leading = led
	}
	if err := m.AddReadyzCheck("controllers", ControllersRunning(leading, m.controllers, m.queues.Running)); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	return nil
}

// leadership returns a channel closed the moment mgr starts the runnables
// that need the election, that is once this process has won it. Until
// then the process is a standby (or still warming up: the manager starts
// that group only after its caches and warm-up runnables, such as the
// detector's template lists, are done). Errors: the manager refused the
// runnable.
func leadership(mgr manager.Manager) (<-chan struct{}, error) {
	leading := make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		close(leading)
		<-ctx.Done()
		return nil
	})); err != nil {
		return nil, fmt.Errorf("add the leadership marker: %w", err)
	}
	return leading, nil
}

// Syncer is the part of a cache CachesSynced asks (controller-runtime's
// cache.Cache).
type Syncer interface {
	WaitForCacheSync(ctx context.Context) bool
}

// CachesSynced is a readiness check that passes once c has started and
// every informer it holds has synced, waiting at most CacheSyncWait per
// request.
func CachesSynced(c Syncer) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), CacheSyncWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errNotSynced
		}
		return nil
	}
}

// errNotRunning is the failing controllers check's answer.
type errNotRunning struct{ running, want int }

func (e errNotRunning) Error() string {
	return fmt.Sprintf("%d of %d controllers have started their workers", e.running, e.want)
}

// ControllersRunning is a readiness check for a manager that runs want
// controllers: it passes until leading is closed (a standby is ready once
// its caches are, so that a rolling update can go on) and then, once the
// process leads (at once without leader election), only when running()
// reports at least want controllers with their workers started.
// A controller starts its workers only after each of its watches has
// replayed its informer's first list, which after a restart with many
// objects comes seconds after the caches have synced: until then the
// process is not yet acting on changes.
func ControllersRunning(leading <-chan struct{}, want int, running func() int) healthz.Checker {
	return func(*http.Request) error {
		select {
		case <-leading:
		default:
			return nil
		}
		if n := running(); n < want {
			return errNotRunning{n, want}
		}
		return nil
	}
}
