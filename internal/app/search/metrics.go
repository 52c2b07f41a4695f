package search

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The search server's own metrics, on its /metrics (Karmada's karmada-search
// has none for its cache): what each member cache holds.
var (
	cachedObjectsDesc = metrics.NewDesc("flotilla_search_cached_objects",
		"Objects in the search cache, per member cluster and resource (<resource>.<group>).",
		[]string{"cluster", "resource"}, nil, metrics.ALPHA, "")
	cachedBytesDesc = metrics.NewDesc("flotilla_search_cached_bytes",
		"Bytes of JSON the search cache holds, per member cluster and resource (<resource>.<group>).",
		[]string{"cluster", "resource"}, nil, metrics.ALPHA, "")
)

// cacheCollector reports a Cache's contents at each scrape.
type cacheCollector struct {
	metrics.BaseStableCollector
	cache *Cache
}

func (c *cacheCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- cachedObjectsDesc
	ch <- cachedBytesDesc
}

func (c *cacheCollector) CollectWithStability(ch chan<- metrics.Metric) {
	for key, s := range c.cache.sizes() {
		ch <- metrics.NewLazyConstMetric(cachedObjectsDesc, metrics.GaugeValue, float64(s.objects), key.cluster, key.gvr.GroupResource().String())
		ch <- metrics.NewLazyConstMetric(cachedBytesDesc, metrics.GaugeValue, float64(s.bytes), key.cluster, key.gvr.GroupResource().String())
	}
}

var registerMetrics sync.Once

// registerCacheMetrics adds c's gauges to the server's /metrics (once per
// process).
func registerCacheMetrics(c *Cache) {
	registerMetrics.Do(func() { legacyregistry.CustomMustRegister(&cacheCollector{cache: c}) })
}

// cacheSize is what one member cache holds.
type cacheSize struct{ objects, bytes int }

// sizes counts each member cache's objects and their JSON bytes.
func (c *Cache) sizes() map[cacheKey]cacheSize {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[cacheKey]cacheSize, len(c.caches))
	for k, mc := range c.caches {
		var s cacheSize
		for _, obj := range mc.informer.GetStore().List() {
			if o, ok := obj.(*cachedObject); ok {
				s.objects++
				s.bytes += len(o.raw)
			}
		}
		out[k] = s
	}
	return out
}
