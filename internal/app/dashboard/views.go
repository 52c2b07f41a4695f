package dashboard

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// --- Fleet ---

// clusterCard is one Cluster as the fleet page shows it.
type clusterCard struct {
	Name, Mode, Version       string
	Provider, Region, Zone    string
	Ready, Reason, Message    string
	Taints, Remedy, Trouble   []string
	Cordoned                  bool
	Nodes                     string
	Resources                 []resourceUse
	APIEndpoint, Age, Updated string
}

// resourceUse is one resource of a cluster's resource summary.
type resourceUse struct {
	Name, Used, Total, Free string
	Percent                 int
}

type regionGroup struct {
	Region string
	Zones  []zoneGroup
}

type zoneGroup struct {
	Zone  string
	Cards []clusterCard
}

type fleetView struct {
	Scope                 scope
	Trouble               []clusterCard
	Regions               []regionGroup
	Total, Ready, Tainted int
}

func (s *Server) fleet(ctx context.Context, u *user) (*fleetView, error) {
	list := &clusterv1alpha1.ClusterList{}
	sc, err := s.list(ctx, u, list, false)
	if err != nil {
		return nil, err
	}
	v := &fleetView{Scope: sc, Total: len(list.Items)}
	cards := make([]clusterCard, 0, len(list.Items))
	for i := range list.Items {
		c := card(&list.Items[i])
		if c.Ready == "True" {
			v.Ready++
		}
		if len(c.Taints) > 0 {
			v.Tainted++
		}
		cards = append(cards, c)
	}
	sort.SliceStable(cards, func(i, j int) bool {
		if (len(cards[i].Trouble) > 0) != (len(cards[j].Trouble) > 0) {
			return len(cards[i].Trouble) > 0
		}
		return cards[i].Name < cards[j].Name
	})
	regions := map[string]map[string][]clusterCard{}
	for _, c := range cards {
		if len(c.Trouble) > 0 {
			v.Trouble = append(v.Trouble, c)
		}
		r, z := orDash(c.Region), orDash(c.Zone)
		if regions[r] == nil {
			regions[r] = map[string][]clusterCard{}
		}
		regions[r][z] = append(regions[r][z], c)
	}
	for _, r := range sortedKeys(regions) {
		g := regionGroup{Region: r}
		for _, z := range sortedKeys(regions[r]) {
			g.Zones = append(g.Zones, zoneGroup{Zone: z, Cards: regions[r][z]})
		}
		v.Regions = append(v.Regions, g)
	}
	return v, nil
}

func card(c *clusterv1alpha1.Cluster) clusterCard {
	cc := clusterCard{Name: c.Name, Mode: string(c.Spec.SyncMode), Version: c.Status.KubernetesVersion,
		Provider: c.Spec.Provider, Region: c.Spec.Region, Zone: c.Spec.Zone, Ready: "Unknown",
		APIEndpoint: c.Spec.APIEndpoint, Age: age(c.CreationTimestamp.Time), Remedy: c.Status.RemedyActions}
	if r := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); r != nil {
		cc.Ready, cc.Reason, cc.Message = string(r.Status), r.Reason, r.Message
		cc.Updated = age(r.LastTransitionTime.Time)
	}
	if cc.Ready != "True" {
		why := "not Ready"
		if cc.Reason != "" {
			why += " (" + cc.Reason + ")"
		}
		cc.Trouble = append(cc.Trouble, why)
	}
	for _, t := range c.Spec.Taints {
		text := t.Key
		if t.Value != "" {
			text += "=" + t.Value
		}
		text += ":" + string(t.Effect)
		cc.Taints = append(cc.Taints, text)
		if t.Key == clusterv1alpha1.TaintClusterUnschedulable && t.Effect == corev1.TaintEffectNoSchedule {
			cc.Cordoned = true
		}
		if t.Effect == corev1.TaintEffectNoExecute {
			cc.Trouble = append(cc.Trouble, "tainted "+text+": workloads are evicted")
		}
	}
	if cc.Cordoned {
		cc.Trouble = append(cc.Trouble, "cordoned: no new placements")
	}
	for _, a := range c.Status.RemedyActions {
		cc.Trouble = append(cc.Trouble, "remedy action "+a)
	}
	if n := c.Status.NodeSummary; n != nil {
		cc.Nodes = fmt.Sprintf("%d/%d Ready", n.ReadyNum, n.TotalNum)
	}
	if rs := c.Status.ResourceSummary; rs != nil {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			total, ok := rs.Allocatable[name]
			if !ok || total.IsZero() {
				continue
			}
			used := rs.Allocated[name].DeepCopy()
			used.Add(rs.Allocating[name])
			free := total.DeepCopy()
			free.Sub(used)
			pct := 0
			if t := total.AsApproximateFloat64(); t > 0 {
				pct = int(100 * used.AsApproximateFloat64() / t)
			}
			cc.Resources = append(cc.Resources, resourceUse{Name: string(name), Used: quantity(name, used),
				Total: quantity(name, total), Free: quantity(name, free), Percent: min(max(pct, 0), 100)})
		}
	}
	return cc
}

// quantity formats q for a card: CPU in cores, memory in GiB.
func quantity(name corev1.ResourceName, q resource.Quantity) string {
	switch name {
	case corev1.ResourceCPU:
		return fmt.Sprintf("%.1f", q.AsApproximateFloat64())
	case corev1.ResourceMemory:
		return fmt.Sprintf("%.1fGi", q.AsApproximateFloat64()/(1<<30))
	}
	return q.String()
}

// --- Workloads ---

// cell is one template × cluster of the placement matrix.
type cell struct {
	Placed                        bool
	Replicas, Health, Class, Hint string
}

type workloadRow struct {
	APIVersion, Kind, Namespace, Name string
	Binding, Policy, Health           string
	Replicas                          int32
	Cells                             []cell
	Story                             string
}

// workloadFilter is the workloads page's query: each field narrows the
// rows ("" keeps all).
type workloadFilter struct {
	Namespace, Kind, Policy, Cluster, Health string
}

type workloadsView struct {
	Scope, ClusterScope scope
	Filter              workloadFilter
	Clusters            []string
	Rows                []workloadRow
	// Total rows matched the filter; Shown were drawn (at most maxRows).
	Total, Shown                         int
	Namespaces, Kinds, Policies, Healths []string
}

// maxRows bounds the matrix: past it, the page asks for a narrower filter.
const maxRows = 500

func (s *Server) workloads(ctx context.Context, u *user, f workloadFilter) (*workloadsView, error) {
	rbs := &workv1alpha2.ResourceBindingList{}
	sc, err := s.list(ctx, u, rbs, true)
	if err != nil {
		return nil, err
	}
	crbs := &workv1alpha2.ClusterResourceBindingList{}
	csc, err := s.list(ctx, u, crbs, false)
	if err != nil {
		return nil, err
	}
	v := &workloadsView{Scope: sc, ClusterScope: csc, Filter: f, Healths: []string{"Healthy", "Unhealthy", "Progressing", "Unknown"}}
	clusters := &clusterv1alpha1.ClusterList{}
	clusterSet := map[string]bool{}
	if _, err := s.list(ctx, u, clusters, false); err == nil {
		for _, c := range clusters.Items {
			clusterSet[c.Name] = true
		}
	}
	type source struct {
		obj    metav1.Object
		spec   *workv1alpha2.ResourceBindingSpec
		status *workv1alpha2.ResourceBindingStatus
	}
	var all []source
	for i := range rbs.Items {
		all = append(all, source{&rbs.Items[i], &rbs.Items[i].Spec, &rbs.Items[i].Status})
	}
	for i := range crbs.Items {
		all = append(all, source{&crbs.Items[i], &crbs.Items[i].Spec, &crbs.Items[i].Status})
	}
	for _, b := range all {
		for _, tc := range b.spec.Clusters {
			clusterSet[tc.Name] = true
		}
	}
	v.Clusters = sortedKeys(clusterSet)
	namespaces, kinds, policies := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range all {
		row := workloadRow{APIVersion: b.spec.Resource.APIVersion, Kind: b.spec.Resource.Kind, Namespace: b.spec.Resource.Namespace,
			Name: b.spec.Resource.Name, Binding: b.obj.GetName(), Policy: policyOf(b.obj), Replicas: b.spec.Replicas}
		row.Story = storyURL(row.APIVersion, row.Kind, row.Namespace, row.Name)
		if row.Namespace != "" {
			namespaces[row.Namespace] = true
		}
		kinds[row.Kind] = true
		if row.Policy != "" {
			policies[row.Policy] = true
		}
		row.Cells, row.Health = cells(v.Clusters, b.spec, b.status)
		if !f.keeps(row, v.Clusters) {
			continue
		}
		v.Total++
		if len(v.Rows) < maxRows {
			v.Rows = append(v.Rows, row)
		}
	}
	sort.Slice(v.Rows, func(i, j int) bool {
		a, b := v.Rows[i], v.Rows[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	v.Shown = len(v.Rows)
	v.Namespaces, v.Kinds, v.Policies = sortedKeys(namespaces), sortedKeys(kinds), sortedKeys(policies)
	return v, nil
}

func (f workloadFilter) keeps(r workloadRow, clusters []string) bool {
	if f.Namespace != "" && r.Namespace != f.Namespace || f.Kind != "" && r.Kind != f.Kind ||
		f.Policy != "" && r.Policy != f.Policy || f.Health != "" && r.Health != f.Health {
		return false
	}
	if f.Cluster != "" {
		i := slices.Index(clusters, f.Cluster)
		return i >= 0 && r.Cells[i].Placed
	}
	return true
}

// policyOf names the policy that claimed a binding's template, from the
// binding's claim annotations (Karmada's keys), "" when none.
func policyOf(b metav1.Object) string {
	a := b.GetAnnotations()
	if n := a[policymatch.PropagationPolicyNameAnnotation]; n != "" {
		return "PropagationPolicy " + qualified(a[policymatch.PropagationPolicyNamespaceAnnotation], n)
	}
	if n := a[policymatch.ClusterPropagationPolicyNameAnnotation]; n != "" {
		return "ClusterPropagationPolicy " + n
	}
	return ""
}

// cells lays a binding over the clusters: replicas placed, applied and
// health per cluster (its aggregatedStatus), and the row's overall health.
func cells(clusters []string, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) ([]cell, string) {
	placed := map[string]int32{}
	for _, tc := range spec.Clusters {
		placed[tc.Name] = tc.Replicas
	}
	reports := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, a := range status.AggregatedStatus {
		reports[a.ClusterName] = a
	}
	out := make([]cell, len(clusters))
	health := "Healthy"
	worse := func(h string) {
		order := map[string]int{"Healthy": 0, "Progressing": 1, "Unknown": 2, "Unhealthy": 3}
		if order[h] > order[health] {
			health = h
		}
	}
	if len(spec.Clusters) == 0 {
		health = "Unknown"
	}
	for i, c := range clusters {
		r, ok := placed[c]
		if !ok {
			continue
		}
		ce := cell{Placed: true}
		if spec.Replicas > 0 {
			ce.Replicas = fmt.Sprint(r)
		} else {
			ce.Replicas = "✓"
		}
		a, reported := reports[c]
		switch {
		case !reported:
			ce.Class, ce.Health, ce.Hint = "pending", "Progressing", "no report from "+c+" yet"
		case !a.Applied:
			ce.Class, ce.Health, ce.Hint = "bad", "Unhealthy", "not applied: "+a.AppliedMessage
		case a.Health == workv1alpha2.ResourceHealthy:
			ce.Class, ce.Health, ce.Hint = "ok", "Healthy", "applied, healthy"
		case a.Health == workv1alpha2.ResourceUnhealthy:
			ce.Class, ce.Health, ce.Hint = "bad", "Unhealthy", "applied, unhealthy"
		default:
			ce.Class, ce.Health, ce.Hint = "unknown", "Unknown", "applied, health unknown"
		}
		worse(ce.Health)
		out[i] = ce
	}
	return out, health
}

func storyURL(apiVersion, kind, namespace, name string) string {
	q := url.Values{"apiVersion": {apiVersion}, "kind": {kind}, "name": {name}}
	if namespace != "" {
		q.Set("namespace", namespace)
	}
	return "/story?" + q.Encode()
}

// --- helpers ---

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// age is kubectl's age of t ("5m", "2d"); "" for the zero time.
func age(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(time.Since(t))
}

// bindingKind returns the binding kind a template's scope calls for.
func bindingKind(namespace string) binding.Kind {
	if namespace == "" {
		return binding.ClusterScoped
	}
	return binding.Namespaced
}
