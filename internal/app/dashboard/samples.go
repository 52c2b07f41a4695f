package dashboard

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/klog/v2"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// plottedHistograms are the propagation path's latency histograms, by
// stage (Karmada's metric names): scheduling, rendering the Works, and
// applying a Work to its member.
var plottedHistograms = []struct{ Metric, Stage string }{
	{"karmada_scheduler_e2e_scheduling_duration_seconds", "scheduling a binding"},
	{"binding_sync_work_duration_seconds", "rendering a binding's Works"},
	{"work_sync_workload_duration_seconds", "applying a Work to its member"},
}

// queueDepthMetric is controller-runtime's gauge of each controller's queue.
const queueDepthMetric = "workqueue_depth"

// samples keeps the last few minutes of what the plots draw: the
// FederatedHPAs' replicas and the components' metrics, one entry per
// scrape (ring of max entries).
type samples struct {
	max int
	mu  sync.Mutex
	// hpa is per FederatedHPA ("namespace/name").
	hpa map[string][]hpaSample
	// scrapes are per component name.
	scrapes map[string][]scrape
}

type hpaSample struct {
	At               time.Time
	Current, Desired int32
}

// scrape is one read of a component's metrics: each plotted histogram's
// cumulative buckets summed over its label sets, and each queue's depth.
type scrape struct {
	At      time.Time
	Hist    map[string]histogram
	Queues  map[string]float64
	Failure string
}

// histogram is cumulative: Buckets[i] observations at most Bounds[i].
type histogram struct {
	Bounds  []float64
	Buckets []float64
	Count   float64
}

func newSamples(max int) *samples {
	return &samples{max: max, hpa: map[string][]hpaSample{}, scrapes: map[string][]scrape{}}
}

func (s *samples) addHPA(key string, v hpaSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hpa[key] = ring(s.hpa[key], v, s.max)
}

// ring appends v to l and keeps the last max entries.
func ring[T any](l []T, v T, max int) []T {
	l = append(l, v)
	if len(l) > max {
		l = l[len(l)-max:]
	}
	return l
}

func (s *samples) hpaHistory(key string) []hpaSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hpaSample(nil), s.hpa[key]...)
}

func (s *samples) addScrape(component string, v scrape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes[component] = ring(s.scrapes[component], v, s.max)
}

func (s *samples) scrapesOf(component string) []scrape {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]scrape(nil), s.scrapes[component]...)
}

// sample records, every ScrapeInterval until ctx ends, each FederatedHPA's
// current and desired replicas and each component's metrics.
func (s *Server) sample(ctx context.Context) {
	hc := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(s.opts.ScrapeInterval)
	defer tick.Stop()
	for {
		s.sampleOnce(ctx, hc)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Server) sampleOnce(ctx context.Context, hc *http.Client) {
	now := time.Now()
	list := &autoscalingv1alpha1.FederatedHPAList{}
	if err := s.ownClient.List(ctx, list); err == nil {
		for _, h := range list.Items {
			s.samples.addHPA(h.Namespace+"/"+h.Name, hpaSample{At: now, Current: h.Status.CurrentReplicas, Desired: h.Status.DesiredReplicas})
		}
	}
	for _, m := range s.opts.MetricsURLs {
		name, url, _ := strings.Cut(m, "=")
		sc, err := scrapeOnce(ctx, hc, url)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("scrape failed", "component", name, "err", err)
			sc = scrape{Failure: err.Error()}
		}
		sc.At = now
		s.samples.addScrape(name, sc)
	}
}

func scrapeOnce(ctx context.Context, hc *http.Client, url string) (scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return scrape{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return scrape{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return parseScrape(resp.Body)
}

// parseScrape reads the Prometheus text format and keeps the plotted
// histograms (summed over their label sets) and the queue depths.
func parseScrape(r io.Reader) (scrape, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return scrape{}, fmt.Errorf("parse metrics: %w", err)
	}
	sc := scrape{Hist: map[string]histogram{}, Queues: map[string]float64{}}
	for _, h := range plottedHistograms {
		f := families[h.Metric]
		if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		var sum histogram
		for _, m := range f.GetMetric() {
			hist := m.GetHistogram()
			if sum.Bounds == nil {
				for _, b := range hist.GetBucket() {
					sum.Bounds = append(sum.Bounds, b.GetUpperBound())
				}
				sum.Buckets = make([]float64, len(sum.Bounds))
			}
			for i, b := range hist.GetBucket() {
				if i < len(sum.Buckets) {
					sum.Buckets[i] += float64(b.GetCumulativeCount())
				}
			}
			sum.Count += float64(hist.GetSampleCount())
		}
		sc.Hist[h.Metric] = sum
	}
	if f := families[queueDepthMetric]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" {
					sc.Queues[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return sc, nil
}

// delta is the observations between two cumulative readings of the same
// histogram (a reset, such as a restart, counts from zero).
func (h histogram) delta(prev histogram) histogram {
	if len(prev.Buckets) != len(h.Buckets) || prev.Count > h.Count {
		return h
	}
	d := histogram{Bounds: h.Bounds, Buckets: make([]float64, len(h.Buckets)), Count: h.Count - prev.Count}
	for i := range h.Buckets {
		d.Buckets[i] = h.Buckets[i] - prev.Buckets[i]
	}
	return d
}

// quantile is q (0..1) of a cumulative histogram, interpolated within
// its bucket as Prometheus' histogram_quantile does; NaN without
// observations, the last finite bound when q falls in the +Inf bucket.
func (h histogram) quantile(q float64) float64 {
	if h.Count == 0 || len(h.Bounds) == 0 {
		return math.NaN()
	}
	rank := q * h.Count
	i := sort.Search(len(h.Buckets), func(i int) bool { return h.Buckets[i] >= rank })
	if i >= len(h.Bounds) {
		return h.Bounds[len(h.Bounds)-1]
	}
	if math.IsInf(h.Bounds[i], 1) {
		if i == 0 {
			return 0
		}
		return h.Bounds[i-1]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.Bounds[i-1], h.Buckets[i-1]
	}
	in := h.Buckets[i] - below
	if in <= 0 {
		return h.Bounds[i]
	}
	return lower + (h.Bounds[i]-lower)*(rank-below)/in
}

// seconds formats a duration in seconds for a plot's labels.
func seconds(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v < 0.001:
		return strconv.FormatFloat(v*1e6, 'f', 0, 64) + " µs"
	case v < 1:
		return strconv.FormatFloat(v*1e3, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(v, 'f', 2, 64) + " s"
	}
}
