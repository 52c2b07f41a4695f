package localstack

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	kwokcrd "sigs.k8s.io/kwok/kustomize/crd"
	kwokresource "sigs.k8s.io/kwok/kustomize/metrics/resource"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// KwokCRDKinds are the kwok kinds a non-bare member serves and its kwok
// watches live (--enable-crds): the Metric that simulates each node's kubelet
// /metrics/resource endpoint, and the ResourceUsage and ClusterResourceUsage
// objects that set pod CPU and memory usage.
var KwokCRDKinds = []string{"Metric", "ResourceUsage", "ClusterResourceUsage"}

// ResourceMetricsPathAnnotation tells metrics-server (0.7 and later) which
// path of the node's address serves its kubelet resource metrics.
const ResourceMetricsPathAnnotation = "metrics.k8s.io/resource-metrics-path"

// KwokResourceMetricsPath is the path kwok's ready-made resource Metric
// serves a node's resource metrics on.
func KwokResourceMetricsPath(node string) string {
	return "/metrics/nodes/" + node + "/metrics/resource"
}

// MetricsNamespace holds the Services the metrics APIServices of a member
// point at (ExternalName 127.0.0.1, so the member's API server dials the
// metrics component on loopback).
const MetricsNamespace = "kube-system"

// MetricsAdapterNamespace and MetricsAdapterService are the control plane's
// Service for the metrics adapter: Karmada's names.
const (
	MetricsAdapterNamespace = "karmada-system"
	MetricsAdapterService   = "karmada-metrics-adapter"
	// SearchService is the control plane's Service for the search server
	// (Karmada's karmada-search), in MetricsAdapterNamespace.
	SearchService = "karmada-search"
)

// AggregatedAPI is one APIService a cluster registers for an aggregated
// API server (a metrics component, or the search server): Group/Version served by Namespace/Service on Port of 127.0.0.1.
type AggregatedAPI struct {
	Group, Version     string
	Namespace, Service string
	Port               int
}

// Name is the APIService's name, "<version>.<group>".
func (a AggregatedAPI) Name() string { return a.Version + "." + a.Group }

// AggregatedAPIs returns the APIServices of cluster c. A non-bare member
// serves the resource metrics API on its resource metrics port and the
// custom (v1beta1, v1beta2) and external metrics APIs on its custom metrics
// port; the control plane serves all four from the metrics adapter, when the
// stack runs one, and search.karmada.io from the search server. It returns
// nil for bare members.
func AggregatedAPIs(c *ClusterPlan) []AggregatedAPI {
	if c.Member == nil {
		var apis []AggregatedAPI
		if c.MetricsAdapterPort != 0 {
			ns, svc, port := MetricsAdapterNamespace, MetricsAdapterService, c.MetricsAdapterPort
			apis = append(apis,
				AggregatedAPI{Group: "metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: svc, Port: port},
				AggregatedAPI{Group: "custom.metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: svc, Port: port},
				AggregatedAPI{Group: "custom.metrics.k8s.io", Version: "v1beta2", Namespace: ns, Service: svc, Port: port},
				AggregatedAPI{Group: "external.metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: svc, Port: port})
		}
		if c.SearchPort != 0 {
			apis = append(apis, AggregatedAPI{Group: "search.karmada.io", Version: "v1alpha1",
				Namespace: MetricsAdapterNamespace, Service: SearchService, Port: c.SearchPort})
		}
		return apis
	}
	if c.Member.Bare {
		return nil
	}
	ns := MetricsNamespace
	return []AggregatedAPI{
		{Group: "metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: "flotilla-metrics-server", Port: c.ResourceMetricsPort},
		{Group: "custom.metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: "flotilla-custom-metrics", Port: c.CustomMetricsPort},
		{Group: "custom.metrics.k8s.io", Version: "v1beta2", Namespace: ns, Service: "flotilla-custom-metrics", Port: c.CustomMetricsPort},
		{Group: "external.metrics.k8s.io", Version: "v1beta1", Namespace: ns, Service: "flotilla-custom-metrics", Port: c.CustomMetricsPort},
	}
}

// InstallKwokMetrics installs kwok's Metric, ResourceUsage and
// ClusterResourceUsage CRDs in a member, waits until they are Established,
// and creates kwok's ready-made resource Metric (kubelet-like
// /metrics/nodes/{nodeName}/metrics/resource). It is idempotent: existing
// objects are left as they are. Errors name the object that failed.
func InstallKwokMetrics(ctx context.Context, cfg *rest.Config) error {
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, data := range [][]byte{kwokcrd.Metric, kwokcrd.ResourceUsage, kwokcrd.ClusterResourceUsage} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return fmt.Errorf("parse a kwok CRD: %w", err)
		}
		crds = append(crds, crd)
	}
	if err := controlplane.InstallCRDs(ctx, ext, crds); err != nil {
		return err
	}
	metric := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(kwokresource.DefaultMetricsResource), &metric.Object); err != nil {
		return fmt.Errorf("parse kwok's resource Metric: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "metrics"}
	if _, err := dyn.Resource(gvr).Create(ctx, metric, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create kwok Metric %s: %w", metric.GetName(), err)
	}
	return nil
}

// RegisterAggregatedAPIs creates or updates, in cluster c, one ExternalName
// Service (127.0.0.1) per metrics server and the APIServices of
// AggregatedAPIs(c), then waits until every APIService is Available. The
// API server skips TLS verification of the metrics servers, which serve the
// stack's loopback certificate under a name it would not expect. On timeout
// the error lists the APIServices still unavailable and why.
func RegisterAggregatedAPIs(ctx context.Context, cfg *rest.Config, c *ClusterPlan) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return err
	}
	apis := AggregatedAPIs(c)
	services := map[string]bool{}
	for _, a := range apis {
		if services[a.Service] {
			continue
		}
		services[a.Service] = true
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: a.Service, Namespace: a.Namespace},
			Spec: corev1.ServiceSpec{
				Type:         corev1.ServiceTypeExternalName,
				ExternalName: "127.0.0.1",
				Ports:        []corev1.ServicePort{{Name: "https", Port: int32(a.Port), Protocol: corev1.ProtocolTCP}},
			},
		}
		existing, err := cs.CoreV1().Services(a.Namespace).Get(ctx, a.Service, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = cs.CoreV1().Services(a.Namespace).Create(ctx, svc, metav1.CreateOptions{})
		case err == nil:
			existing.Spec.Type, existing.Spec.ExternalName, existing.Spec.Ports = svc.Spec.Type, svc.Spec.ExternalName, svc.Spec.Ports
			_, err = cs.CoreV1().Services(a.Namespace).Update(ctx, existing, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("service %s/%s: %w", a.Namespace, a.Service, err)
		}
	}
	for _, a := range apis {
		port := int32(a.Port)
		want := &apiregv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: a.Name()},
			Spec: apiregv1.APIServiceSpec{
				Group: a.Group, Version: a.Version,
				Service:               &apiregv1.ServiceReference{Namespace: a.Namespace, Name: a.Service, Port: &port},
				InsecureSkipTLSVerify: true,
				GroupPriorityMinimum:  100,
				VersionPriority:       100,
			},
		}
		if a.Version == "v1beta2" {
			want.Spec.VersionPriority = 200
		}
		// The API server's availability controller writes the same
		// objects' status: a conflict is retried on a fresh read.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			existing, err := agg.ApiregistrationV1().APIServices().Get(ctx, a.Name(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				_, err = agg.ApiregistrationV1().APIServices().Create(ctx, want, metav1.CreateOptions{})
			case err == nil:
				existing.Spec = want.Spec
				_, err = agg.ApiregistrationV1().APIServices().Update(ctx, existing, metav1.UpdateOptions{})
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("APIService %s: %w", a.Name(), err)
		}
	}
	return waitAPIServicesAvailable(ctx, agg, apis)
}

func waitAPIServicesAvailable(ctx context.Context, agg aggregator.Interface, apis []AggregatedAPI) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		pending := map[string]string{}
		for _, a := range apis {
			got, err := agg.ApiregistrationV1().APIServices().Get(ctx, a.Name(), metav1.GetOptions{})
			if err != nil {
				pending[a.Name()] = err.Error()
				continue
			}
			ok, why := false, "no Available condition yet"
			for _, c := range got.Status.Conditions {
				if c.Type == apiregv1.Available {
					ok, why = c.Status == apiregv1.ConditionTrue, c.Reason+": "+c.Message
				}
			}
			if !ok {
				pending[a.Name()] = why
			}
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			var lines []string
			for n, why := range pending {
				lines = append(lines, n+" ("+why+")")
			}
			sort.Strings(lines)
			return fmt.Errorf("APIServices not Available: %s: %w", strings.Join(lines, "; "), ctx.Err())
		case <-tick.C:
		}
	}
}
