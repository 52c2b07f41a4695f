// Package applicationfailover is Karmada's application failover controller:
// a binding whose policy sets
// failover.application is evicted from a cluster where its resource has
// stayed Unhealthy for decisionConditions.tolerationSeconds. The eviction
// is a graceful eviction task (reason ApplicationFailure) whose purge mode
// and grace period come from the policy: Directly removes the old copy at
// once, Gracefully once the replacement is healthy (or after
// gracePeriodSeconds), Never keeps it (suppressDeletion). statePreservation
// rules carry values out of the failed copy's status, as labels for the new
// copies (gate StatefulFailoverInjection).
package applicationfailover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "applicationFailover"

// DefaultTolerationSeconds is decisionConditions.tolerationSeconds when unset.
const DefaultTolerationSeconds = 300

// Reconciler fails applications over, for one binding kind.
type Reconciler struct {
	Client client.Client
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// Recorder gets EvictWorkloadFromClusterSucceed/Failed on the binding
	// and its template.
	Recorder record.EventRecorder
	// Clock tells the time; nil is the real clock (controllermanager.Options.Clock).
	Clock clock.PassiveClock

	// unhealthy remembers since when each binding's resource has been
	// Unhealthy in each cluster (binding key, then cluster). It lives in
	// memory, as in Karmada: a restart starts the counts again.
	mu        sync.Mutex
	unhealthy map[string]map[string]time.Time
}

// SetupWithManager reconciles bindings when they (their aggregated status)
// change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName(ControllerName)).
		For(r.Kind.Empty()).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// track records the clusters where the resource is Unhealthy now and
// returns since when each has been; clusters that recovered or left are
// forgotten.
func (r *Reconciler) track(key string, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, now time.Time) map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unhealthy == nil {
		r.unhealthy = map[string]map[string]time.Time{}
	}
	prev := r.unhealthy[key]
	cur := map[string]time.Time{}
	for _, tc := range spec.Clusters {
		for _, item := range status.AggregatedStatus {
			if item.ClusterName == tc.Name && item.Health == workv1alpha2.ResourceUnhealthy {
				since, ok := prev[tc.Name]
				if !ok {
					since = now
				}
				cur[tc.Name] = since
			}
		}
	}
	if len(cur) == 0 {
		delete(r.unhealthy, key)
	} else {
		r.unhealthy[key] = cur
	}
	return cur
}

// Reconcile evicts the binding from each cluster where it has been
// Unhealthy for the toleration, and comes back when the next one's
// toleration runs out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.Kind.Empty()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			r.mu.Lock()
			delete(r.unhealthy, req.String())
			r.mu.Unlock()
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec, status := binding.Spec(b), binding.Status(b)
	var app *policyv1alpha1.ApplicationFailoverBehavior
	if spec.Failover != nil {
		app = spec.Failover.Application
	}
	if !b.GetDeletionTimestamp().IsZero() || app == nil {
		r.mu.Lock()
		delete(r.unhealthy, req.String())
		r.mu.Unlock()
		return ctrl.Result{}, nil
	}
	now := reconciler.Now(r.Clock)
	toleration := time.Duration(DefaultTolerationSeconds) * time.Second
	if s := app.DecisionConditions.TolerationSeconds; s != nil {
		toleration = time.Duration(*s) * time.Second
	}
	var evict []string
	var after time.Duration
	for cluster, since := range r.track(req.String(), spec, status, now) {
		left := since.Add(toleration).Sub(now)
		if left <= 0 {
			evict = append(evict, cluster)
		} else if after == 0 || left < after {
			after = left
		}
	}
	if len(evict) == 0 {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	purge := policyv1alpha1.NormalizePurgeMode(app.PurgeMode)
	if purge == "" {
		purge = policyv1alpha1.PurgeModeGracefully
	}
	before := make([]string, 0, len(spec.Clusters))
	for _, tc := range spec.Clusters {
		before = append(before, tc.Name)
	}
	patch := client.MergeFromWithOptions(b.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	producer := binding.EvictionProducerApplicationFailover
	if r.Kind == binding.ClusterScoped {
		producer = "ClusterResourceBindingApplicationFailoverController"
	}
	for _, c := range evict {
		task := workv1alpha2.GracefulEvictionTask{
			PurgeMode: purge, Reason: binding.EvictionReasonApplicationFailure, Producer: producer,
			Message:                fmt.Sprintf("the application stayed unhealthy in cluster %s for %s", c, toleration),
			ClustersBeforeFailover: before,
		}
		switch purge {
		case policyv1alpha1.PurgeModeGracefully:
			task.GracePeriodSeconds = app.GracePeriodSeconds
			if task.GracePeriodSeconds == nil {
				task.GracePeriodSeconds = ptr.To(policyv1alpha1.DefaultApplicationFailoverGracePeriodSeconds)
			}
		case policyv1alpha1.PurgeModeNever:
			task.SuppressDeletion = ptr.To(true)
		}
		if sp := app.StatePreservation; sp != nil {
			labels, err := Preserve(sp.Rules, statusOf(status, c))
			if err != nil {
				log.FromContext(ctx).Error(err, "State preservation", "binding", klog.KObj(b), "cluster", c)
			}
			task.PreservedLabelState = labels
		}
		// Directly still records the task: the old copy goes at once, and
		// the cluster is not chosen again in the same breath.
		binding.Evict(spec, c, true, task, now)
	}
	err := r.Client.Patch(ctx, b, patch)
	for _, c := range evict {
		binding.EvictionEvent(r.Recorder, b, c, err)
	}
	if apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("fail binding %s over from %v: %w", req, evict, err)
	}
	log.FromContext(ctx).Info("Application failed over", "binding", klog.KObj(b), "clusters", evict, "purgeMode", purge)
	return ctrl.Result{RequeueAfter: after}, nil
}

// statusOf is the status the cluster reported for the resource, decoded.
func statusOf(status *workv1alpha2.ResourceBindingStatus, cluster string) any {
	for _, item := range status.AggregatedStatus {
		if item.ClusterName == cluster && item.Status != nil {
			var v any
			if json.Unmarshal(item.Status.Raw, &v) == nil {
				return v
			}
		}
	}
	return nil
}

// Preserve evaluates each rule's kubectl JSONPath on the failed copy's
// status and returns the values by label name. A rule that finds nothing is
// an error, and the other rules still count.
func Preserve(rules []policyv1alpha1.StatePreservationRule, status any) (map[string]string, error) {
	out := map[string]string{}
	var errs []string
	for _, rule := range rules {
		jp := jsonpath.New(rule.AliasLabelName).AllowMissingKeys(false)
		if err := jp.Parse(rule.JSONPath); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", rule.AliasLabelName, err))
			continue
		}
		var buf bytes.Buffer
		if err := jp.Execute(&buf, status); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", rule.AliasLabelName, err))
			continue
		}
		out[rule.AliasLabelName] = buf.String()
	}
	if len(out) == 0 {
		out = nil
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("statePreservation: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
