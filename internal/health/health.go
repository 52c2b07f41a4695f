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

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// CacheSyncWait bounds how long one /readyz request waits for the caches.
const CacheSyncWait = time.Second

// errNotSynced is the failing readiness check's answer.
var errNotSynced = errors.New("the informer caches have not synced yet")

// Add adds the manager's probes: /healthz answers 200 while the process
// serves (a ping), /readyz only once the manager's informer caches have
// started and synced, so that a process which cannot list what it watches
// (no access to the control plane yet, missing RBAC) is not ready. Errors:
// the manager refused a check.
func Add(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informer-caches", CachesSynced(mgr.GetCache())); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	return nil
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
