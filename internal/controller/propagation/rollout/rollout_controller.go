// Package rollout implements the rollout controller: for every
// ResourceBinding or ClusterResourceBinding whose policy names a
// rollout.flotilla.io strategy (annotation rollout.flotilla.io/strategy, on
// the binding by the detector), it decides which clusters may take the
// template's latest rendering, wave by wave, gated on their health, and
// records it in the binding's status.rollout and Progressing condition. The
// binding controller's gate reads the admissions; the Works say what each
// cluster holds and wants (annotation rollout.flotilla.io/pending), so
// every decision is recomputed from the API and survives a restart.
// Decisions are internal/core/rollout.Plan's.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	plan "github.com/flotilla-io/flotilla/internal/core/rollout"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the rollout controller's name in --controllers.
const ControllerName = "rollout"

// Reconciler is the rollout controller for one binding kind.
type Reconciler struct {
	Client client.Client
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// Events, if set, gets the Progressing condition's reasons as events
	// on the binding and its template, on each change of reason or wave.
	Events *eventrecord.Recorder
	// Clock times soaks and deadlines; nil is the real clock.
	Clock clock.PassiveClock
}

// staged says a binding has a strategy.
func staged(o client.Object) bool {
	return o.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation] != ""
}

// SetupWithManager registers the controller: bindings (their annotations,
// which carry the strategy and the user's requests, and spec), the status
// reports of the Works of staged bindings, the strategies and the
// clusters' labels.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	stagedBindings := func(ctx context.Context, o client.Object) []ctrl.Request {
		return r.Kind.RequestsWhere(ctx, r.Client, o.GetNamespace(), func(b binding.Object) bool { return staged(b) })
	}
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName(ControllerName)).
		For(r.Kind.Empty(), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return binding.WorkOwner(o, r.Kind)
		}), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetAnnotations()[plan.StrategyWorkAnnotation] != ""
		}))).
		Watches(&rolloutv1alpha1.RolloutStrategy{}, handler.EnqueueRequestsFromMapFunc(stagedBindings), builder.WithPredicates(queue.NotInitialList)).
		Watches(&rolloutv1alpha1.ClusterRolloutStrategy{}, handler.EnqueueRequestsFromMapFunc(stagedBindings), builder.WithPredicates(queue.NotInitialList)).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(stagedBindings),
			builder.WithPredicates(queue.NotInitialList, predicate.LabelChangedPredicate{})).
		// Each decision waits on one status write: under a burst the API
		// server, not the CPU, bounds it, so many run at once.
		WithOptions(queue.Options(mgr, 16)).
		Complete(r)
}

// fact is what one target cluster's Work says.
type fact struct {
	// current is the Digest of the manifest it holds, target that of the
	// rendering it should reach (the pending one, or current).
	current, target string
	healthy         bool
}

// Reconcile decides the next step of one binding's rollout.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	if errors.Is(err, errRetry) {
		return ctrl.Result{RequeueAfter: 10 * time.Millisecond}, nil
	}
	return res, err
}

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.Kind.Empty()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	status := binding.Status(b)
	ref := b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation]
	if ref == "" {
		if status.Rollout == nil && meta.FindStatusCondition(status.Conditions, workv1alpha2.Progressing) == nil {
			return ctrl.Result{}, nil
		}
		status.Rollout = nil
		meta.RemoveStatusCondition(&status.Conditions, workv1alpha2.Progressing)
		return ctrl.Result{}, r.write(ctx, b)
	}
	now := reconciler.Now(r.Clock)
	before := status.DeepCopy()
	ro := status.Rollout
	if ro == nil {
		ro = &workv1alpha2.RolloutStatus{}
		status.Rollout = ro
	}
	ro.Strategy = ref
	strategy, err := r.strategy(ctx, b, ref)
	if err != nil {
		return ctrl.Result{}, err
	}
	if strategy == nil {
		r.setCondition(b, before, metav1.ConditionFalse, workv1alpha2.RolloutFailed,
			fmt.Sprintf("strategy %s not found: changes are held; create it, or remove the annotation %s from the policy", ref, rolloutv1alpha1.StrategyAnnotation))
		return ctrl.Result{}, r.write(ctx, b)
	}
	facts, labelsOf, revision, err := r.facts(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	if revision == "" {
		// The binding controller is halfway through writing the Works of
		// a change (their revisions differ): their update events bring
		// the rest; the requeue is a safety net.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	ann := b.GetAnnotations()
	r.startOrRestart(ro, facts, revision, ann, now)
	if a := ann[rolloutv1alpha1.AbortAnnotation]; a != "" && a != ro.ObservedAbort && strings.Split(a, "@")[0] == ro.Revision {
		// A rollout that reached every cluster has nothing to abort: the
		// request is only recorded (flotilla rollout abort refuses it).
		ro.ObservedAbort = a
		ro.Aborted = ro.CompletionTime == nil
		for i := 0; ro.Aborted && i < len(ro.Clusters); i++ {
			ro.Clusters[i].Rendering, ro.Clusters[i].Phase, ro.Clusters[i].AdmittedTime, ro.Clusters[i].HealthySince = "", workv1alpha2.ClusterRolloutWaiting, nil, nil
		}
	}
	if ro.Aborted {
		ro.Waves = waveCounts(waves(&strategy.Spec, binding.Spec(b).Placement, labelsOf), ro.Clusters)
		r.setCondition(b, before, metav1.ConditionFalse, workv1alpha2.RolloutFailed,
			fmt.Sprintf("revision %s was aborted: the clusters that had it went back to their previous rendering; change the template, or run `flotilla rollout restart`, to roll out again", ro.Revision))
		return ctrl.Result{}, r.write(ctx, b)
	}
	if v := ann[rolloutv1alpha1.ResumeAnnotation]; v != "" && v != ro.ObservedResume {
		ro.ObservedResume = v
		for i := range ro.Clusters {
			if c := &ro.Clusters[i]; c.Phase == workv1alpha2.ClusterRolloutFailed {
				c.Phase, c.AdmittedTime, c.HealthySince = workv1alpha2.ClusterRolloutProgressing, stamp(now), nil
			}
		}
	}
	in := plan.Input{Strategy: planStrategy(&strategy.Spec), Now: now, Paused: ann[rolloutv1alpha1.PausedAnnotation] == "true",
		Waves: waves(&strategy.Spec, binding.Spec(b).Placement, labelsOf), Clusters: map[string]plan.Cluster{}}
	for i := range ro.Clusters {
		c := &ro.Clusters[i]
		f := facts[c.Name]
		admitted := c.Rendering != "" && c.Rendering == f.target
		healthy := admitted && f.healthy && f.current == f.target
		switch {
		case !healthy:
			c.HealthySince = nil
		case c.HealthySince == nil:
			c.HealthySince = stamp(now)
		}
		if admitted && c.Phase == workv1alpha2.ClusterRolloutProgressing && healthy && !now.Before(c.HealthySince.Add(in.Strategy.MinSuccessTime)) {
			c.Phase = workv1alpha2.ClusterRolloutSucceeded
		}
		pc := plan.Cluster{Done: c.Phase == workv1alpha2.ClusterRolloutSucceeded, Admitted: admitted, Healthy: healthy}
		if c.AdmittedTime != nil {
			pc.AdmittedAt = c.AdmittedTime.Time
		}
		if c.HealthySince != nil {
			pc.HealthySince = c.HealthySince.Time
		}
		in.Clusters[c.Name] = pc
	}
	d := plan.Plan(in)
	for i := range ro.Clusters {
		c := &ro.Clusters[i]
		switch {
		case slices.Contains(d.Admit, c.Name):
			c.Rendering, c.Phase, c.AdmittedTime, c.HealthySince = facts[c.Name].target, workv1alpha2.ClusterRolloutProgressing, stamp(now), nil
		case slices.Contains(d.Failed, c.Name):
			c.Phase = workv1alpha2.ClusterRolloutFailed
		}
	}
	ro.CurrentWave = int32(d.Wave)
	ro.Waves = waveCounts(in.Waves, ro.Clusters)
	for i := range ro.Clusters {
		ro.Clusters[i].Wave = waveOf(in.Waves, ro.Clusters[i].Name)
	}
	switch d.Phase {
	case plan.Succeeded:
		if ro.CompletionTime == nil {
			ro.CompletionTime = &metav1.Time{Time: now}
		}
		r.setCondition(b, before, metav1.ConditionTrue, workv1alpha2.RolloutSucceeded, d.Message)
	case plan.Paused:
		r.setCondition(b, before, metav1.ConditionUnknown, workv1alpha2.RolloutPaused, d.Message+"; run `flotilla rollout resume` to go on")
	case plan.Failed:
		r.setCondition(b, before, metav1.ConditionFalse, workv1alpha2.RolloutPaused, d.Message+
			"; fix the template (a new change restarts the rollout), run `flotilla rollout resume` to give the failed clusters a new deadline, or `flotilla rollout abort` to take the change back")
	default:
		ro.CompletionTime = nil
		r.setCondition(b, before, metav1.ConditionTrue, workv1alpha2.RolloutProgressing, d.Message)
	}
	if err := r.write(ctx, b); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// startOrRestart begins a new rollout when the clusters' targets changed
// (a newer change restarts from the first wave) or the user asked for a
// restart, and keeps ro.Clusters to the clusters with a Work, sorted. A
// cluster already admitted to its target keeps its progress; one that
// already runs its target without an admission (its rendering did not
// change, or it was placed with it) is done.
func (r *Reconciler) startOrRestart(ro *workv1alpha2.RolloutStatus, facts map[string]fact, revision string, ann map[string]string, now time.Time) {
	restart := ann[rolloutv1alpha1.RestartAnnotation] != "" && ann[rolloutv1alpha1.RestartAnnotation] != ro.ObservedRestart
	fresh := revision != ro.Revision || restart
	if fresh {
		ro.Revision, ro.StartTime, ro.CompletionTime = revision, &metav1.Time{Time: now}, nil
		ro.ObservedRestart = ann[rolloutv1alpha1.RestartAnnotation]
		if restart || ro.Aborted {
			ro.Aborted = false
		}
	}
	old := map[string]workv1alpha2.ClusterRollout{}
	for _, c := range ro.Clusters {
		old[c.Name] = c
	}
	ro.Clusters = ro.Clusters[:0]
	for name, f := range facts {
		c, seen := old[name]
		switch {
		case !seen || (fresh && c.Rendering != f.target):
			c = workv1alpha2.ClusterRollout{Name: name, Phase: workv1alpha2.ClusterRolloutWaiting}
			if f.current == f.target {
				c.Phase = workv1alpha2.ClusterRolloutSucceeded
			}
		case fresh && restart && c.Phase != workv1alpha2.ClusterRolloutSucceeded && c.Rendering == f.target:
			c.Phase, c.AdmittedTime, c.HealthySince = workv1alpha2.ClusterRolloutProgressing, stamp(now), nil
		}
		ro.Clusters = append(ro.Clusters, c)
	}
	slices.SortFunc(ro.Clusters, func(a, b workv1alpha2.ClusterRollout) int { return strings.Compare(a.Name, b.Name) })
}

// stamp is now as status.rollout stores it: whole seconds, rounded up, so
// that a soak (from healthySince) or a deadline (from admittedTime) read
// back after the write never ends early.
func stamp(now time.Time) *metav1.Time {
	t := now.Truncate(time.Second)
	if t.Before(now) {
		t = t.Add(time.Second)
	}
	return &metav1.Time{Time: t}
}

// facts reads the Works of b's target clusters, the labels of those
// clusters, and the revision the Works were written for: "" while they
// disagree (the binding controller is halfway through a change). A target
// without a Work yet is not the rollout's (its first rendering is written
// at once), nor one whose rendering failed (it keeps its Work as it is).
func (r *Reconciler) facts(ctx context.Context, b binding.Object) (map[string]fact, map[string]map[string]string, string, error) {
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingFields{binding.WorkBindingIndex: b.GetLabels()[binding.IDLabel(b)]}); err != nil {
		return nil, nil, "", fmt.Errorf("list the Works of %s: %w", binding.Ref(b), err)
	}
	byCluster := map[string]*workv1alpha1.Work{}
	for i := range works.Items {
		byCluster[strings.TrimPrefix(works.Items[i].Namespace, clusterv1alpha1.ExecutionSpacePrefix)] = &works.Items[i]
	}
	facts := map[string]fact{}
	labelsOf := map[string]map[string]string{}
	revisions := map[string]bool{}
	for _, tc := range binding.Targets(binding.Spec(b)) {
		w := byCluster[tc.Name]
		if w == nil || len(w.Spec.Workload.Manifests) != 1 {
			continue
		}
		if _, stale := w.Annotations[binding.StaleRenderingAnnotation]; stale {
			continue
		}
		revisions[w.Annotations[plan.RevisionAnnotation]] = true
		m := map[string]any{}
		if err := utiljson.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &m); err != nil {
			continue // the execution controller reports an undecodable Work
		}
		cur, err := plan.Digest(m)
		if err != nil {
			continue
		}
		f := fact{current: cur, target: cur}
		if p := w.Annotations[plan.PendingAnnotation]; p != "" {
			f.target = p
		}
		f.healthy = healthy(w)
		facts[tc.Name] = f
		c := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: tc.Name}, c); err == nil {
			labelsOf[tc.Name] = c.Labels
		} else if !apierrors.IsNotFound(err) {
			return nil, nil, "", err
		} else {
			labelsOf[tc.Name] = nil
		}
	}
	revision := ""
	if len(revisions) == 1 {
		for rev := range revisions {
			revision = rev
		}
	}
	if len(facts) == 0 {
		revision = "-" // nothing placed yet
	}
	return facts, labelsOf, revision, nil
}

// healthy says a Work is applied at its generation, without a pending
// rendering, and its object reports Healthy.
func healthy(w *workv1alpha1.Work) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionTrue || (c.ObservedGeneration != 0 && c.ObservedGeneration != w.Generation) {
		return false
	}
	return len(w.Status.ManifestStatuses) > 0 && w.Status.ManifestStatuses[0].Health == workv1alpha1.ResourceHealthy
}

// strategy reads the strategy ref names: nil when it does not exist.
func (r *Reconciler) strategy(ctx context.Context, b binding.Object, ref string) (*rolloutv1alpha1.ClusterRolloutStrategy, error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok {
		kind, name = "RolloutStrategy", ref
	}
	var err error
	out := &rolloutv1alpha1.ClusterRolloutStrategy{}
	switch kind {
	case "ClusterRolloutStrategy":
		err = r.Client.Get(ctx, client.ObjectKey{Name: name}, out)
	case "RolloutStrategy":
		if b.GetNamespace() == "" {
			return nil, nil // a cluster-scoped binding has no namespace to look in
		}
		ns := &rolloutv1alpha1.RolloutStrategy{}
		err = r.Client.Get(ctx, client.ObjectKey{Namespace: b.GetNamespace(), Name: name}, ns)
		out.Spec = ns.Spec
	default:
		return nil, nil
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

// planStrategy converts a RolloutStrategy spec for the planner.
func planStrategy(s *rolloutv1alpha1.RolloutStrategySpec) plan.Strategy {
	out := plan.Strategy{Type: plan.Type(s.Type), MaxConcurrency: amount(s.MaxConcurrency)}
	if s.MinSuccessTime != nil {
		out.MinSuccessTime = s.MinSuccessTime.Duration
	}
	if s.ProgressDeadline != nil {
		out.ProgressDeadline = s.ProgressDeadline.Duration
	}
	if a := amount(s.MaxFailures); a != nil {
		out.MaxFailures = *a
	}
	return out
}

// amount converts a number or percentage (validated at admission).
func amount(v *intstr.IntOrString) *plan.Amount {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		return &plan.Amount{Value: int(v.IntVal)}
	}
	var n int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &n); err != nil {
		return nil
	}
	return &plan.Amount{Value: n, Percent: true}
}

// waves builds the waves of the clusters in labelsOf from the strategy:
// by a label's values in groups order (all values, sorted, without
// groups), by the placement's clusterAffinities terms, by steps, or one
// wave of all.
func waves(s *rolloutv1alpha1.RolloutStrategySpec, placement *policyv1alpha1.Placement, labelsOf map[string]map[string]string) []plan.Wave {
	var out []plan.Wave
	names := make([]string, 0, len(labelsOf))
	for n := range labelsOf {
		names = append(names, n)
	}
	slices.Sort(names)
	switch {
	case s.GroupBy != nil && s.GroupBy.ClusterLabel != "":
		groups := s.Groups
		if len(groups) == 0 {
			for _, l := range labelsOf {
				if v, ok := l[s.GroupBy.ClusterLabel]; ok {
					groups = append(groups, v)
				}
			}
			slices.Sort(groups)
			groups = slices.Compact(groups)
		}
		out = plan.GroupByLabel(labelsOf, s.GroupBy.ClusterLabel, groups)
	case s.GroupBy != nil && s.GroupBy.ClusterAffinities != nil && placement != nil:
		terms := placement.ClusterAffinities
		termNames := make([]string, len(terms))
		for i, t := range terms {
			termNames[i] = t.AffinityName
		}
		out = plan.GroupBy(names, termNames, func(c string, i int) bool {
			cl := &clusterv1alpha1.Cluster{}
			cl.Name, cl.Labels = c, labelsOf[c]
			return clusteraffinity.Matches(cl, &terms[i].ClusterAffinity)
		})
	case len(s.Steps) > 0:
		stepNames := make([]string, len(s.Steps))
		selectors := make([]labels.Selector, len(s.Steps))
		for i, st := range s.Steps {
			stepNames[i] = st.Name
			if stepNames[i] == "" {
				stepNames[i] = fmt.Sprintf("step-%d", i)
			}
			sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchExpressions: st.MatchExpressions})
			if err != nil {
				sel = labels.Nothing()
			}
			selectors[i] = sel
		}
		out = plan.GroupBy(names, stepNames, func(c string, i int) bool { return selectors[i].Matches(labels.Set(labelsOf[c])) })
	default:
		out = []plan.Wave{{Name: "all", Clusters: names}}
	}
	for i := range out {
		for _, m := range s.MandatoryDecisionGroups {
			if (m.GroupIndex != nil && int(*m.GroupIndex) == i) || (m.GroupName != "" && m.GroupName == out[i].Name) {
				out[i].Mandatory = true
			}
		}
	}
	return out
}

func waveOf(waves []plan.Wave, cluster string) int32 {
	for i, w := range waves {
		if slices.Contains(w.Clusters, cluster) {
			return int32(i)
		}
	}
	return -1
}

func waveCounts(waves []plan.Wave, clusters []workv1alpha2.ClusterRollout) []workv1alpha2.RolloutWave {
	phase := map[string]string{}
	for _, c := range clusters {
		phase[c.Name] = c.Phase
	}
	out := make([]workv1alpha2.RolloutWave, 0, len(waves))
	for _, w := range waves {
		rw := workv1alpha2.RolloutWave{Name: w.Name, Clusters: int32(len(w.Clusters))}
		for _, c := range w.Clusters {
			switch phase[c] {
			case workv1alpha2.ClusterRolloutSucceeded:
				rw.Succeeded++
			case workv1alpha2.ClusterRolloutFailed:
				rw.Failed++
			}
		}
		out = append(out, rw)
	}
	return out
}

// setCondition sets Progressing and, when its reason or the wave changed
// since before, raises an event of that reason on the binding and its
// template (a Warning when the rollout stopped).
func (r *Reconciler) setCondition(b binding.Object, before *workv1alpha2.ResourceBindingStatus, st metav1.ConditionStatus, reason, msg string) {
	status := binding.Status(b)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: workv1alpha2.Progressing, Status: st, Reason: reason, Message: msg, ObservedGeneration: b.GetGeneration()})
	old := meta.FindStatusCondition(before.Conditions, workv1alpha2.Progressing)
	waveMoved := before.Rollout != nil && status.Rollout != nil && before.Rollout.CurrentWave != status.Rollout.CurrentWave
	if old != nil && old.Reason == reason && !waveMoved && (reason != workv1alpha2.RolloutProgressing || before.Rollout == nil || before.Rollout.Revision == status.Rollout.Revision) {
		return
	}
	if old == nil && reason == workv1alpha2.RolloutSucceeded {
		return // the first look at a binding that had nothing to roll out
	}
	tmpl := binding.TemplateRef(binding.Spec(b))
	if st == metav1.ConditionFalse {
		r.Events.Warning(b, reason, msg)
		r.Events.Warning(tmpl, reason, msg)
		return
	}
	r.Events.Normal(b, reason, msg)
	r.Events.Normal(tmpl, reason, msg)
}

// write stores b's status when it changed.
func (r *Reconciler) write(ctx context.Context, b binding.Object) error {
	cur := r.Kind.Empty()
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(b), cur); err == nil && equality.Semantic.DeepEqual(binding.Status(cur), binding.Status(b)) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, b); err != nil {
		if apierrors.IsConflict(err) {
			// The scheduler or the status controller wrote the status
			// first: decide again from the newer binding.
			return errRetry
		}
		return client.IgnoreNotFound(fmt.Errorf("write the rollout status of %s: %w", binding.Ref(b), err))
	}
	return nil
}

// errRetry asks for the binding to be decided again at once; it is not a
// failure (Reconcile turns it into a requeue).
var errRetry = errors.New("retry")
