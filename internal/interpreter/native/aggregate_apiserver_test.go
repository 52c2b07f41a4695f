package native

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	jobregistry "k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	serviceregistry "k8s.io/kubernetes/pkg/registry/core/service"
	ingressregistry "k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
)

// statusStrategies are the control plane API server's own status-update strategies (Kubernetes
// 1.37, default feature gates) of the kinds AggregateStatus writes.
var statusStrategies = map[schema.GroupKind]rest.RESTUpdateStrategy{
	deploymentKind:  deployment.StatusStrategy,
	statefulSetKind: statefulset.StatusStrategy,
	replicaSetKind:  replicaset.StatusStrategy,
	daemonSetKind:   daemonset.StatusStrategy,
	jobKind:         jobregistry.StatusStrategy,
	cronJobKind:     cronjob.StatusStrategy,
	podKind:         podregistry.StatusStrategy,
	serviceKind:     serviceregistry.StatusStrategy,
	ingressKind:     ingressregistry.StatusStrategy,
	pvcKind:         persistentvolumeclaim.StatusStrategy,
	pvKind:          persistentvolume.StatusStrategy,
	pdbKind:         poddisruptionbudget.StatusStrategy,
	hpaKind:         horizontalpodautoscaler.StatusStrategy,
}

// statusUpdateErrors runs a status update from one version of an object to the next through the
// API server's strategy for its kind, as a write to the status subresource would: the errors
// the API server would answer with, none when it accepts the update. Kinds without a strategy
// here are not checked.
func statusUpdateErrors(t *testing.T, from, to *unstructured.Unstructured) field.ErrorList {
	t.Helper()
	strategy, ok := statusStrategies[groupKindOf(from)]
	if !ok {
		return nil
	}
	ctx := genericapirequest.WithRequestInfo(
		genericapirequest.WithNamespace(context.Background(), from.GetNamespace()),
		&genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "update", Subresource: "status"})
	oldObj, newObj := internalObject(t, from), internalObject(t, to)
	strategy.PrepareForUpdate(ctx, newObj, oldObj)
	return strategy.ValidateUpdate(ctx, newObj, oldObj)
}

// internalObject converts an unstructured object to the API server's internal type of its kind,
// with the resourceVersion an update carries.
func internalObject(t *testing.T, u *unstructured.Unstructured) runtime.Object {
	t.Helper()
	u = u.DeepCopy()
	u.SetResourceVersion("1")
	external, err := legacyscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		t.Fatalf("no type for %s: %v", u.GroupVersionKind(), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, external); err != nil {
		t.Fatalf("converting %s: %v", describe(u), err)
	}
	legacyscheme.Scheme.Default(external)
	internal, err := legacyscheme.Scheme.UnsafeConvertToVersion(external, schema.GroupVersion{Group: u.GroupVersionKind().Group, Version: runtime.APIVersionInternal})
	if err != nil {
		t.Fatalf("converting %s to the internal version: %v", describe(u), err)
	}
	return internal
}

// TestStatusUpdateErrorsCatchRejections makes sure the harness is not vacuous: status updates
// the issues reported as rejected by the API server are rejected here too.
func TestStatusUpdateErrorsCatchRejections(t *testing.T) {
	tests := []struct {
		name     string
		from, to *unstructured.Unstructured
	}{
		{
			name: "Job: moving a set startTime (status.startTime: field is immutable)",
			from: job("j").status(`{"active":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			to:   job("j").status(`{"active":2,"startTime":"2026-03-01T09:58:00Z"}`).obj(),
		},
		{
			name: "Job: Failed without FailureTarget",
			from: job("j").status(`{"failed":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			to: job("j").status(`{"failed":1,"startTime":"2026-03-01T10:00:00Z",
				"conditions":[{"type":"Failed","status":"True"}]}`).obj(),
		},
		{
			name: "Job: finished with pods still active",
			from: job("j").status(`{"active":1,"failed":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			to: job("j").status(`{"active":1,"failed":1,"startTime":"2026-03-01T10:00:00Z",
				"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}`).obj(),
		},
		{
			name: "Job: the failed count going down",
			from: job("j").status(`{"failed":3}`).obj(),
			to:   job("j").status(`{"failed":2}`).obj(),
		},
		{
			name: "Pod: a nameless container status listed running after the current status showed one terminated",
			from: pod("p").spec(`{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}`).
				status(`{"phase":"Running","containerStatuses":[
					{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"terminated":{"exitCode":0}}},
					{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{}}}]}`).obj(),
			to: pod("p").spec(`{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}`).
				status(`{"phase":"Running","containerStatuses":[
					{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{}}},
					{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"terminated":{"exitCode":0}}}]}`).obj(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if errs := statusUpdateErrors(t, tt.from, tt.to); len(errs) == 0 {
				t.Errorf("status update accepted, want it rejected as the API server does")
			}
		})
	}
}

// aggregateSteps aggregates each step's items into template in turn, as the
// status controller does over successive reports, failing the test when a
// step errs or the API server would refuse the status it writes; it returns
// the template after the last step.
func aggregateSteps(t *testing.T, template *unstructured.Unstructured, steps []items) *unstructured.Unstructured {
	t.Helper()
	for i, step := range steps {
		got, err := AggregateStatus(template, step)
		if err != nil {
			t.Fatalf("step %d: AggregateStatus() error = %v", i+1, err)
		}
		if errs := statusUpdateErrors(t, template, got); len(errs) > 0 {
			t.Fatalf("step %d: the API server would reject the aggregated status: %v", i+1, errs.ToAggregate())
		}
		template = got
	}
	return template
}
