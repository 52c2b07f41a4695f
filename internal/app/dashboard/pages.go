package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/explain"
)

// --- A template's story ---

// moment is one line of a timeline: an event, or a condition's last
// transition.
type moment struct {
	At                             time.Time
	Age, Type, Object, Reason, Msg string
}

type memberStatus struct {
	Cluster, Applied, Health, Status string
}

type storyView struct {
	APIVersion, Kind, Namespace, Name string
	// Gone says why there is no story: the template or its kind is not
	// on the control plane.
	Gone     string
	Story    *explain.Story
	Replicas int32
	Members  []memberStatus
	Timeline []moment
	// Binding is "<namespace>/<name>" or "<name>", "" without one.
	Binding, BindingKind string
	// Staged: the binding is under a staged rollout; Paused: it is paused.
	Staged, Paused bool
	Rollout        string
}

func (s *Server) story(ctx context.Context, u *user, apiVersion, kind, namespace, name string) (*storyView, error) {
	v := &storyView{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
	if apiVersion == "" || kind == "" || name == "" {
		return nil, badRequest(fmt.Sprintf("a template's page needs apiVersion, kind and name in its address, as the workloads page links it "+
			"(for example /story?apiVersion=apps/v1&kind=Deployment&namespace=default&name=nginx); got apiVersion %q, kind %q, name %q", apiVersion, kind, name))
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("apiVersion %q is not GROUP/VERSION or VERSION", apiVersion))
	}
	m, err := s.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		v.Gone = fmt.Sprintf("The control plane serves no kind %s in %s: check the kind and the apiVersion (or was the kind's CRD removed?).", kind, apiVersion)
		return v, nil
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace == "" {
		return nil, badRequest(fmt.Sprintf("%s is namespaced: add namespace=NAMESPACE to the address", kind))
	}
	st, err := explain.Tell(ctx, u.cl, u.dyn, explain.Target{Mapping: m, Namespace: namespace, Name: name})
	switch {
	case errors.Is(err, explain.ErrNotFound):
		v.Gone = fmt.Sprintf("%s %s is not on the control plane: it was deleted (its binding and Works went with it, and its copies "+
			"left the members unless a policy kept them), or it never existed: check the name and the namespace.", kind, qualified(namespace, name))
		return v, nil
	case err != nil:
		return nil, err
	}
	v.Story = st
	for _, e := range st.Events {
		v.Timeline = append(v.Timeline, moment{At: explain.EventTime(&e), Type: e.Type, Object: e.InvolvedObject.Kind + " " + e.InvolvedObject.Name,
			Reason: e.Reason, Msg: e.Message})
	}
	for _, en := range st.Entries {
		for _, c := range en.Conditions {
			v.Timeline = append(v.Timeline, moment{At: c.LastTransitionTime.Time, Type: "Condition", Object: "Work in " + en.Label,
				Reason: fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason), Msg: c.Message})
		}
	}
	if st.Binding != "" {
		b := bindingKind(namespace).Empty()
		if err := u.cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: st.Binding}, b); err == nil {
			v.Binding, v.BindingKind = qualified(namespace, st.Binding), bindingKind(namespace).String()
			spec, status := b.GetSpec(), b.GetStatus()
			v.Replicas = spec.Replicas
			for _, c := range status.Conditions {
				v.Timeline = append(v.Timeline, moment{At: c.LastTransitionTime.Time, Type: "Condition", Object: v.BindingKind,
					Reason: fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason), Msg: c.Message})
			}
			for _, a := range status.AggregatedStatus {
				ms := memberStatus{Cluster: a.ClusterName, Applied: fmt.Sprint(a.Applied), Health: string(a.Health)}
				if a.Status != nil {
					ms.Status = compactJSON(a.Status.Raw)
				}
				if !a.Applied && a.AppliedMessage != "" {
					ms.Applied = "false: " + a.AppliedMessage
				}
				v.Members = append(v.Members, ms)
			}
			if ref := b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation]; ref != "" {
				v.Staged, v.Rollout = true, ref
				v.Paused = b.GetAnnotations()[rolloutv1alpha1.PausedAnnotation] == "true"
			}
		}
	}
	sort.SliceStable(v.Timeline, func(i, j int) bool { return v.Timeline[i].At.After(v.Timeline[j].At) })
	for i := range v.Timeline {
		v.Timeline[i].Age = age(v.Timeline[i].At)
	}
	return v, nil
}

func compactJSON(raw []byte) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	keys := sortedKeys(m)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		b, _ := json.Marshal(m[k])
		parts = append(parts, k+"="+string(b))
	}
	return strings.Join(parts, " ")
}

// badRequest is a page address the user got wrong: the page says so
// with 400, not as the control plane's failure.
type badRequest string

func (b badRequest) Error() string { return string(b) }

// --- Policies ---

type policyRow struct {
	Kind, Namespace, Name, Selectors, Placement string
	Priority                                    int32
	Preemption, ConflictResolution              string
	Claims                                      []claimLink
	More                                        int
}

type claimLink struct{ Name, URL string }

type overrideRow struct {
	Kind, Namespace, Name, Selectors string
	Rules                            []string
}

type policiesView struct {
	PPScope, CPPScope, OPScope, COPScope scope
	Propagation                          []policyRow
	Overrides                            []overrideRow
	// Contests are the recent conflicts and preemptions (events).
	Contests []moment
}

// contestReasons are the events of policies contesting a template.
var contestReasons = map[string]bool{events.ApplyPolicyFailed: true, events.PreemptPolicySucceed: true,
	events.PreemptPolicyFailed: true, events.ApplyOverridePolicyFailed: true, events.DependencyPolicyConflict: true}

func (s *Server) policies(ctx context.Context, u *user) (*policiesView, error) {
	v := &policiesView{}
	pps := &policyv1alpha1.PropagationPolicyList{}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	ops := &policyv1alpha1.OverridePolicyList{}
	cops := &policyv1alpha1.ClusterOverridePolicyList{}
	var err error
	for _, l := range []struct {
		into       client.ObjectList
		namespaced bool
		sc         *scope
	}{{pps, true, &v.PPScope}, {cpps, false, &v.CPPScope}, {ops, true, &v.OPScope}, {cops, false, &v.COPScope}} {
		if *l.sc, err = s.list(ctx, u, l.into, l.namespaced); err != nil {
			return nil, err
		}
	}
	claims := map[string][]claimLink{}
	rbs := &workv1alpha2.ResourceBindingList{}
	if _, err := s.list(ctx, u, rbs, true); err == nil {
		for _, b := range rbs.Items {
			r := b.Spec.Resource
			claims[policyOf(&b)] = append(claims[policyOf(&b)], claimLink{r.Kind + " " + qualified(r.Namespace, r.Name), storyURL(r.APIVersion, r.Kind, r.Namespace, r.Name)})
		}
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	if _, err := s.list(ctx, u, crbs, false); err == nil {
		for _, b := range crbs.Items {
			r := b.Spec.Resource
			claims[policyOf(&b)] = append(claims[policyOf(&b)], claimLink{r.Kind + " " + r.Name, storyURL(r.APIVersion, r.Kind, "", r.Name)})
		}
	}
	row := func(kind, namespace, name string, spec *policyv1alpha1.PropagationSpec) policyRow {
		r := policyRow{Kind: kind, Namespace: namespace, Name: name, Selectors: selectors(spec.ResourceSelectors),
			Priority: derefInt32(spec.Priority), Preemption: string(spec.Preemption), ConflictResolution: string(spec.ConflictResolution),
			Placement: placementSummary(&spec.Placement)}
		c := claims[kind+" "+qualified(namespace, name)]
		sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
		if len(c) > 20 {
			r.More, c = len(c)-20, c[:20]
		}
		r.Claims = c
		return r
	}
	for _, p := range pps.Items {
		v.Propagation = append(v.Propagation, row("PropagationPolicy", p.Namespace, p.Name, &p.Spec))
	}
	for _, p := range cpps.Items {
		v.Propagation = append(v.Propagation, row("ClusterPropagationPolicy", "", p.Name, &p.Spec))
	}
	sort.SliceStable(v.Propagation, func(i, j int) bool { return v.Propagation[i].Priority > v.Propagation[j].Priority })
	orow := func(kind, namespace, name string, spec *policyv1alpha1.OverrideSpec) overrideRow {
		r := overrideRow{Kind: kind, Namespace: namespace, Name: name, Selectors: selectors(spec.ResourceSelectors)}
		for _, rule := range spec.OverrideRules {
			target := "every cluster"
			if rule.TargetCluster != nil && len(rule.TargetCluster.ClusterNames) > 0 {
				target = strings.Join(rule.TargetCluster.ClusterNames, ", ")
			} else if rule.TargetCluster != nil {
				target = "clusters matching " + jsonOf(rule.TargetCluster)
			}
			r.Rules = append(r.Rules, target+": "+jsonOf(rule.Overriders))
		}
		return r
	}
	for _, p := range ops.Items {
		v.Overrides = append(v.Overrides, orow("OverridePolicy", p.Namespace, p.Name, &p.Spec))
	}
	for _, p := range cops.Items {
		v.Overrides = append(v.Overrides, orow("ClusterOverridePolicy", "", p.Name, &p.Spec))
	}
	v.Contests = s.recentEvents(ctx, u, contestReasons, func(*corev1.Event) bool { return true }, 50)
	return v, nil
}

func selectors(sel []policyv1alpha1.ResourceSelector) string {
	parts := make([]string, 0, len(sel))
	for _, r := range sel {
		p := r.Kind
		switch {
		case r.Name != "":
			p += " " + qualified(r.Namespace, r.Name)
		case r.LabelSelector != nil:
			p += " matching " + jsonOf(r.LabelSelector)
		default:
			p += " (every one)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func placementSummary(p *policyv1alpha1.Placement) string {
	var parts []string
	if p.ClusterAffinity != nil && len(p.ClusterAffinity.ClusterNames) > 0 {
		parts = append(parts, "clusters "+strings.Join(p.ClusterAffinity.ClusterNames, ", "))
	} else if p.ClusterAffinity != nil {
		parts = append(parts, "clusters matching "+jsonOf(p.ClusterAffinity))
	} else if len(p.ClusterAffinities) > 0 {
		parts = append(parts, fmt.Sprintf("%d cluster affinity groups", len(p.ClusterAffinities)))
	} else {
		parts = append(parts, "every cluster")
	}
	if rs := p.ReplicaScheduling; rs != nil && rs.ReplicaSchedulingType != "" {
		parts = append(parts, string(rs.ReplicaSchedulingType))
	}
	return strings.Join(parts, ", ")
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// recentEvents lists, newest first, up to n events u may read with one of
// reasons (one list per reason, filtered by the API server) that keep
// accepts.
func (s *Server) recentEvents(ctx context.Context, u *user, reasons map[string]bool, keep func(*corev1.Event) bool, n int) []moment {
	var out []moment
	for _, reason := range sortedKeys(reasons) {
		list := &corev1.EventList{}
		if _, err := s.list(ctx, u, list, true, client.MatchingFields{"reason": reason}); err != nil {
			continue
		}
		for i := range list.Items {
			e := &list.Items[i]
			if keep(e) {
				out = append(out, moment{At: explain.EventTime(e), Type: e.Type, Reason: e.Reason, Msg: e.Message,
					Object: e.InvolvedObject.Kind + " " + qualified(e.InvolvedObject.Namespace, e.InvolvedObject.Name)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	if len(out) > n {
		out = out[:n]
	}
	for i := range out {
		out[i].Age = age(out[i].At)
	}
	return out
}

// --- Autoscaling ---

type fhpaRow struct {
	Namespace, Name, Target, Metrics, Conditions string
	Min, Max, Current, Desired                   int32
	Plot                                         template.HTML
}

type cronRule struct {
	Name, Schedule, Target, Next, Last, LastFailure string
	Suspended                                       bool
}

type cronRow struct {
	Namespace, Name, Target string
	Rules                   []cronRule
}

type autoscalingView struct {
	HPAScope, CronScope scope
	HPAs                []fhpaRow
	Crons               []cronRow
}

func (s *Server) autoscaling(ctx context.Context, u *user) (*autoscalingView, error) {
	v := &autoscalingView{}
	hpas := &autoscalingv1alpha1.FederatedHPAList{}
	var err error
	if v.HPAScope, err = s.list(ctx, u, hpas, true); err != nil {
		return nil, err
	}
	for _, h := range hpas.Items {
		r := fhpaRow{Namespace: h.Namespace, Name: h.Name, Target: h.Spec.ScaleTargetRef.Kind + " " + h.Spec.ScaleTargetRef.Name,
			Min: derefInt32(h.Spec.MinReplicas), Max: h.Spec.MaxReplicas, Current: h.Status.CurrentReplicas, Desired: h.Status.DesiredReplicas}
		if r.Min == 0 {
			r.Min = 1
		}
		var ms []string
		for _, m := range h.Status.CurrentMetrics {
			ms = append(ms, metricText(m))
		}
		r.Metrics = strings.Join(ms, "; ")
		var cs []string
		for _, c := range h.Status.Conditions {
			cs = append(cs, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason))
		}
		r.Conditions = strings.Join(cs, ", ")
		hist := s.samples.hpaHistory(h.Namespace + "/" + h.Name)
		var cur, des []point
		for _, p := range hist {
			cur = append(cur, point{p.At, float64(p.Current)})
			des = append(des, point{p.At, float64(p.Desired)})
		}
		r.Plot = lineChart([]series{{"current", cur}, {"desired", des}}, 360, 90, func(f float64) string { return fmt.Sprintf("%.0f", f) })
		v.HPAs = append(v.HPAs, r)
	}
	crons := &autoscalingv1alpha1.CronFederatedHPAList{}
	if v.CronScope, err = s.list(ctx, u, crons, true); err != nil {
		return nil, err
	}
	now := time.Now()
	for _, c := range crons.Items {
		row := cronRow{Namespace: c.Namespace, Name: c.Name, Target: c.Spec.ScaleTargetRef.Kind + " " + c.Spec.ScaleTargetRef.Name}
		histories := map[string]autoscalingv1alpha1.ExecutionHistory{}
		for _, h := range c.Status.ExecutionHistories {
			histories[h.RuleName] = h
		}
		for _, rule := range c.Spec.Rules {
			cr := cronRule{Name: rule.Name, Schedule: rule.Schedule, Suspended: rule.Suspend != nil && *rule.Suspend}
			switch {
			case rule.TargetReplicas != nil:
				cr.Target = fmt.Sprintf("replicas %d", *rule.TargetReplicas)
			default:
				var parts []string
				if rule.TargetMinReplicas != nil {
					parts = append(parts, fmt.Sprintf("min %d", *rule.TargetMinReplicas))
				}
				if rule.TargetMaxReplicas != nil {
					parts = append(parts, fmt.Sprintf("max %d", *rule.TargetMaxReplicas))
				}
				cr.Target = strings.Join(parts, ", ")
			}
			spec := rule.Schedule
			if rule.TimeZone != nil && *rule.TimeZone != "" {
				spec = "CRON_TZ=" + *rule.TimeZone + " " + spec
				cr.Schedule += " (" + *rule.TimeZone + ")"
			}
			if sched, err := cron.ParseStandard(spec); err != nil {
				cr.Next = "invalid schedule: " + err.Error()
			} else if !cr.Suspended {
				next := sched.Next(now)
				cr.Next = next.Format(time.RFC3339) + " (in " + next.Sub(now).Round(time.Second).String() + ")"
			} else {
				cr.Next = "suspended"
			}
			if h, ok := histories[rule.Name]; ok {
				if n := len(h.SuccessfulExecutions); n > 0 {
					last := h.SuccessfulExecutions[n-1]
					if last.ExecutionTime != nil {
						cr.Last = age(last.ExecutionTime.Time) + " ago"
					}
				}
				if n := len(h.FailedExecutions); n > 0 {
					cr.LastFailure = h.FailedExecutions[n-1].Message
				}
			}
			row.Rules = append(row.Rules, cr)
		}
		v.Crons = append(v.Crons, row)
	}
	return v, nil
}

// --- Operations in progress ---

type evictionRow struct {
	Template, Story, FromCluster, Reason, Producer, Age, Left, Message string
}

type rolloutRow struct {
	Template, Story, Binding, BindingKind, Strategy, Phase, Message, Wave, Since string
	Clusters                                                                     []string
	Paused                                                                       bool
}

type rebalancerRow struct {
	Name, Age, Workloads, Results string
}

type operationsView struct {
	Evictions   []evictionRow
	Rollouts    []rolloutRow
	Rebalancers []rebalancerRow
	Failovers   []moment
	Scope       scope
}

// failoverReasons are the events of evictions and failovers.
var failoverReasons = map[string]bool{events.EvictWorkloadFromClusterSucceed: true, events.EvictWorkloadFromClusterFailed: true,
	events.TaintClusterSucceed: true, events.TaintClusterFailed: true, events.DescheduleBindingSucceed: true, events.DescheduleBindingFailed: true}

func (s *Server) operations(ctx context.Context, u *user) (*operationsView, error) {
	v := &operationsView{}
	rbs := &workv1alpha2.ResourceBindingList{}
	var err error
	if v.Scope, err = s.list(ctx, u, rbs, true); err != nil {
		return nil, err
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	_, _ = s.list(ctx, u, crbs, false)
	now := time.Now()
	visit := func(namespace, name, kind string, annotations map[string]string, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) {
		r := spec.Resource
		tmpl, link := r.Kind+" "+qualified(r.Namespace, r.Name), storyURL(r.APIVersion, r.Kind, r.Namespace, r.Name)
		for _, t := range spec.GracefulEvictionTasks {
			row := evictionRow{Template: tmpl, Story: link, FromCluster: t.FromCluster, Reason: t.Reason, Producer: t.Producer, Message: t.Message}
			if t.CreationTimestamp != nil {
				row.Age = age(t.CreationTimestamp.Time)
				if t.GracePeriodSeconds != nil {
					left := time.Until(t.CreationTimestamp.Add(time.Duration(*t.GracePeriodSeconds) * time.Second)).Round(time.Second)
					row.Left = "grace period ends in " + left.String()
					if left <= 0 {
						row.Left = "grace period over: removed once the scheduler agrees"
					}
				} else {
					row.Left = "until the new clusters are healthy (or the eviction timeout)"
				}
			}
			v.Evictions = append(v.Evictions, row)
		}
		ro := status.Rollout
		c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Progressing)
		if ro == nil || c == nil || (c.Reason == workv1alpha2.RolloutSucceeded && ro.CompletionTime != nil && now.Sub(ro.CompletionTime.Time) > 10*time.Minute) {
			return
		}
		row := rolloutRow{Template: tmpl, Story: link, Binding: qualified(namespace, name), BindingKind: kind, Strategy: ro.Strategy,
			Phase: c.Reason, Message: c.Message, Paused: annotations[rolloutv1alpha1.PausedAnnotation] == "true",
			Wave: fmt.Sprintf("%d of %d", min(int(ro.CurrentWave)+1, len(ro.Waves)), len(ro.Waves))}
		if ro.StartTime != nil {
			row.Since = age(ro.StartTime.Time)
		}
		for _, cl := range ro.Clusters {
			row.Clusters = append(row.Clusters, fmt.Sprintf("%s: %s (wave %d)", cl.Name, cl.Phase, cl.Wave+1))
		}
		v.Rollouts = append(v.Rollouts, row)
	}
	for i := range rbs.Items {
		b := &rbs.Items[i]
		visit(b.Namespace, b.Name, "ResourceBinding", b.Annotations, &b.Spec, &b.Status)
	}
	for i := range crbs.Items {
		b := &crbs.Items[i]
		visit("", b.Name, "ClusterResourceBinding", b.Annotations, &b.Spec, &b.Status)
	}
	wrs := &appsv1alpha1.WorkloadRebalancerList{}
	if _, err := s.list(ctx, u, wrs, false); err == nil {
		for _, w := range wrs.Items {
			row := rebalancerRow{Name: w.Name, Age: age(w.CreationTimestamp.Time)}
			var ws, rs []string
			for _, wl := range w.Spec.Workloads {
				ws = append(ws, wl.Kind+" "+qualified(wl.Namespace, wl.Name))
			}
			for _, o := range w.Status.ObservedWorkloads {
				res := string(o.Result)
				if o.Reason != "" {
					res += " (" + string(o.Reason) + ")"
				}
				rs = append(rs, o.Workload.Name+": "+res)
			}
			row.Workloads, row.Results = strings.Join(ws, ", "), strings.Join(rs, ", ")
			if w.Status.FinishTime != nil {
				row.Results += "; finished " + age(w.Status.FinishTime.Time) + " ago"
			}
			v.Rebalancers = append(v.Rebalancers, row)
		}
	}
	hour := now.Add(-time.Hour)
	v.Failovers = s.recentEvents(ctx, u, failoverReasons, func(e *corev1.Event) bool { return explain.EventTime(e).After(hour) }, 50)
	return v, nil
}

// --- Metrics ---

type histPanel struct {
	Metric, Stage, P50, P99, Count string
	Plot, Buckets                  template.HTML
}

type componentPanel struct {
	Name, Failure string
	Hists         []histPanel
	Queues        template.HTML
}

type metricsView struct {
	// Forbidden says why the user may not see the components' metrics.
	Forbidden  string
	Components []componentPanel
	Interval   string
}

func (s *Server) metrics(ctx context.Context, u *user) (*metricsView, error) {
	v := &metricsView{Interval: s.opts.ScrapeInterval.String()}
	if !u.mayGetPath(ctx, "/metrics") {
		v.Forbidden = fmt.Sprintf("RBAC does not let %s get /metrics on the control plane, which the dashboard asks before showing the components' metrics.", u.Name)
		return v, nil
	}
	for _, m := range s.opts.MetricsURLs {
		name, _, _ := strings.Cut(m, "=")
		scrapes := s.samples.scrapesOf(name)
		p := componentPanel{Name: name}
		if n := len(scrapes); n > 0 && scrapes[n-1].Failure != "" {
			p.Failure = scrapes[n-1].Failure
		}
		for _, h := range plottedHistograms {
			hp := histPanel{Metric: h.Metric, Stage: h.Stage}
			var p50, p99 []point
			var last histogram
			for i := 1; i < len(scrapes); i++ {
				cur, prev := scrapes[i].Hist[h.Metric], scrapes[i-1].Hist[h.Metric]
				d := cur.delta(prev)
				if d.Count > 0 {
					p50 = append(p50, point{scrapes[i].At, d.quantile(0.5)})
					p99 = append(p99, point{scrapes[i].At, d.quantile(0.99)})
				}
				last = cur
			}
			if len(scrapes) == 1 {
				last = scrapes[0].Hist[h.Metric]
			}
			hp.P50, hp.P99, hp.Count = seconds(last.quantile(0.5)), seconds(last.quantile(0.99)), fmt.Sprintf("%.0f", last.Count)
			hp.Plot = lineChart([]series{{"p50", p50}, {"p99", p99}}, 420, 110, seconds)
			hp.Buckets = bucketChart(last, 420, 90)
			p.Hists = append(p.Hists, hp)
		}
		depth := map[string][]point{}
		peak := map[string]float64{}
		for _, sc := range scrapes {
			for q, d := range sc.Queues {
				depth[q] = append(depth[q], point{sc.At, d})
				peak[q] = math.Max(peak[q], d)
			}
		}
		names := sortedKeys(depth)
		sort.SliceStable(names, func(i, j int) bool { return peak[names[i]] > peak[names[j]] })
		if len(names) > 8 {
			names = names[:8]
		}
		var ss []series
		for _, q := range names {
			ss = append(ss, series{q, depth[q]})
		}
		p.Queues = lineChart(ss, 860, 140, func(f float64) string { return fmt.Sprintf("%.0f", f) })
		v.Components = append(v.Components, p)
	}
	return v, nil
}

// forbidden reports whether err is an RBAC refusal, with the control
// plane's message.
func forbidden(err error) (string, bool) {
	if !apierrors.IsForbidden(err) {
		return "", false
	}
	if st, ok := err.(apierrors.APIStatus); ok {
		return st.Status().Message, true
	}
	return err.Error(), true
}
