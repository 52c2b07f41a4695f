package metricsadapter

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	cmv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"k8s.io/metrics/pkg/apis/external_metrics"
	emv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/flotilla-io/flotilla/internal/core/hpa"
)

// customMetrics serves custom.metrics.k8s.io and external.metrics.k8s.io
// across the members:
//   - an object's metric (by name) is the sum of the values the members
//     give for objects of that name;
//   - pods' metrics (by selector) are merged by pod, asking only the
//     clusters that hold matching pods; a pod name in several clusters gets
//     the sum, unless the selector names one cluster (hpa.QueryFromClusterLabel),
//     as the FederatedHPA controller does for such pods;
//   - other objects' metrics by selector are merged by object name, summed;
//   - external metrics are the members' series put together (an HPA sums
//     them, so a queue split over clusters counts whole).
//
// A member that fails or passes the timeout is left out and logged; when no
// member answers, the query fails with the first member's error (NotFound
// when none has the metric).
type customMetrics struct {
	clusters *clusterSet
	pods     *resourceMetrics
}

var podsGR = schema.GroupResource{Resource: "pods"}

func (p *customMetrics) members(ctx context.Context) (map[string]*member, []string) {
	ms := p.clusters.readyByName(ctx)
	names := make([]string, 0, len(ms))
	for name := range ms {
		names = append(names, name)
	}
	sort.Strings(names)
	return ms, names
}

// holding returns the clusters whose pod cache has a pod of namespace that
// selector matches.
func (p *customMetrics) holding(ctx context.Context, namespace string, selector labels.Selector) []string {
	var out []string
	for _, m := range p.clusters.ready(ctx) {
		for _, o := range objects(m.pods, namespace) {
			if selector.Matches(labels.Set(o.(*metav1.PartialObjectMetadata).Labels)) {
				out = append(out, m.name)
				break
			}
		}
	}
	return out
}

// kind maps a custom metrics GroupResource to the kind the member's client
// wants, through the member's discovery.
func kind(m *member, gr schema.GroupResource) (schema.GroupKind, error) {
	if gr == podsGR {
		return schema.GroupKind{Kind: "Pod"}, nil
	}
	gvk, err := m.mapper.KindFor(gr.WithVersion(""))
	if err != nil {
		return schema.GroupKind{}, apierrors.NewNotFound(gr, "")
	}
	return gvk.GroupKind(), nil
}

func (p *customMetrics) metricsInterface(m *member, info provider.CustomMetricInfo, namespace string) interface {
	GetForObject(schema.GroupKind, string, string, labels.Selector) (*cmv1beta2.MetricValue, error)
	GetForObjects(schema.GroupKind, labels.Selector, string, labels.Selector) (*cmv1beta2.MetricValueList, error)
} {
	if info.Namespaced {
		return m.custom.NamespacedMetrics(namespace)
	}
	return m.custom.RootScopedMetrics()
}

// firstErr returns the first error of errs in cluster order, preferring one
// that is not NotFound.
func firstErr(errs map[string]error, order []string, fallback error) error {
	var nf error
	for _, c := range order {
		if err, ok := errs[c]; ok {
			if apierrors.IsNotFound(err) {
				if nf == nil {
					nf = err
				}
				continue
			}
			return fmt.Errorf("member cluster %s: %w", c, err)
		}
	}
	if nf != nil {
		return nf
	}
	return fallback
}

type answer[T any] struct {
	v   T
	err error
}

// ask runs query on every cluster of names in parallel and returns the
// values of those that answered and the errors of the others. A failure
// other than NotFound (the member has no such metric or object) is logged:
// that member is left out of the answer.
func ask[T any](left *leftOut, names []string, what string, query func(ctx context.Context, cluster string) (T, error)) (map[string]T, map[string]error) {
	res := run(left, names, what, func(ctx context.Context, c string) (answer[T], error) {
		v, err := query(ctx, c)
		if err != nil && !apierrors.IsNotFound(err) && !isNoMatch(err) {
			left.failed(c, what, err)
		} else {
			left.answered(c)
		}
		return answer[T]{v: v, err: err}, nil
	}, false)
	vals, errs := map[string]T{}, map[string]error{}
	for _, c := range names {
		switch a := res[c]; {
		case a.err != nil:
			errs[c] = a.err
		default:
			vals[c] = a.v
		}
	}
	return vals, errs
}

func isNoMatch(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no matches for kind")
}

// GetMetricByName implements provider.CustomMetricsProvider: the sum over
// the members of the metric of the object name.
func (p *customMetrics) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	ms, names := p.members(ctx)
	if info.GroupResource == podsGR {
		if c, err := (podLister{r: p.pods, namespace: name.Namespace}).Get(name.Name); err == nil {
			names = []string{c.(*metav1.PartialObjectMetadata).Annotations[QueryFromClusterAnnotation]}
		}
	}
	vals, errs := ask(&p.clusters.left, names, "custom metric "+info.Metric, func(_ context.Context, c string) (*cmv1beta2.MetricValue, error) {
		gk, err := kind(ms[c], info.GroupResource)
		if err != nil {
			return nil, err
		}
		return p.metricsInterface(ms[c], info, name.Namespace).GetForObject(gk, name.Name, info.Metric, metricSelector)
	})
	if len(vals) == 0 {
		return nil, firstErr(errs, names, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name))
	}
	var sum *custom_metrics.MetricValue
	for _, c := range names {
		v, ok := vals[c]
		if !ok {
			continue
		}
		var mv custom_metrics.MetricValue
		if err := cmv1beta2.Convert_v1beta2_MetricValue_To_custom_metrics_MetricValue(v, &mv, nil); err != nil {
			return nil, err
		}
		if sum == nil {
			sum = &mv
			continue
		}
		sum.Value.Add(mv.Value)
		if mv.Timestamp.After(sum.Timestamp.Time) {
			sum.Timestamp = mv.Timestamp
		}
	}
	return sum, nil
}

// GetMetricBySelector implements provider.CustomMetricsProvider: the
// members' values merged by object name (summed where a name is in several
// clusters), sorted by name.
//
// A selector requirement on hpa.QueryFromClusterLabel (`=` or `in`) names the members to
// ask, and is removed from the selector they are asked with: the FederatedHPA controller asks
// one cluster at a time when pods of two clusters share a name, which a merged answer could
// not tell apart.
func (p *customMetrics) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	ms, names := p.members(ctx)
	selector, only, restricted := clustersNamed(selector)
	if info.GroupResource == podsGR {
		names = p.holding(ctx, namespace, selector)
	}
	if restricted {
		names = slices.DeleteFunc(names, func(c string) bool { return !slices.Contains(only, c) })
	}
	if info.GroupResource == podsGR && len(names) == 0 {
		return &custom_metrics.MetricValueList{}, nil
	}
	vals, errs := ask(&p.clusters.left, names, "custom metric "+info.Metric, func(_ context.Context, c string) (*cmv1beta2.MetricValueList, error) {
		gk, err := kind(ms[c], info.GroupResource)
		if err != nil {
			return nil, err
		}
		return p.metricsInterface(ms[c], info, namespace).GetForObjects(gk, selector, info.Metric, metricSelector)
	})
	if len(vals) == 0 && len(errs) > 0 {
		return nil, firstErr(errs, names, provider.NewMetricNotFoundError(info.GroupResource, info.Metric))
	}
	return mergeByObject(names, vals)
}

// clustersNamed splits selector into the clusters its hpa.QueryFromClusterLabel requirement
// names (with `=`, `==` or `in`) and the selector without that requirement; restricted is
// false, and selector returned as it is, when it has no such requirement.
func clustersNamed(selector labels.Selector) (rest labels.Selector, clusters []string, restricted bool) {
	reqs, selectable := selector.Requirements()
	if !selectable {
		return selector, nil, false
	}
	rest = labels.NewSelector()
	for _, r := range reqs {
		switch op := r.Operator(); {
		case r.Key() == hpa.QueryFromClusterLabel && (op == selection.Equals || op == selection.DoubleEquals || op == selection.In):
			clusters = append(clusters, r.Values().UnsortedList()...)
			restricted = true
		default:
			rest = rest.Add(r)
		}
	}
	if !restricted {
		return selector, nil, false
	}
	return rest, clusters, true
}

// mergeByObject merges the members' lists (vals, by cluster, read in the
// order of names) by described object, summing the values of an object
// several members report, and sorts the result by namespace/name.
func mergeByObject(names []string, vals map[string]*cmv1beta2.MetricValueList) (*custom_metrics.MetricValueList, error) {
	merged := map[string]*custom_metrics.MetricValue{}
	var order []string
	for _, c := range names {
		list, ok := vals[c]
		if !ok {
			continue
		}
		for i := range list.Items {
			var mv custom_metrics.MetricValue
			if err := cmv1beta2.Convert_v1beta2_MetricValue_To_custom_metrics_MetricValue(&list.Items[i], &mv, nil); err != nil {
				return nil, err
			}
			key := mv.DescribedObject.Namespace + "/" + mv.DescribedObject.Name
			if prev, ok := merged[key]; ok {
				prev.Value.Add(mv.Value)
				continue
			}
			merged[key] = &mv
			order = append(order, key)
		}
	}
	sort.Strings(order)
	out := &custom_metrics.MetricValueList{Items: make([]custom_metrics.MetricValue, 0, len(order))}
	for _, k := range order {
		out.Items = append(out.Items, *merged[k])
	}
	return out, nil
}

// ListAllMetrics implements provider.CustomMetricsProvider: the union of
// the metrics the members' custom.metrics.k8s.io list, as of the last
// discovery refresh.
func (p *customMetrics) ListAllMetrics() []provider.CustomMetricInfo {
	seen := map[provider.CustomMetricInfo]bool{}
	var out []provider.CustomMetricInfo
	for _, m := range p.clusters.known() {
		m.mu.Lock()
		res := m.customInfo
		m.mu.Unlock()
		for _, r := range res {
			gr, metric, ok := strings.Cut(r.Name, "/")
			if !ok {
				continue
			}
			info := provider.CustomMetricInfo{GroupResource: schema.ParseGroupResource(gr), Namespaced: r.Namespaced, Metric: metric}
			if !seen[info] {
				seen[info] = true
				out = append(out, info)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// GetExternalMetric implements provider.ExternalMetricsProvider: the
// members' series of the metric put together, each member's in its order.
func (p *customMetrics) GetExternalMetric(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	ms, names := p.members(ctx)
	vals, errs := ask(&p.clusters.left, names, "external metric "+info.Metric, func(_ context.Context, c string) (*emv1beta1.ExternalMetricValueList, error) {
		return ms[c].external.NamespacedMetrics(namespace).List(info.Metric, metricSelector)
	})
	if len(vals) == 0 {
		return nil, firstErr(errs, names, apierrors.NewNotFound(schema.GroupResource{Group: "external.metrics.k8s.io", Resource: info.Metric}, namespace))
	}
	out := &external_metrics.ExternalMetricValueList{}
	for _, c := range names {
		list, ok := vals[c]
		if !ok {
			continue
		}
		for i := range list.Items {
			var v external_metrics.ExternalMetricValue
			if err := emv1beta1.Convert_v1beta1_ExternalMetricValue_To_external_metrics_ExternalMetricValue(&list.Items[i], &v, nil); err != nil {
				return nil, err
			}
			out.Items = append(out.Items, v)
		}
	}
	return out, nil
}

// ListAllExternalMetrics implements provider.ExternalMetricsProvider: the
// union of the members' external metrics, as of the last refresh.
func (p *customMetrics) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	seen := map[string]bool{}
	var out []provider.ExternalMetricInfo
	for _, m := range p.clusters.known() {
		m.mu.Lock()
		res := m.externalRes
		m.mu.Unlock()
		for _, r := range res {
			if !seen[r.Name] {
				seen[r.Name] = true
				out = append(out, provider.ExternalMetricInfo{Metric: r.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}
