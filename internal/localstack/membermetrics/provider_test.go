package membermetrics

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

func pod(name string, lbls map[string]string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: lbls, Annotations: annotations}}
}

func newProvider(t *testing.T, objs ...any) *Provider {
	t.Helper()
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	cms := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Pod:
			err = pods.Add(o)
		case *corev1.ConfigMap:
			err = cms.Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return &Provider{Pods: corelisters.NewPodLister(pods), ConfigMaps: corelisters.NewConfigMapLister(cms),
		Now: func() time.Time { return time.Unix(100, 0) }}
}

var rps = provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "http_requests_per_second"}

func TestPodMetric(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        string
		found       bool
		wantErr     bool
	}{
		{name: "a whole number", annotations: map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": "15"}, want: "15", found: true},
		{name: "a milli quantity with spaces", annotations: map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": " 500m "}, want: "500m", found: true},
		{name: "another metric only", annotations: map[string]string{"custom-metrics.flotilla.io/other": "1"}},
		{name: "not a quantity", annotations: map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": "lots"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, found, err := PodMetric(pod("p", nil, tc.annotations), "http_requests_per_second")
			if (err != nil) != tc.wantErr || found != tc.found {
				t.Fatalf("got found=%v err=%v", found, err)
			}
			if found && q.String() != tc.want {
				t.Errorf("value %s, want %s", q.String(), tc.want)
			}
		})
	}
}

func TestGetMetricBySelectorKeepsMatchingPodsWithTheMetric(t *testing.T) {
	p := newProvider(t,
		pod("b", map[string]string{"app": "web"}, map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": "20"}),
		pod("a", map[string]string{"app": "web"}, map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": "10"}),
		pod("c", map[string]string{"app": "web"}, nil),
		pod("d", map[string]string{"app": "db"}, map[string]string{"custom-metrics.flotilla.io/http_requests_per_second": "99"}),
	)
	list, err := p.GetMetricBySelector(context.Background(), "shop", labels.SelectorFromSet(labels.Set{"app": "web"}), rps, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list.Items {
		got = append(got, v.DescribedObject.Name+"="+v.Value.String())
	}
	if diff := cmp.Diff([]string{"a=10", "b=20"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGetMetricByNameWithoutTheAnnotationIsNotFound(t *testing.T) {
	p := newProvider(t, pod("a", nil, nil))
	_, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "a"}, rps, labels.Everything())
	if !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound, got %v", err)
	}
	_, err = p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "shop", Name: "missing"}, rps, labels.Everything())
	if !apierrors.IsNotFound(err) {
		t.Fatalf("missing pod: want NotFound, got %v", err)
	}
}

func TestListAllMetricsIsTheUnionOfPodAnnotations(t *testing.T) {
	p := newProvider(t,
		pod("a", nil, map[string]string{"custom-metrics.flotilla.io/x": "1", "other/y": "2"}),
		pod("b", nil, map[string]string{"custom-metrics.flotilla.io/w": "1", "custom-metrics.flotilla.io/x": "3"}),
	)
	var got []string
	for _, m := range p.ListAllMetrics() {
		got = append(got, m.String())
	}
	if diff := cmp.Diff([]string{"pods/w(namespaced)", "pods/x(namespaced)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestExternalMetricFromTheNamespaceConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ExternalMetricsConfigMap, Namespace: "shop", Labels: map[string]string{"queue": "orders"}},
		Data:       map[string]string{"queue_length": "30", "broken": "many"},
	}
	p := newProvider(t, cm)
	info := provider.ExternalMetricInfo{Metric: "queue_length"}
	list, err := p.GetExternalMetric(context.Background(), "shop", labels.Everything(), info)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Value.String() != "30" || list.Items[0].MetricLabels["queue"] != "orders" {
		t.Errorf("got %+v", list.Items)
	}
	for name, tc := range map[string]struct {
		ns       string
		metric   string
		selector labels.Selector
	}{
		"other namespace":        {ns: "other", metric: "queue_length", selector: labels.Everything()},
		"metric not in the data": {ns: "shop", metric: "latency", selector: labels.Everything()},
		"selector not matching":  {ns: "shop", metric: "queue_length", selector: labels.SelectorFromSet(labels.Set{"queue": "refunds"})},
	} {
		if _, err := p.GetExternalMetric(context.Background(), tc.ns, tc.selector, provider.ExternalMetricInfo{Metric: tc.metric}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: want NotFound, got %v", name, err)
		}
	}
	if _, err := p.GetExternalMetric(context.Background(), "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "broken"}); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("a value that is not a quantity: want an internal error, got %v", err)
	}
	var names []string
	for _, m := range p.ListAllExternalMetrics() {
		names = append(names, m.Metric)
	}
	if diff := cmp.Diff([]string{"broken", "queue_length"}, names); diff != "" {
		t.Errorf("ListAllExternalMetrics (-want +got):\n%s", diff)
	}
}
