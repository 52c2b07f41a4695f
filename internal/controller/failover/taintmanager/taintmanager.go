// Package taintmanager is Karmada's taint manager: with the Failover feature
// gate and --enable-no-execute-taint-eviction, it evicts a binding from every
// cluster of its spec.clusters that has a NoExecute taint its
// placement.clusterTolerations do not tolerate, at once or when a
// toleration's tolerationSeconds run out. With GracefulEviction the cluster
// goes into spec.gracefulEvictionTasks, so its copy stays until the
// replacement the scheduler finds elsewhere is healthy (the graceful
// eviction controller); otherwise it is removed at once.
package taintmanager

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// Reconciler evicts the bindings of one kind from NoExecute-tainted clusters.
type Reconciler struct {
	Client client.Client
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// Graceful records a graceful eviction task for each eviction (the
	// GracefulEviction gate).
	Graceful bool
	// Recorder gets EvictWorkloadFromClusterSucceed/Failed on the binding
	// and its template.
	Recorder record.EventRecorder
	// Clock tells the time; nil is the real clock (controllermanager.Options.Clock).
	Clock clock.PassiveClock
	// Preschedule, if set, places the evicted replicas in the same write as
	// the eviction (the in-process scheduler's decision, as the detector
	// does for new bindings): one write per binding instead of two.
	Preschedule func(ctx context.Context, c client.Reader, b binding.Object) error
	// Gate, if set, is touched by every eviction write, so status reports
	// give way to a failover as they do to propagation (statusgate.Gate).
	Gate *statusgate.Gate
	// Pace, if set, paces evictions (one binding each) across the
	// reconcilers that share it: Karmada's --resource-eviction-rate.
	Pace *Pace
	// DefaultPurgeMode is the purge mode of a binding whose policy sets no
	// failover.cluster (Karmada's --no-execute-taint-eviction-purge-mode);
	// empty means Gracefully.
	DefaultPurgeMode policyv1alpha1.PurgeMode
}

// Pace spaces evictions to a rate per second (Karmada's
// --resource-eviction-rate, 0.5 by default): a NoExecute taint on a
// cluster holding many bindings evicts them a few at a time instead of
// moving every workload at once. A rate of 0 stops evictions.
type Pace struct {
	limiter *rate.Limiter
}

// NewPace returns a Pace of perSecond evictions a second (>= 0), with a
// burst of one.
func NewPace(perSecond float64) *Pace {
	return &Pace{limiter: rate.NewLimiter(rate.Limit(perSecond), 1)}
}

// HaltedRetry is how soon an eviction held back by a rate of 0 is tried
// again (Karmada's longest eviction delay).
const HaltedRetry = 30 * time.Minute

// halted reports a rate of 0: no eviction is written.
func (p *Pace) halted() bool { return p != nil && p.limiter.Limit() == 0 }

// wait blocks until the next eviction may be written, or ctx ends.
func (p *Pace) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.limiter.Wait(ctx)
}

// SetupWithManager reconciles a binding when it changes, and every binding
// when a cluster's taints change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName("taint-manager")).
		For(r.Kind.Empty()).
		Watches(&clusterv1alpha1.Cluster{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.Kind.EnqueueAll(ctx, r.Client, q)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if !equality.Semantic.DeepEqual(e.ObjectOld.(*clusterv1alpha1.Cluster).Spec.Taints, e.ObjectNew.(*clusterv1alpha1.Cluster).Spec.Taints) {
					r.Kind.EnqueueAll(ctx, r.Client, q)
				}
			},
		}, builder.WithPredicates(queue.NotInitialList)).
		WithOptions(queue.Options(mgr, 64)).
		Complete(r)
}

// Reconcile evicts the binding from each cluster whose NoExecute taints it
// does not tolerate now, and comes back when a tolerationSeconds runs out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.Kind.Empty()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := binding.Spec(b)
	if !b.GetDeletionTimestamp().IsZero() || len(spec.Clusters) == 0 {
		return ctrl.Result{}, nil
	}
	var clusters clusterv1alpha1.ClusterList
	if err := r.Client.List(ctx, &clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	now := reconciler.Now(r.Clock)
	var evict []string
	var after time.Duration
	for _, tc := range spec.Clusters {
		i := slices.IndexFunc(clusters.Items, func(c clusterv1alpha1.Cluster) bool { return c.Name == tc.Name })
		if i < 0 {
			continue // gone: the scheduler drops it
		}
		var tolerations []corev1.Toleration
		if spec.Placement != nil {
			tolerations = spec.Placement.ClusterTolerations
		}
		wait, due := Due(clusters.Items[i].Spec.Taints, tolerations, now)
		switch {
		case due:
			evict = append(evict, tc.Name)
		case wait > 0 && (after == 0 || wait < after):
			after = wait
		}
	}
	if len(evict) == 0 {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	if r.Pace.halted() {
		log.FromContext(ctx).V(1).Info("Eviction held back: --resource-eviction-rate is 0", "binding", klog.KObj(b), "clusters", evict)
		return ctrl.Result{RequeueAfter: HaltedRetry}, nil
	}
	if err := r.Pace.wait(ctx); err != nil {
		return ctrl.Result{}, err
	}
	purge := policyv1alpha1.PurgeModeGracefully
	if r.DefaultPurgeMode != "" {
		purge = r.DefaultPurgeMode
	}
	if f := spec.Failover; f != nil && f.Cluster != nil && f.Cluster.PurgeMode != "" {
		purge = policyv1alpha1.NormalizePurgeMode(f.Cluster.PurgeMode)
	}
	graceful := r.Graceful && purge != policyv1alpha1.PurgeModeDirectly
	for _, c := range evict {
		binding.Evict(spec, c, graceful, workv1alpha2.GracefulEvictionTask{
			PurgeMode: purge, Reason: binding.EvictionReasonTaintUntolerated, Producer: binding.EvictionProducerTaintManager,
			Message: fmt.Sprintf("cluster %s has a NoExecute taint the binding does not tolerate", c),
		}, now)
	}
	if r.Preschedule != nil {
		if err := r.Preschedule(ctx, r.Client, b); err != nil {
			log.FromContext(ctx).Error(err, "Preschedule after eviction; the scheduler will place the replicas", "binding", klog.KObj(b))
		}
	}
	// An update, not a merge patch: the binding's resourceVersion guards
	// it all the same, and the API server decodes one body instead of
	// encoding the stored binding, merging and decoding the result (about
	// a third of a binding write's CPU there; bench/results/2026-12-02-failover.md).
	done := r.Gate.Write()
	err := r.Client.Update(ctx, b)
	done()
	for _, c := range evict {
		binding.EvictionEvent(r.Recorder, b, c, err)
	}
	if apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("evict binding %s from %v: %w", req, evict, err)
	}
	log.FromContext(ctx).Info("Evicted", "binding", klog.KObj(b), "clusters", evict, "graceful", graceful)
	return ctrl.Result{RequeueAfter: after}, nil
}

// Due says, for a cluster with taints, whether a binding tolerating
// tolerations must leave it now, or else how long until a NoExecute taint's
// tolerationSeconds (counted from the taint's timeAdded) run out (0: never).
func Due(taints []corev1.Taint, tolerations []corev1.Toleration, now time.Time) (time.Duration, bool) {
	var wait time.Duration
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		j := slices.IndexFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Logger{}, t, false) })
		if j < 0 {
			return 0, true
		}
		secs := tolerations[j].TolerationSeconds
		if secs == nil {
			continue // tolerated for ever
		}
		added := now
		if t.TimeAdded != nil {
			added = t.TimeAdded.Time
		}
		left := added.Add(time.Duration(*secs) * time.Second).Sub(now)
		if left <= 0 {
			return 0, true
		}
		if wait == 0 || left < wait {
			wait = left
		}
	}
	return wait, false
}
