package health

import (
	"context"
	"net/http/httptest"
	"testing"
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
