package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// schedulerSubsystem prefixes the scheduler's metrics, as karmada-scheduler's.
const schedulerSubsystem = "karmada_scheduler"

// ResultScheduled is the scheduler's result label for a successful attempt
// (Karmada's scheduler says "scheduled" where its controller manager says
// "success"); a failed one is ResultError, as elsewhere.
const ResultScheduled = "scheduled"

// ScheduleType says why a binding is scheduled: the scheduleType label.
type ScheduleType int

// Schedule types, Karmada's values.
const (
	// FirstSchedule: the binding has no placement decision yet.
	FirstSchedule ScheduleType = iota
	// ReconcileSchedule: anything else, such as a changed placement, a
	// requested reschedule or changed clusters.
	ReconcileSchedule
	// ScaleSchedule: only the binding's replicas changed since its last
	// decision.
	ScaleSchedule
	scheduleTypes
)

// String is the label value.
func (t ScheduleType) String() string {
	switch t {
	case FirstSchedule:
		return "FirstSchedule"
	case ScaleSchedule:
		return "ScaleSchedule"
	default:
		return "ReconcileSchedule"
	}
}

// Values of the scheduleStep label: the steps of the scheduling algorithm
// (internal/core/scheduler) that Flotilla times. Karmada's Score step has no
// separate counterpart: ranking is part of Flotilla's selection.
const (
	StepFilter         = "Filter"
	StepSelect         = "Select"
	StepAssignReplicas = "AssignReplicas"
)

// Values of the event label of queue_incoming_bindings_total: why a binding
// entered the scheduler's queue.
const (
	// EventBindingAdd: a binding was created (or listed at start).
	EventBindingAdd = "BindingAdd"
	// EventBindingUpdate: a binding changed, other than its placement.
	EventBindingUpdate = "BindingUpdate"
	// EventPolicyChanged: a binding's placement changed (its policy's).
	EventPolicyChanged = "PolicyChanged"
	// EventScheduleAttemptFailure: an attempt failed and is retried.
	EventScheduleAttemptFailure = "ScheduleAttemptFailure"
	// EventClusterNotReady: a cluster stopped being Ready; bindings are
	// scheduled again.
	EventClusterNotReady = "ClusterNotReady"
)

// Karmada named the scheduler's labels scheduleType and scheduleStep until
// its metrics were renamed to snake case (schedule_type, schedule_step);
// Flotilla carries both spellings with the same value, like the cluster
// metrics' two cluster labels.
var (
	scheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: schedulerSubsystem,
		Name:      "schedule_attempts_total",
		Help:      "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding, by result (scheduled or error) and scheduleType.",
	}, []string{"result", "scheduleType", "schedule_type"})
	e2eScheduling = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: schedulerSubsystem,
		Name:      "e2e_scheduling_duration_seconds",
		Help:      "Seconds from reading a binding to its placement written, by result (scheduled or error) and scheduleType.",
		Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result", "scheduleType", "schedule_type"})
	schedulingAlgorithm = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: schedulerSubsystem,
		Name:      "scheduling_algorithm_duration_seconds",
		Help:      "Seconds spent in one step of the scheduling algorithm, by scheduleStep: Filter, Select or AssignReplicas.",
		Buckets:   prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"scheduleStep", "schedule_step"})
	queueIncoming = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: schedulerSubsystem,
		Name:      "queue_incoming_bindings_total",
		Help:      "Number of bindings added to the scheduler's queue, by event.",
	}, []string{"event"})
)

// attempt holds the resolved series of one result and schedule type.
type attempt struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

var (
	attempts [2][scheduleTypes]attempt // [0]: scheduled, [1]: error
	steps    = map[string]prometheus.Observer{}
	incoming = map[string]prometheus.Counter{}
)

func init() {
	for i, result := range []string{ResultScheduled, ResultError} {
		for t := range scheduleTypes {
			attempts[i][t] = attempt{count: scheduleAttempts.WithLabelValues(result, t.String(), t.String()),
				duration: e2eScheduling.WithLabelValues(result, t.String(), t.String())}
		}
	}
	for _, s := range []string{StepFilter, StepSelect, StepAssignReplicas} {
		steps[s] = schedulingAlgorithm.WithLabelValues(s, s)
	}
	for _, e := range []string{EventBindingAdd, EventBindingUpdate, EventPolicyChanged, EventScheduleAttemptFailure, EventClusterNotReady} {
		incoming[e] = queueIncoming.WithLabelValues(e)
	}
}

func schedulerCollectors() []prometheus.Collector {
	return []prometheus.Collector{scheduleAttempts, e2eScheduling, schedulingAlgorithm, queueIncoming, pendingBindings}
}

// Values of the queue label of scheduler_pending_bindings: Karmada's three scheduling queues.
const (
	// QueueActive: bindings ready to be scheduled now.
	QueueActive = "active"
	// QueueBackoff: bindings whose last attempt failed with an error, waiting 1 s to 10 s.
	QueueBackoff = "backoff"
	// QueueUnschedulable: bindings whose last attempt found no placement, waiting at most
	// 5 minutes, or for a change of theirs or of a cluster.
	QueueUnschedulable = "unschedulable"
)

// PendingBindings is how many bindings one scheduler's queues hold at a moment.
type PendingBindings struct {
	Active, Backoff, Unschedulable int
}

// pendingBindings serves scheduler_pending_bindings{queue} (Karmada's gauge, subsystem
// scheduler, without the karmada_ prefix) as the sum over the sources added with
// AddPendingBindingsSource, read at each scrape.
var pendingBindings = &pendingCollector{desc: prometheus.NewDesc("scheduler_pending_bindings",
	"Number of pending bindings, by queue: active (ready to be scheduled), backoff (waiting after an error) and unschedulable (waiting after an attempt that found no placement).",
	[]string{"queue"}, nil)}

type pendingCollector struct {
	desc    *prometheus.Desc
	mu      sync.Mutex
	sources []*pendingSource
}

// pendingSource is one scheduler's report; its address identifies it (funcs cannot be
// compared).
type pendingSource struct {
	f func() PendingBindings
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := c.sources
	c.mu.Unlock()
	var sum PendingBindings
	for _, src := range sources {
		p := src.f()
		sum.Active += p.Active
		sum.Backoff += p.Backoff
		sum.Unschedulable += p.Unschedulable
	}
	for _, q := range []struct {
		name string
		n    int
	}{{QueueActive, sum.Active}, {QueueBackoff, sum.Backoff}, {QueueUnschedulable, sum.Unschedulable}} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(q.n), q.name)
	}
}

// AddPendingBindingsSource adds f, which reports one scheduler's queues (one per binding
// kind), to scheduler_pending_bindings, until the returned function removes it (when the
// scheduler stops). f is called at each scrape and must not block.
func AddPendingBindingsSource(f func() PendingBindings) (remove func()) {
	return pendingBindings.add(f)
}

func (c *pendingCollector) add(f func() PendingBindings) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	src := &pendingSource{f: f}
	c.sources = append(c.sources, src)
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sources = slices.DeleteFunc(slices.Clone(c.sources), func(s *pendingSource) bool { return s == src })
	}
}

// RegisterScheduler registers karmada-scheduler's metrics (prefixed
// karmada_scheduler_) in controller-runtime's registry. Idempotent.
func RegisterScheduler() { register(ctrlmetrics.Registry, schedulerCollectors()...) }

// ObserveScheduleAttempt records one scheduling attempt of type t that took
// d and returned err: karmada_scheduler_schedule_attempts_total and
// karmada_scheduler_e2e_scheduling_duration_seconds, with result scheduled
// or error.
func ObserveScheduleAttempt(t ScheduleType, err error, d time.Duration) {
	i := 0
	if err != nil {
		i = 1
	}
	if t < 0 || t >= scheduleTypes {
		t = ReconcileSchedule
	}
	a := attempts[i][t]
	a.count.Inc()
	a.duration.Observe(d.Seconds())
}

// ObserveScheduleStep records, in
// karmada_scheduler_scheduling_algorithm_duration_seconds, that one step of
// the algorithm (StepFilter, StepSelect or StepAssignReplicas) took d.
// Other steps are ignored. Its signature is scheduler.Input's StepTimer.
func ObserveScheduleStep(step string, d time.Duration) {
	if o, ok := steps[step]; ok {
		o.Observe(d.Seconds())
	}
}

// CountIncomingBindings adds n bindings that entered the scheduler's queue
// for event (one of the Event values; others are ignored) to
// karmada_scheduler_queue_incoming_bindings_total.
func CountIncomingBindings(event string, n int) {
	if c, ok := incoming[event]; ok {
		c.Add(float64(n))
	}
}
