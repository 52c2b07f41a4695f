// Package quota is the arithmetic of FederatedResourceQuota enforcement
// (Karmada's FederatedQuotaEnforcement): what a ResourceBinding's placement
// uses, and whether a namespace's bindings stay within a quota's
// spec.overall. Pure functions over the API types.
package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Usage is what a binding with spec and placement clusters uses, as Karmada computes it: with
// spec.components, the per-set requests (each component's requests × its replicas) once per
// cluster; otherwise spec.replicaRequirements.resourceRequest × the replicas summed over
// clusters. Resource names are the requests' own ("cpu", "memory", ...). A binding without
// requests or clusters uses nothing.
func Usage(spec *workv1alpha2.ResourceBindingSpec, clusters []workv1alpha2.TargetCluster) corev1.ResourceList {
	usage := corev1.ResourceList{}
	if spec == nil || len(clusters) == 0 {
		return usage
	}
	if len(spec.Components) > 0 {
		for _, c := range spec.Components {
			if c.ReplicaRequirements == nil {
				continue
			}
			add(usage, c.ReplicaRequirements.ResourceRequest, int64(c.Replicas)*int64(len(clusters)))
		}
		return usage
	}
	if spec.ReplicaRequirements == nil {
		return usage
	}
	var replicas int64
	for _, tc := range clusters {
		replicas += int64(tc.Replicas)
	}
	add(usage, spec.ReplicaRequirements.ResourceRequest, replicas)
	return usage
}

// add adds times × each of per to sum, leaving out zero quantities.
func add(sum, per corev1.ResourceList, times int64) {
	if times <= 0 {
		return
	}
	for name, q := range per {
		if q.IsZero() {
			continue
		}
		total := q.DeepCopy()
		total.Mul(times)
		cur := sum[name]
		cur.Add(total)
		sum[name] = cur
	}
}

// Sum adds the lists, keeping only the resources overall names (Karmada counts nothing else
// against a quota). Every resource overall names is in the result, zero when nothing uses
// it, so `kubectl get federatedresourcequota` shows OVERALL_USED as a ResourceQuota shows
// USED.
func Sum(overall corev1.ResourceList, lists ...corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, limit := range overall {
		out[name] = *resource.NewQuantity(0, limit.Format)
	}
	for _, l := range lists {
		for name, q := range l {
			if _, counted := overall[name]; !counted {
				continue
			}
			cur := out[name]
			cur.Add(q)
			out[name] = cur
		}
	}
	return out
}

// quotaNames is a binding's usage under the names a ResourceQuota gives it too: a request
// for a resource also counts as "requests.<name>" ("cpu" and "requests.cpu" are one quota
// there). Karmada counts only the bare name, so an overall of requests.cpu would otherwise
// be accepted and never reached.
func quotaNames(usage corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, 2*len(usage))
	for name, q := range usage {
		out[name] = q
		if !strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix)+name] = q
		}
	}
	return out
}

// Namespace sums Usage over a namespace's bindings, the resources overall names (a request
// counting under "requests.<name>" too, see quotaNames). override,
// by binding name, gives a binding's usage instead of its placement's, and adds bindings the
// list lacks (decisions the caller's cache does not show yet).
func Namespace(overall corev1.ResourceList, bindings []workv1alpha2.ResourceBinding, override map[string]corev1.ResourceList) corev1.ResourceList {
	usages := make([]corev1.ResourceList, 0, len(bindings)+len(override))
	seen := map[string]bool{}
	for i := range bindings {
		rb := &bindings[i]
		seen[rb.Name] = true
		if u, ok := override[rb.Name]; ok {
			usages = append(usages, quotaNames(u))
			continue
		}
		usages = append(usages, quotaNames(Usage(&rb.Spec, rb.Spec.Clusters)))
	}
	for name, u := range override {
		if !seen[name] {
			usages = append(usages, quotaNames(u))
		}
	}
	return Sum(overall, usages...)
}

// Grows reports whether after uses more than before of a resource overall names.
func Grows(overall, before, after corev1.ResourceList) bool {
	for name := range overall {
		a, b := after[name], before[name]
		if a.Cmp(b) > 0 {
			return true
		}
	}
	return false
}

// Exceeded returns, sorted, a description of each resource whose used amount is above
// overall, such as "cpu: 3 requested, 2 allowed"; nil when used fits.
func Exceeded(overall, used corev1.ResourceList) []string {
	var out []string
	for name, limit := range overall {
		if q, ok := used[name]; ok && q.Cmp(limit) > 0 {
			out = append(out, fmt.Sprintf("%s: %s requested, %s allowed", name, q.String(), limit.String()))
		}
	}
	sort.Strings(out)
	return out
}

// ExceededError is a placement refused because it would take a namespace's bindings past a
// FederatedResourceQuota's spec.overall. The scheduler reports it as the Scheduled condition's
// reason QuotaExceeded (Karmada's BindingReasonQuotaExceeded).
type ExceededError struct {
	// Quota is the FederatedResourceQuota's namespace/name.
	Quota string
	// Resources describe each exceeded resource (Exceeded).
	Resources []string
}

func (e *ExceededError) Error() string {
	return fmt.Sprintf("exceeded FederatedResourceQuota %s: %s", e.Quota, strings.Join(e.Resources, "; "))
}
