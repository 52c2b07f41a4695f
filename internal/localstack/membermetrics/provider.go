// Package membermetrics serves a local-stack member's metrics APIs: the
// resource metrics API (metrics.k8s.io, by metrics-server scraping kwok's
// simulated kubelet endpoints) and the custom and external metrics APIs
// (custom.metrics.k8s.io, external.metrics.k8s.io) whose values a user or a
// test sets on objects in the member.
package membermetrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// PodMetricAnnotationPrefix prefixes the pod annotations that carry per-pod
// custom metrics: the annotation
// "custom-metrics.flotilla.io/http_requests_per_second: 15" makes the pod's
// custom metric http_requests_per_second equal 15. The value is a Kubernetes
// quantity ("15", "500m", "2k").
const PodMetricAnnotationPrefix = "custom-metrics.flotilla.io/"

// ExternalMetricsConfigMap is the name of the ConfigMap that holds a
// namespace's external metrics: each data key is a metric name and its value
// a Kubernetes quantity. The ConfigMap's labels are the metric's labels, which
// an external metric query's label selector is matched against.
const ExternalMetricsConfigMap = "external-metrics"

var podsResource = schema.GroupResource{Resource: "pods"}

// Provider serves custom metrics of pods from their annotations
// (PodMetricAnnotationPrefix) and external metrics from ConfigMaps named
// ExternalMetricsConfigMap, read from informer caches of the member. It
// implements custom-metrics-apiserver's CustomMetricsProvider and
// ExternalMetricsProvider.
type Provider struct {
	Pods       corelisters.PodLister
	ConfigMaps corelisters.ConfigMapLister
	// Now stamps the values; time.Now when nil.
	Now func() time.Time
}

var _ provider.MetricsProvider = (*Provider)(nil)

func (p *Provider) now() metav1.Time {
	if p.Now != nil {
		return metav1.NewTime(p.Now())
	}
	return metav1.Now()
}

// PodMetric returns the value of the custom metric named metric on pod,
// whether the pod has it, and an error naming the annotation when its value
// is not a quantity.
func PodMetric(pod *corev1.Pod, metric string) (resource.Quantity, bool, error) {
	key := PodMetricAnnotationPrefix + metric
	v, ok := pod.Annotations[key]
	if !ok {
		return resource.Quantity{}, false, nil
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		return resource.Quantity{}, false, fmt.Errorf("pod %s/%s: annotation %s=%q is not a quantity (write it like \"15\" or \"500m\"): %w", pod.Namespace, pod.Name, key, v, err)
	}
	return q, true, nil
}

// PodMetricNames returns the sorted custom metric names pod carries.
func PodMetricNames(pod *corev1.Pod) []string {
	var names []string
	for k := range pod.Annotations {
		if name, ok := strings.CutPrefix(k, PodMetricAnnotationPrefix); ok && name != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func (p *Provider) podValue(pod *corev1.Pod, info provider.CustomMetricInfo) (*custom_metrics.MetricValue, bool, error) {
	q, ok, err := PodMetric(pod, info.Metric)
	if err != nil || !ok {
		return nil, false, err
	}
	return &custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
		},
		Metric:    custom_metrics.MetricIdentifier{Name: info.Metric},
		Timestamp: p.now(),
		Value:     q,
	}, true, nil
}

// GetMetricByName returns the custom metric of one pod. Only pods carry
// custom metrics; other resources, a missing pod or a pod without the
// annotation give NotFound.
func (p *Provider) GetMetricByName(_ context.Context, name types.NamespacedName, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValue, error) {
	if info.GroupResource != podsResource {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	pod, err := p.Pods.Pods(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	if err != nil {
		return nil, err
	}
	v, ok, err := p.podValue(pod, info)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !ok {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	return v, nil
}

// GetMetricBySelector returns the custom metric of every pod in namespace
// that matches selector and carries the metric's annotation, sorted by pod
// name; pods without it are left out.
func (p *Provider) GetMetricBySelector(_ context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
	if info.GroupResource != podsResource {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	pods, err := p.Pods.Pods(namespace).List(selector)
	if err != nil {
		return nil, err
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	list := &custom_metrics.MetricValueList{}
	for _, pod := range pods {
		v, ok, err := p.podValue(pod, info)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if ok {
			list.Items = append(list.Items, *v)
		}
	}
	return list, nil
}

// ListAllMetrics returns the pod metrics named by the annotations of the
// pods in the cache, for discovery.
func (p *Provider) ListAllMetrics() []provider.CustomMetricInfo {
	pods, err := p.Pods.List(labels.Everything())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, pod := range pods {
		for _, n := range PodMetricNames(pod) {
			seen[n] = true
		}
	}
	infos := make([]provider.CustomMetricInfo, 0, len(seen))
	for n := range seen {
		infos = append(infos, provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: n})
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Metric < infos[j].Metric })
	return infos
}

// ExternalMetric returns the value of metric in cm (an ExternalMetricsConfigMap),
// whether it is there, and an error naming the key when the value is not a
// quantity.
func ExternalMetric(cm *corev1.ConfigMap, metric string) (resource.Quantity, bool, error) {
	v, ok := cm.Data[metric]
	if !ok {
		return resource.Quantity{}, false, nil
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		return resource.Quantity{}, false, fmt.Errorf("ConfigMap %s/%s: key %s=%q is not a quantity (write it like \"30\" or \"1500m\"): %w", cm.Namespace, cm.Name, metric, v, err)
	}
	return q, true, nil
}

// GetExternalMetric returns the external metric from namespace's
// ExternalMetricsConfigMap: one value, labelled with the ConfigMap's labels,
// when the ConfigMap exists, holds the metric and its labels match
// metricSelector; otherwise NotFound.
func (p *Provider) GetExternalMetric(_ context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	gr := schema.GroupResource{Group: "external.metrics.k8s.io", Resource: info.Metric}
	cm, err := p.ConfigMaps.ConfigMaps(namespace).Get(ExternalMetricsConfigMap)
	if apierrors.IsNotFound(err) {
		return nil, provider.NewMetricNotFoundError(gr, info.Metric)
	}
	if err != nil {
		return nil, err
	}
	q, ok, err := ExternalMetric(cm, info.Metric)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !ok || (metricSelector != nil && !metricSelector.Matches(labels.Set(cm.Labels))) {
		return nil, provider.NewMetricNotFoundError(gr, info.Metric)
	}
	return &external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{{
		MetricName:   info.Metric,
		MetricLabels: cm.Labels,
		Timestamp:    p.now(),
		Value:        q,
	}}}, nil
}

// ListAllExternalMetrics returns the metric names held by every
// ExternalMetricsConfigMap in the cache, for discovery.
func (p *Provider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	cms, err := p.ConfigMaps.List(labels.Everything())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, cm := range cms {
		if cm.Name != ExternalMetricsConfigMap {
			continue
		}
		for k := range cm.Data {
			seen[k] = true
		}
	}
	infos := make([]provider.ExternalMetricInfo, 0, len(seen))
	for n := range seen {
		infos = append(infos, provider.ExternalMetricInfo{Metric: n})
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Metric < infos[j].Metric })
	return infos
}
