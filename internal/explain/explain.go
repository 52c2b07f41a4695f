// Package explain tells a resource template's story from what the control
// plane records: which policy claims it and why that policy won, how its
// replicas were divided, why each other cluster was not chosen, each
// cluster's Work and overrides, and its recent events. `flotilla explain`
// prints it; the dashboard's template page shows it.
package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/override"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/core/rollout"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

// Story is one template's explanation: Entries in the order explain prints
// them, then its events, newest first.
type Story struct {
	Kind, Namespace, Name string
	// Binding is the template's ResourceBinding or ClusterResourceBinding
	// name, "" before the detector made it.
	Binding string
	// Entries are the labelled lines: "Policy", "Placement", "Not chosen",
	// ..., and one per target cluster (Cluster set).
	Entries []Entry
	// Events are the events about the template and its binding, newest
	// first (at most 50); Print shows the five latest warnings.
	Events []corev1.Event
}

// Entry is one labelled line of a Story with its continuation lines.
type Entry struct {
	Label, Text string
	More        []string
	// Cluster is set on a target cluster's line: Label is the cluster's
	// name, Text its Work, More the overrides applied there.
	Cluster bool
	// Conditions are the cluster's Work conditions (Cluster entries only).
	Conditions []metav1.Condition
}

func (s *Story) add(label, text string, more ...string) {
	s.Entries = append(s.Entries, Entry{Label: label, Text: text, More: more})
}

// Print writes the story as `flotilla explain` does: a title line, each
// entry as "  Label:     text" with its continuation lines indented, each
// cluster as "  name: Work ...", and the five latest warnings.
func (s *Story) Print(w io.Writer) {
	fmt.Fprintf(w, "%s %s\n", s.Kind, Qualified(s.Namespace, s.Name))
	for _, e := range s.Entries {
		if e.Cluster {
			fmt.Fprintf(w, "  %s: %s\n", e.Label, e.Text)
			for _, m := range e.More {
				fmt.Fprintf(w, "      %s\n", m)
			}
			continue
		}
		fmt.Fprintf(w, "  %-11s %s\n", e.Label+":", e.Text)
		for _, m := range e.More {
			fmt.Fprintf(w, "              %s\n", m)
		}
	}
	shown := 0
	for i := range s.Events {
		e := &s.Events[i]
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		fmt.Fprintf(w, "  Warning:    %s ago, %s %s: %s\n",
			duration.HumanDuration(time.Since(EventTime(e))), e.InvolvedObject.Kind, e.Reason, e.Message)
		if shown++; shown == 5 {
			break
		}
	}
}

// Target is the template to explain: its kind's REST mapping (from the
// control plane's discovery), namespace (ignored for a cluster-scoped kind)
// and name.
type Target struct {
	Mapping         *meta.RESTMapping
	Namespace, Name string
}

// ErrNotFound is returned, wrapped with the template's kind and name, when
// the template does not exist on the control plane.
var ErrNotFound = errors.New("not found on the control plane")

// Tell reads what the control plane records about t through cl and dyn (as
// whoever they authenticate as: RBAC applies) and tells its story. Errors:
// ErrNotFound (wrapped) for a missing template, else the first read that
// failed.
func Tell(ctx context.Context, cl client.Client, dyn dynamic.Interface, t Target) (*Story, error) {
	m, name, namespace := t.Mapping, t.Name, t.Namespace
	namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
	if !namespaced {
		namespace = ""
	}
	obj, err := dyn.Resource(m.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s %w", m.GroupVersionKind.Kind, Qualified(namespace, name), ErrNotFound)
		}
		return nil, err
	}
	kind := m.GroupVersionKind.Kind
	s := &Story{Kind: kind, Namespace: namespace, Name: name}
	isNamespace := kind == "Namespace" && m.GroupVersionKind.Group == ""
	switch {
	case isNamespace:
		// Only a ClusterPropagationPolicy can say more; explainClaim looks.
		s.add("Policy", "none needed: every namespace is created in every member by the namespace sync,",
			"unless --skipped-propagating-namespaces matches it (a ClusterPropagationPolicy may place it instead)")
	case !template.IsTemplateResource(m.Resource):
		s.add("Policy", fmt.Sprintf("none: %s are not resource templates; no policy propagates them", m.Resource.Resource))
		return s, nil
	case namespaced && template.SkipNamespace(namespace):
		s.add("Policy", fmt.Sprintf("none: nothing in namespace %s is propagated, whatever the policies select (as in Karmada:", namespace),
			"kube-system, kube-public, kube-node-lease, karmada-system, karmada-cluster and karmada-es-* are the control plane's own)")
		return s, nil
	}

	// The claim, and why that policy won.
	claim, rivals, err := explainClaim(ctx, cl, obj)
	if err != nil {
		return nil, err
	}
	if claim == "" && isNamespace {
		return s, nil
	}

	// The binding: placement, replicas, conditions.
	var b client.Object
	var spec *workv1alpha2.ResourceBindingSpec
	var status *workv1alpha2.ResourceBindingStatus
	bname := binding.Name(name, kind)
	if namespaced {
		rb := &workv1alpha2.ResourceBinding{}
		err = cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: bname}, rb)
		b, spec, status = rb, &rb.Spec, &rb.Status
	} else {
		crb := &workv1alpha2.ClusterResourceBinding{}
		err = cl.Get(ctx, client.ObjectKey{Name: bname}, crb)
		b, spec, status = crb, &crb.Spec, &crb.Status
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	bound := err == nil
	switch {
	case claim == "" && !bound:
		s.add("Policy", "none: no PropagationPolicy or ClusterPropagationPolicy selects it, so it stays on the control plane")
		return s, nil
	case claim == "":
		// The policy that claimed it is gone (or no longer selects it); the
		// binding and the member copies stay, as in Karmada.
		s.add("Policy", "none now: the policy that claimed it was deleted or no longer selects it; its binding",
			"and the copies in members stay as they were until a policy claims it or it is deleted")
	default:
		var beat []string
		for _, r := range rivals {
			beat = append(beat, "it beat "+r)
		}
		s.add("Policy", "claimed by "+claim, beat...)
	}
	s.Events = events(ctx, cl, namespace, kind, name, bname)
	if !bound {
		s.add("Binding", fmt.Sprintf("none yet (the template is claimed; the detector has not made its binding %s)", bname))
		return s, nil
	}
	s.Binding = bname
	bkind := "ClusterResourceBinding"
	if namespaced {
		bkind = "ResourceBinding"
	}
	s.add("Binding", fmt.Sprintf("%s %s", bkind, Qualified(b.GetNamespace(), b.GetName())))
	s.add("Placement", describePlacement(spec))
	var placed []string
	for _, tc := range spec.Clusters {
		if spec.Replicas > 0 {
			placed = append(placed, fmt.Sprintf("%s=%d", tc.Name, tc.Replicas))
		} else {
			placed = append(placed, tc.Name)
		}
	}
	if len(placed) == 0 {
		s.add("Placed on", "no cluster")
	} else {
		s.add("Placed on", strings.Join(placed, ", "))
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c != nil {
		s.add("Scheduled", fmt.Sprintf("%s (%s): %s", c.Status, c.Reason, c.Message))
	}
	if line := describeSuspension(spec, claim); line != "" {
		s.add("Suspended", line)
	}
	if line := describeDependencies(b.GetAnnotations()[binding.DependenciesAnnotation], spec.PropagateDeps); line != "" {
		s.add("Dependencies", line)
	}
	if line := describeRollout(b.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation], status); line != "" {
		s.add("Rollout", line)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := cl.List(ctx, clusters); err == nil {
		s.placement(spec, status, clusters.Items)
	}

	// Per cluster: the Work, its health, the overrides.
	health := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, st := range status.AggregatedStatus {
		health[st.ClusterName] = st
	}
	for _, tc := range spec.Clusters {
		works := &workv1alpha1.WorkList{}
		err := cl.List(ctx, works, client.InNamespace("karmada-es-"+tc.Name),
			client.MatchingLabels{binding.IDLabel(b): b.GetLabels()[binding.IDLabel(b)]})
		if apierrors.IsForbidden(err) {
			s.Entries = append(s.Entries, Entry{Label: tc.Name, Text: "its Work is not readable with these credentials (RBAC on namespace karmada-es-" + tc.Name + ")", Cluster: true})
			continue
		}
		if err != nil || len(works.Items) == 0 {
			s.Entries = append(s.Entries, Entry{Label: tc.Name, Text: "no Work yet", Cluster: true})
			continue
		}
		var member *clusterv1alpha1.Cluster
		for i := range clusters.Items {
			if clusters.Items[i].Name == tc.Name {
				member = &clusters.Items[i]
			}
		}
		wk := &works.Items[0]
		s.Entries = append(s.Entries, Entry{Label: tc.Name, Text: workLine(wk, health[tc.Name].Health, member),
			More: appliedOverrides(wk), Cluster: true, Conditions: wk.Status.Conditions})
	}
	return s, nil
}

// placement adds the scheduler's groups and, for each cluster not chosen,
// why: the filter that refused it, or what left it out though it fits.
func (s *Story) placement(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, clusters []clusterv1alpha1.Cluster) {
	in := scheduler.Input{Resource: spec.Resource, Placement: spec.Placement, Replicas: spec.Replicas,
		Previous: spec.Clusters, ObservedAffinityName: status.SchedulerObservedAffinityName}
	for i := range clusters {
		in.Clusters = append(in.Clusters, &clusters[i])
	}
	groups, _ := scheduler.Groups(in)
	groupOf := map[string]int{}
	if len(groups) > 0 {
		parts := make([]string, 0, len(groups))
		for i, g := range groups {
			for _, c := range g.Clusters {
				groupOf[c] = i
			}
			label := g.Name + " (preferred)"
			if g.Overflow {
				label = g.Name + " (overflow)"
			}
			members := strings.Join(g.Clusters, ", ")
			if members == "" {
				members = "no cluster"
			}
			parts = append(parts, label+": "+members)
		}
		s.add("Groups", strings.Join(parts, "; ")+"; replicas fill them in this order and leave the last first")
	}
	rejections, err := scheduler.Rejections(in)
	if err != nil {
		return
	}
	rejected := map[string]bool{}
	for _, r := range rejections {
		rejected[r.Cluster] = true
		s.add("Not chosen", fmt.Sprintf("%s: %s", r.Cluster, r.Reason))
	}
	placedOn := map[string]bool{}
	lastUsed := -1
	for _, tc := range spec.Clusters {
		placedOn[tc.Name] = true
		if i, ok := groupOf[tc.Name]; ok {
			lastUsed = max(lastUsed, i)
		}
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	for _, cluster := range clusters {
		if rejected[cluster.Name] || placedOn[cluster.Name] {
			continue
		}
		why := whyFitButNotChosen(spec)
		if i, ok := groupOf[cluster.Name]; ok && i > lastUsed {
			why = fmt.Sprintf("it is in overflow group %s, which takes replicas only once the groups before it are full", groups[i].Name)
		}
		s.add("Not chosen", fmt.Sprintf("%s: it passes the filters, but %s", cluster.Name, why))
	}
}

// events returns the events about the template (kind, name) and its
// binding bname in namespace, newest first, at most 50; none when they
// cannot be read.
func events(ctx context.Context, cl client.Client, namespace, kind, name, bname string) []corev1.Event {
	// Two lists filtered by the API server (involvedObject.name), not the
	// namespace's every event: a namespace of a thousand templates holds
	// tens of thousands.
	var out []corev1.Event
	for _, n := range []string{name, bname} {
		list := &corev1.EventList{}
		if err := cl.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{"involvedObject.name": n}); err != nil {
			return nil
		}
		for _, e := range list.Items {
			if (e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name) || e.InvolvedObject.Name == bname {
				out = append(out, e)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return EventTime(&out[i]).After(EventTime(&out[j])) })
	if len(out) > 50 {
		out = out[:50]
	}
	return out
}

// EventTime is when an event last happened: its lastTimestamp, else its
// eventTime, else its creation.
func EventTime(e *corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// Qualified is "namespace/name", or name alone for a cluster-scoped object.
func Qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// explainClaim names the policy that claims obj (from the template's
// annotations) and, for each other policy that also selects it, why it
// lost, by Karmada's rules (policymatch.BestMatch).
func explainClaim(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) (string, []string, error) {
	a := obj.GetAnnotations()
	var pps []*policyv1alpha1.PropagationPolicy
	var cpps []*policyv1alpha1.ClusterPropagationPolicy
	if obj.GetNamespace() != "" {
		list := &policyv1alpha1.PropagationPolicyList{}
		if err := cl.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return "", nil, err
		}
		for i := range list.Items {
			pps = append(pps, &list.Items[i])
		}
	}
	clist := &policyv1alpha1.ClusterPropagationPolicyList{}
	// A reader without RBAC on the cluster-scoped policies (a namespace's
	// user, in the dashboard) still gets the story from the rest.
	if err := cl.List(ctx, clist); err != nil && !apierrors.IsForbidden(err) {
		return "", nil, err
	}
	for i := range clist.Items {
		cpps = append(cpps, &clist.Items[i])
	}
	winner, ok := policymatch.BestMatch(obj, pps, cpps)
	claimed := a[policymatch.PropagationPolicyNameAnnotation] != "" || a[policymatch.ClusterPropagationPolicyNameAnnotation] != ""
	if !ok && !claimed {
		return "", nil, nil
	}
	// The claim on record wins over a recomputation: a policy keeps what
	// it claimed until preempted.
	if name := a[policymatch.PropagationPolicyNameAnnotation]; name != "" {
		winner = findClaim(obj, pps, nil, policymatch.KindPropagationPolicy, a[policymatch.PropagationPolicyNamespaceAnnotation], name, winner)
	} else if name := a[policymatch.ClusterPropagationPolicyNameAnnotation]; name != "" {
		winner = findClaim(obj, nil, cpps, policymatch.KindClusterPropagationPolicy, "", name, winner)
	}
	line := describeClaim(winner)
	var rivals []string
	for _, p := range pps {
		if c, ok := policymatch.BestMatch(obj, []*policyv1alpha1.PropagationPolicy{p}, nil); ok && !c.Same(winner) {
			rivals = append(rivals, describeClaim(c)+" "+whyLost(winner, c))
		}
	}
	for _, p := range cpps {
		if c, ok := policymatch.BestMatch(obj, nil, []*policyv1alpha1.ClusterPropagationPolicy{p}); ok && !c.Same(winner) {
			rivals = append(rivals, describeClaim(c)+" "+whyLost(winner, c))
		}
	}
	return line, rivals, nil
}

func findClaim(obj *unstructured.Unstructured, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy, kind, ns, name string, fallback policymatch.Claim) policymatch.Claim {
	for _, p := range pps {
		if p.Name == name && p.Namespace == ns {
			if c, ok := policymatch.BestMatch(obj, []*policyv1alpha1.PropagationPolicy{p}, nil); ok {
				return c
			}
		}
	}
	for _, p := range cpps {
		if p.Name == name {
			if c, ok := policymatch.BestMatch(obj, nil, []*policyv1alpha1.ClusterPropagationPolicy{p}); ok {
				return c
			}
		}
	}
	return policymatch.Claim{Kind: kind, Namespace: ns, Name: name}
}

func describeClaim(c policymatch.Claim) string {
	return fmt.Sprintf("%s %s (priority %d)", c.Kind, Qualified(c.Namespace, c.Name), c.Priority)
}

// whyLost says why winner beat loser, by Karmada's order of rules.
func whyLost(winner, loser policymatch.Claim) string {
	first := "because it claimed the resource first: a policy keeps what it claimed unless a better one has spec.preemption: Always"
	switch {
	case winner.Kind != loser.Kind && winner.Kind == policymatch.KindPropagationPolicy:
		return "(a PropagationPolicy in the namespace wins over any ClusterPropagationPolicy)"
	case winner.Kind != loser.Kind:
		return first
	case winner.Priority > loser.Priority:
		return fmt.Sprintf("on priority (%d > %d)", winner.Priority, loser.Priority)
	case winner.Priority < loser.Priority:
		return first
	case winner.MatchLevel > loser.MatchLevel:
		return "on a more specific resource selector"
	case winner.MatchLevel == loser.MatchLevel && winner.Name < loser.Name:
		return "on name order, all else being equal"
	default:
		return first
	}
}

// whyFitButNotChosen says why the scheduler left out a cluster that passed
// every filter, from the parts of the placement that select among feasible
// clusters.
func whyFitButNotChosen(spec *workv1alpha2.ResourceBindingSpec) string {
	p := spec.Placement
	switch {
	case p != nil && len(p.SpreadConstraints) > 0:
		return "placement.spreadConstraints keep only the best-scoring clusters (or groups) within their maxGroups"
	case p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return "Aggregated packs the replicas into as few clusters as can hold them"
	case spec.Replicas > 0 && p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided:
		return "its share of the replicas rounded to none"
	default:
		return "the scheduler has not placed it there (a later reschedule may)"
	}
}

func describePlacement(spec *workv1alpha2.ResourceBindingSpec) string {
	p := spec.Placement
	if spec.Replicas == 0 {
		return "every chosen cluster gets the object (it has no replicas)"
	}
	if p == nil || p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated || p.ReplicaScheduling.ReplicaSchedulingType == "" {
		return fmt.Sprintf("Duplicated: every chosen cluster runs all %d replicas", spec.Replicas)
	}
	rs := p.ReplicaScheduling
	switch {
	case rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return fmt.Sprintf("Divided, Aggregated: %d replicas packed into as few clusters as their free resources allow", spec.Replicas)
	case rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "":
		return fmt.Sprintf("Divided, Weighted by %s: %d replicas in proportion to what each cluster can take", rs.WeightPreference.DynamicWeight, spec.Replicas)
	case rs.WeightPreference != nil && len(rs.WeightPreference.StaticWeightList) > 0:
		var ws []string
		for _, s := range rs.WeightPreference.StaticWeightList {
			target := "clusters"
			if len(s.TargetCluster.ClusterNames) > 0 {
				target = strings.Join(s.TargetCluster.ClusterNames, ",")
			} else if data, err := json.Marshal(s.TargetCluster); err == nil {
				target = string(data)
			}
			ws = append(ws, fmt.Sprintf("%s: %d", target, s.Weight))
		}
		return fmt.Sprintf("Divided, Weighted by static weights (%s): %d replicas", strings.Join(ws, "; "), spec.Replicas)
	default:
		return fmt.Sprintf("Divided, Weighted equally: %d replicas", spec.Replicas)
	}
}

// describeSuspension says what the binding's spec.suspension holds back
// and which policy asked for it (claim, as explain names it; empty when no
// policy claims the template any more), or "" when nothing is suspended.
func describeSuspension(spec *workv1alpha2.ResourceBindingSpec, claim string) string {
	s := spec.Suspension
	if s == nil {
		return ""
	}
	var parts []string
	if s.Scheduling != nil && *s.Scheduling {
		parts = append(parts, "scheduling (the binding's spec.suspension.scheduling)")
	}
	by := "the policy's spec.suspension"
	if claim != "" {
		by = "spec.suspension of " + claim
	}
	switch {
	case s.Dispatching != nil && *s.Dispatching:
		parts = append(parts, "dispatching to every cluster, by "+by)
	case s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) > 0:
		parts = append(parts, "dispatching to "+strings.Join(s.DispatchingOnClusters.ClusterNames, ", ")+", by "+by)
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ". Works are still rendered; changes reach a suspended cluster once the suspension is lifted"
}

// workLine is explain's text for the Work of one cluster: whether it is
// applied, and at its latest generation; the health the binding aggregated
// for that cluster (empty: none); and, when the cluster (nil: unknown) is not
// Ready, that all this may be stale.
func workLine(wk *workv1alpha1.Work, health workv1alpha2.ResourceHealth, member *clusterv1alpha1.Cluster) string {
	line := fmt.Sprintf("Work %s/%s", wk.Namespace, wk.Name)
	switch c := meta.FindStatusCondition(wk.Status.Conditions, workv1alpha1.WorkApplied); {
	case c == nil:
		line += ", not applied yet"
	case c.Status != metav1.ConditionTrue:
		line += fmt.Sprintf(", not applied (%s: %s)", c.Reason, c.Message)
	case c.ObservedGeneration != 0 && c.ObservedGeneration < wk.Generation:
		line += fmt.Sprintf(", applied at generation %d; its latest change (generation %d) not yet", c.ObservedGeneration, wk.Generation)
	default:
		line += ", applied"
	}
	if wk.Spec.SuspendDispatching != nil && *wk.Spec.SuspendDispatching {
		line += ", dispatching suspended"
	}
	if _, held := wk.Annotations[rollout.PendingAnnotation]; held {
		line += ", held by the staged rollout (runs the previous rendering)"
	}
	if health != "" {
		line += ", " + strings.ToLower(string(health))
	}
	if member != nil {
		if r := meta.FindStatusCondition(member.Status.Conditions, clusterv1alpha1.ClusterConditionReady); r != nil && r.Status != metav1.ConditionTrue {
			line += fmt.Sprintf("; cluster Ready=%s (%s), so this may be stale", r.Status, r.Reason)
		}
	}
	return line
}

// describeRollout says, for a binding under a staged rollout, which wave
// the template's latest change is in and what it waits for; "" without a
// strategy.
func describeRollout(ref string, st *workv1alpha2.ResourceBindingStatus) string {
	if ref == "" {
		return ""
	}
	c := meta.FindStatusCondition(st.Conditions, workv1alpha2.Progressing)
	if c == nil || st.Rollout == nil {
		return "staged by " + ref + "; not yet observed by the rollout controller"
	}
	line := fmt.Sprintf("staged by %s; %s: %s", ref, c.Reason, c.Message)
	ro := st.Rollout
	if int(ro.CurrentWave) < len(ro.Waves) && c.Reason == workv1alpha2.RolloutProgressing {
		var waiting []string
		for _, cl := range ro.Clusters {
			if cl.Wave == ro.CurrentWave && cl.Phase == workv1alpha2.ClusterRolloutProgressing {
				what := "to become Healthy"
				if cl.HealthySince != nil {
					what = "to stay Healthy for minSuccessTime"
				}
				waiting = append(waiting, cl.Name+" "+what)
			}
		}
		if len(waiting) > 0 {
			line += "; waiting for " + strings.Join(waiting, ", ")
		}
	}
	return line + " (flotilla rollout status shows every cluster)"
}

// describeDependencies lists, from a workload binding's
// resourcebinding.karmada.io/dependencies annotation (written by the
// dependencies controller from the resource interpreter: a
// customization's dependencyInterpretation when there is one, else the
// built-in rules), what follows the workload; "" when nothing does.
func describeDependencies(annotation string, propagateDeps bool) string {
	if !propagateDeps || annotation == "" {
		return ""
	}
	var deps []struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	}
	if json.Unmarshal([]byte(annotation), &deps) != nil || len(deps) == 0 {
		return ""
	}
	parts := make([]string, 0, len(deps))
	for _, d := range deps {
		if d.Name == "" {
			parts = append(parts, d.Kind+"s matching a label selector")
			continue
		}
		parts = append(parts, d.Kind+" "+d.Name)
	}
	return strings.Join(parts, ", ") + " (propagateDeps: they follow it to its clusters)"
}

// appliedOverrides describes the overrides recorded on a Work
// (policy.karmada.io/applied-overrides and applied-cluster-overrides, as
// Karmada records them on the Work).
func appliedOverrides(w *workv1alpha1.Work) []string {
	var out []string
	annotations := w.Annotations
	for _, k := range []struct{ key, kind string }{
		{override.AppliedOverridesAnnotation, "OverridePolicy"},
		{override.AppliedClusterOverridesAnnotation, "ClusterOverridePolicy"},
	} {
		var items []override.AppliedOverride
		if json.Unmarshal([]byte(annotations[k.key]), &items) != nil {
			continue
		}
		for _, it := range items {
			out = append(out, fmt.Sprintf("override: %s %s changed %s", k.kind, it.PolicyName, describeOverriders(it.Overriders)))
		}
	}
	return out
}

// overriderWhat says what each overrider (by its JSON field) changes.
var overriderWhat = map[string]string{
	"imageOverrider":       "the image",
	"commandOverrider":     "the command",
	"argsOverrider":        "the args",
	"labelsOverrider":      "labels",
	"annotationsOverrider": "annotations",
	"plaintext":            "fields (plaintext patch)",
	"fieldOverrider":       "fields inside a document",
}

func describeOverriders(o policyv1alpha1.Overriders) string {
	data, err := json.Marshal(o)
	if err != nil {
		return "the manifest"
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	var parts []string
	for k := range m {
		if what, ok := overriderWhat[k]; ok {
			parts = append(parts, what)
		} else {
			parts = append(parts, k)
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ") + ": " + string(data)
}
