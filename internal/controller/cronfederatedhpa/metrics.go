package cronfederatedhpa

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Karmada's CronFederatedHPA metrics, served on the controller manager's
// --metrics-bind-address. result is "success" or "error".
var (
	processDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_cronfederatedhpa_process_duration_seconds",
		Help:    "Seconds to process one CronFederatedHPA object: plan its rules, run the due ones and write its status.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	ruleDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_cronfederatedhpa_rule_process_duration_seconds",
		Help:    "Seconds to run one CronFederatedHPA rule: scale its target or set its FederatedHPA's bounds.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
)

func init() {
	metrics.Registry.MustRegister(processDuration, ruleDuration)
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}
