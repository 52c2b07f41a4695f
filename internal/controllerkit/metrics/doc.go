// Package metrics is Flotilla's Prometheus vocabulary: the metrics Karmada's
// components serve, under Karmada's names and labels, so that dashboards and
// alerts written for Karmada read Flotilla unchanged. Each metric has a small
// typed record function; controllers call them and never touch a collector.
//
// The collectors join controller-runtime's registry
// (sigs.k8s.io/controller-runtime/pkg/metrics.Registry), which a manager
// serves on --metrics-bind-address next to controller-runtime's own
// workqueue, reconcile and client-go REST client metrics. A process registers
// the sets it serves, as Karmada's components do: RegisterControllerManager
// (karmada-controller-manager's), RegisterScheduler (karmada-scheduler's,
// prefixed karmada_scheduler_) and RegisterAgent (karmada-agent's). Recording
// into a set that is not registered is harmless; it is simply not served.
//
// Series with a fixed label set are resolved once, when the package loads,
// so a record on the hot path is one atomic update with no allocation; only
// the per-cluster series look their labels up, once per status sync.
package metrics

import (
	"errors"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Values of the result label of Karmada's controller-manager metrics: an
// operation either succeeded or returned an error.
const (
	ResultSuccess = "success"
	ResultError   = "error"
)

// millisecondBuckets are Karmada's buckets for controller-manager
// durations: 1 ms doubling to about 2 s (12 buckets, then +Inf).
func millisecondBuckets() []float64 { return prometheus.ExponentialBuckets(0.001, 2, 12) }

// byResult is a histogram with a result label, both series resolved.
type byResult struct{ success, err prometheus.Observer }

func newByResult(v *prometheus.HistogramVec) byResult {
	return byResult{success: v.WithLabelValues(ResultSuccess), err: v.WithLabelValues(ResultError)}
}

func (b byResult) observe(err error, d time.Duration) {
	if err != nil {
		b.err.Observe(d.Seconds())
		return
	}
	b.success.Observe(d.Seconds())
}

// register adds collectors to r; registering one again (a second manager in
// the same process, tests) is not an error.
func register(r prometheus.Registerer, cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
				continue
			}
			panic(err) // a name or label clash between two collectors: a programming error
		}
	}
}

// controllerManagerCollectors are karmada-controller-manager's metrics.
func controllerManagerCollectors() []prometheus.Collector {
	return slices.Concat(clusterCollectors(), propagationCollectors(), autoscalingCollectors())
}

// agentCollectors are karmada-agent's metrics.
func agentCollectors() []prometheus.Collector {
	return append(clusterCollectors(), workSyncWorkload)
}

// RegisterControllerManager registers karmada-controller-manager's metrics
// in controller-runtime's registry: the cluster status gauges, the
// propagation durations and counters, and the (Cron)FederatedHPA
// durations. Idempotent.
func RegisterControllerManager() { register(ctrlmetrics.Registry, controllerManagerCollectors()...) }

// RegisterAgent registers karmada-agent's metrics in controller-runtime's
// registry: the cluster status gauges of its cluster and
// work_sync_workload_duration_seconds. Idempotent.
func RegisterAgent() { register(ctrlmetrics.Registry, agentCollectors()...) }
