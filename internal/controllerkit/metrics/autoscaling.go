package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of federatedhpa_pull_metrics_duration_seconds' metricType label:
// which metrics API the FederatedHPA controller asked, named as Karmada
// names them.
const (
	// MetricTypeResource is a pod resource metric (metrics.k8s.io).
	MetricTypeResource = "ResourceMetric"
	// MetricTypeRaw is a per-pod custom metric (custom.metrics.k8s.io).
	MetricTypeRaw = "RawMetric"
	// MetricTypeObject is an object's custom metric (custom.metrics.k8s.io).
	MetricTypeObject = "ObjectMetric"
	// MetricTypeExternal is an external metric (external.metrics.k8s.io).
	MetricTypeExternal = "ExternalMetric"
)

// federatedHPABuckets are Karmada's FederatedHPA buckets: 10 ms doubling to
// about 20 s (12 buckets, then +Inf); a sync asks the members through the
// metrics adapter.
func federatedHPABuckets() []float64 { return prometheus.ExponentialBuckets(0.01, 2, 12) }

var (
	cronProcess = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cronfederatedhpa_process_duration_seconds",
		Help:    "Seconds to process one CronFederatedHPA (plan its rules, run the due ones, write its status), by result: success or error.",
		Buckets: millisecondBuckets(),
	}, []string{"result"})
	cronRule = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cronfederatedhpa_rule_process_duration_seconds",
		Help:    "Seconds to run one CronFederatedHPA rule (scale its target or set its FederatedHPA's bounds), by result: success or error.",
		Buckets: millisecondBuckets(),
	}, []string{"result"})
	federatedHPAProcess = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "federatedhpa_process_duration_seconds",
		Help:    "Seconds to process one FederatedHPA sync (read the target and the metrics, rescale, write the status), by result: success or error.",
		Buckets: federatedHPABuckets(),
	}, []string{"result"})
	federatedHPAPull = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "federatedhpa_pull_metrics_duration_seconds",
		Help:    "Seconds the FederatedHPA controller took to pull one metric from the control plane's metrics APIs, by result (success or error) and metricType.",
		Buckets: federatedHPABuckets(),
	}, []string{"result", "metricType"})
)

var (
	cronProcessBy         = newByResult(cronProcess)
	cronRuleBy            = newByResult(cronRule)
	federatedHPAProcessBy = newByResult(federatedHPAProcess)
	federatedHPAPullBy    = map[string]byResult{}
)

func init() {
	for _, t := range []string{MetricTypeResource, MetricTypeRaw, MetricTypeObject, MetricTypeExternal} {
		federatedHPAPullBy[t] = byResult{success: federatedHPAPull.WithLabelValues(ResultSuccess, t), err: federatedHPAPull.WithLabelValues(ResultError, t)}
	}
}

func autoscalingCollectors() []prometheus.Collector {
	return []prometheus.Collector{cronProcess, cronRule, federatedHPAProcess, federatedHPAPull}
}

// ObserveCronFederatedHPAProcess records, in
// cronfederatedhpa_process_duration_seconds (result success or error), that
// processing one CronFederatedHPA took d and returned err.
func ObserveCronFederatedHPAProcess(err error, d time.Duration) { cronProcessBy.observe(err, d) }

// ObserveCronFederatedHPARule records, in
// cronfederatedhpa_rule_process_duration_seconds (result success or error),
// that running one CronFederatedHPA rule took d and returned err.
func ObserveCronFederatedHPARule(err error, d time.Duration) { cronRuleBy.observe(err, d) }

// ObserveFederatedHPAProcess records, in
// federatedhpa_process_duration_seconds (result success or error), that one
// FederatedHPA sync took d and returned err.
func ObserveFederatedHPAProcess(err error, d time.Duration) { federatedHPAProcessBy.observe(err, d) }

// ObserveFederatedHPAPullMetrics records, in
// federatedhpa_pull_metrics_duration_seconds, that pulling one metric of
// metricType (MetricTypeResource, MetricTypeRaw, MetricTypeObject or
// MetricTypeExternal) took d and returned err. Other types are ignored.
func ObserveFederatedHPAPullMetrics(metricType string, err error, d time.Duration) {
	if b, ok := federatedHPAPullBy[metricType]; ok {
		b.observe(err, d)
	}
}
